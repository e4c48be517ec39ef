package events

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/metrics"
)

// Defaults of Options.
const (
	DefaultQueueSize    = 1024
	DefaultBurst        = 25              // client-go's spam filter burst
	DefaultRefill       = 5 * time.Minute // client-go's: one event per object per 5 minutes past the burst
	DefaultWindow       = 10 * time.Minute
	DefaultMaxObjects   = 4096 // client-go's cache size
	DefaultWriteTimeout = 10 * time.Second
)

// MetricEvents counts the events handed to a recorder, labelled
// name="<Component>" and result: "created", "patched" (a repeat),
// "dropped" (the queue was full), "rate_limited", "invalid" or "failed"
// (the server refused the write or did not answer).
const (
	MetricEvents     = "kwatch_event_recorder_events_total"
	MetricQueueDepth = "kwatch_event_recorder_queue_depth"
)

// Options configures New. Client is required; every other zero field
// takes the default its comment names.
type Options struct {
	// Client writes the Events. Required.
	Client *kube.Client
	// Component is source.component and reportingComponent, and the field
	// manager of the writes. Empty means client.DefaultFieldManager().
	Component string
	// Instance is reportingInstance and source.host. client-go's recorder
	// uses the host name; a controller usually passes its pod name. Empty
	// leaves them empty.
	Instance string
	// QueueSize bounds the events waiting for Run. Zero means
	// DefaultQueueSize. An event past it is dropped and counted.
	QueueSize int
	// Burst is how many events about one object pass at once. Zero means
	// DefaultBurst.
	Burst int
	// Refill is how often an object earns one more event past its burst.
	// Zero means DefaultRefill.
	Refill time.Duration
	// Window is how long after an occurrence a repeat (same object, type,
	// reason, message) raises the stored Event's count instead of creating
	// a new one. Zero means DefaultWindow.
	Window time.Duration
	// MaxObjects bounds the objects and Events the recorder remembers for
	// rate limits and repeats. Zero means DefaultMaxObjects.
	MaxObjects int
	// WriteTimeout bounds each write. Zero means DefaultWriteTimeout.
	WriteTimeout time.Duration
	// Metrics receives the recorder's series. Nil means metrics.Noop.
	Metrics metrics.Provider
	// Logger logs failed writes at debug level. Nil means slog.Default().
	Logger *slog.Logger
}

// Stats are a recorder's counters since it was built.
type Stats struct {
	Created     int64 // Events created
	Patched     int64 // repeats written as a count and lastTimestamp patch
	Dropped     int64 // events refused because the queue was full
	RateLimited int64 // events refused by the object's token bucket
	Invalid     int64 // events with an unknown type or an object without a name
	Failed      int64 // writes the server refused or did not answer
}

// occurrence is one call of Event, waiting in the queue.
type occurrence struct {
	ref                  ObjectReference
	typ, reason, message string
	at                   time.Time
}

// Recorder records core/v1 Events about objects, as client-go's
// EventRecorder does, without ever blocking its caller: Event checks the
// object's token bucket and puts the event in a bounded queue, and Run
// writes them. Build it with New (the zero value is not usable); it is
// safe for concurrent use. Most callers keep one per controller, call
// Event or Eventf from reconciles, and run Run beside their workers.
type Recorder struct {
	events  *client.Client[*Event]
	source  Source
	window  time.Duration
	timeout time.Duration
	log     *slog.Logger
	limiter *objectLimiter
	max     int

	// queue is buffered: its capacity is the bounded queue between callers
	// of Event, which must never wait, and Run.
	queue   chan occurrence
	running atomic.Bool

	// lastName is the last unique suffix handed out, in Unix nanoseconds.
	lastName atomic.Int64

	created, patched, dropped, rateLimited, invalid, failed counter
}

// counter is an atomic total mirrored to a metrics.Counter.
type counter struct {
	n atomic.Int64
	m metrics.Counter
}

func (c *counter) inc() { c.n.Add(1); c.m.Inc() }

// New returns a recorder. It starts nothing: events wait in the queue
// until Run writes them.
func New(opts Options) (*Recorder, error) {
	if opts.Client == nil {
		return nil, errors.New("events: Options.Client is required")
	}
	for name, v := range map[string]int64{"QueueSize": int64(opts.QueueSize), "Burst": int64(opts.Burst), "MaxObjects": int64(opts.MaxObjects),
		"Refill": int64(opts.Refill), "Window": int64(opts.Window), "WriteTimeout": int64(opts.WriteTimeout)} {
		if v < 0 {
			return nil, fmt.Errorf("events: Options.%s must not be negative, got %d", name, v)
		}
	}
	component := opts.Component
	if component == "" {
		component = client.DefaultFieldManager()
	}
	r := &Recorder{
		events:  client.For(opts.Client, kube.Typed[*Event](kube.Events), client.Options{FieldManager: component}),
		source:  Source{Component: component, Host: opts.Instance},
		window:  orDefault(opts.Window, DefaultWindow),
		timeout: orDefault(opts.WriteTimeout, DefaultWriteTimeout),
		log:     opts.Logger,
		max:     orDefault(opts.MaxObjects, DefaultMaxObjects),
		queue:   make(chan occurrence, orDefault(opts.QueueSize, DefaultQueueSize)),
	}
	r.limiter = newObjectLimiter(orDefault(opts.Refill, DefaultRefill), orDefault(opts.Burst, DefaultBurst), r.max)
	if r.log == nil {
		r.log = slog.Default()
	}
	p, _ := metrics.OrNoop(opts.Metrics)
	name := metrics.Label{Name: "name", Value: component}
	for c, result := range map[*counter]string{&r.created: "created", &r.patched: "patched", &r.dropped: "dropped",
		&r.rateLimited: "rate_limited", &r.invalid: "invalid", &r.failed: "failed"} {
		c.m = p.Counter(MetricEvents, "Events handed to the recorder, by what became of them.", name, metrics.Label{Name: "result", Value: result})
	}
	p.GaugeFunc(MetricQueueDepth, "Events waiting to be written.", func() float64 { return float64(len(r.queue)) }, name)
	return r, nil
}

func orDefault[N int | time.Duration](v, def N) N {
	if v == 0 {
		return def
	}
	return v
}

// Event records an event of type eventType (TypeNormal or TypeWarning)
// about obj, with a reason (a short UpperCamelCase word) and a message for
// people. It never blocks: an event past obj's token bucket, or past a
// full queue, is dropped and counted (see Stats), as is one of an unknown
// type or about an object without a name.
func (r *Recorder) Event(obj Object, eventType, reason, message string) {
	r.EventAt(obj, eventType, reason, message, time.Now())
}

// Eventf is Event with a message formatted by fmt.Sprintf.
func (r *Recorder) Eventf(obj Object, eventType, reason, format string, args ...any) {
	r.EventAt(obj, eventType, reason, fmt.Sprintf(format, args...), time.Now())
}

// EventAt is Event at the time now: the event's timestamp, and the time
// its token bucket is read at.
func (r *Recorder) EventAt(obj Object, eventType, reason, message string, now time.Time) {
	if obj == nil || (eventType != TypeNormal && eventType != TypeWarning) {
		r.invalid.inc()
		return
	}
	ref := referenceOf(obj)
	if ref.Name == "" {
		r.invalid.inc()
		return
	}
	if !r.limiter.allowAt(limitKeyOf(ref), now) {
		r.rateLimited.inc()
		return
	}
	select {
	case r.queue <- occurrence{ref: ref, typ: eventType, reason: reason, message: message, at: now}:
	default:
		r.dropped.inc()
	}
}

// Stats returns the recorder's counters.
func (r *Recorder) Stats() Stats {
	return Stats{Created: r.created.n.Load(), Patched: r.patched.n.Load(), Dropped: r.dropped.n.Load(),
		RateLimited: r.rateLimited.n.Load(), Invalid: r.invalid.n.Load(), Failed: r.failed.n.Load()}
}

// Run writes queued events until ctx ends, then returns nil; events still
// queued stay for a later Run. It starts no goroutine. Calling Run while
// another Run is running is an error.
func (r *Recorder) Run(ctx context.Context) error {
	if !r.running.CompareAndSwap(false, true) {
		return errors.New("events: Recorder.Run is already running")
	}
	defer r.running.Store(false)
	c := newCorrelator(r.window, r.max)
	for {
		select {
		case <-ctx.Done():
			return nil
		case o := <-r.queue:
			r.write(ctx, c, o)
		}
	}
}

// write creates the Event of o, or patches the stored one when o repeats it.
func (r *Recorder) write(ctx context.Context, c *correlator, o occurrence) {
	k := aggKey{ref: o.ref, typ: o.typ, reason: o.reason, message: o.message}
	ns := o.ref.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault // where client-go puts events about cluster-scoped objects
	}
	s, repeat := c.observe(k, ns, o.at, func() string { return eventName(o.ref.Name, r.uniqueSuffix(o.at)) })
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	if repeat {
		err := r.patch(ctx, s)
		if err == nil {
			r.patched.inc()
			return
		}
		if !kube.IsNotFound(err) {
			// Keep the entry: its count already includes this occurrence,
			// so the next repeat's patch makes up for this one.
			r.failed.inc()
			r.logFailure(k, err)
			return
		}
		// The stored Event is gone (deleted, or expired by the server's
		// event TTL): create it again with the count so far, as client-go does.
	}
	if _, err := r.events.Create(ctx, r.eventOf(o, s), client.CreateOptions{}); err != nil {
		c.forget(k) // nothing stored: the next occurrence creates it
		r.failed.inc()
		r.logFailure(k, err)
		return
	}
	r.created.inc()
}

func (r *Recorder) logFailure(k aggKey, err error) {
	r.log.Debug("events: write failed", "object", k.ref.Namespace+"/"+k.ref.Name, "reason", k.reason, "err", err)
}

// eventOf is the Event client-go's recorder would write for o as s.
func (r *Recorder) eventOf(o occurrence, s stored) *Event {
	return &Event{
		TypeMeta:            metav1.TypeMeta{APIVersion: "v1", Kind: "Event"},
		ObjectMeta:          metav1.ObjectMeta{Name: s.name, Namespace: s.namespace},
		InvolvedObject:      o.ref,
		Reason:              o.reason,
		Message:             o.message,
		Source:              r.source,
		FirstTimestamp:      metav1.NewTime(s.first),
		LastTimestamp:       metav1.NewTime(s.last),
		Count:               s.count,
		Type:                o.typ,
		ReportingController: r.source.Component,
		ReportingInstance:   r.source.Host,
	}
}

// patch sets the stored Event's count and lastTimestamp. Sending it twice
// sets the same values, so it is repeatable.
func (r *Recorder) patch(ctx context.Context, s stored) error {
	body := `{"count":` + strconv.Itoa(int(s.count)) + `,"lastTimestamp":"` + s.last.UTC().Format(time.RFC3339) + `"}`
	_, err := r.events.Patch(ctx, s.namespace, s.name, client.MergePatch, []byte(body), client.PatchOptions{Repeatable: true})
	return err
}

// uniqueSuffix returns at in Unix nanoseconds as hex, as client-go names
// events, raised past the last one handed out so that two events in the
// same nanosecond (or under a fake clock) get different names.
func (r *Recorder) uniqueSuffix(at time.Time) string {
	for {
		last := r.lastName.Load()
		n := max(at.UnixNano(), last+1)
		if r.lastName.CompareAndSwap(last, n) {
			return strconv.FormatInt(n, 16)
		}
	}
}

// maxNameLength is the longest metadata.name the server takes for an
// Event (a DNS subdomain).
const maxNameLength = 253

// eventName is client-go's "<object>.<suffix>", made a valid DNS subdomain
// where the object's name alone would not give one: an object name that
// is not one (a ClusterRole's "system:aggregate", say) has its other
// characters turned into '-' and upper case lowered, and a long name is
// cut so that the whole fits maxNameLength. A valid, short name is kept
// as it is.
func eventName(object, suffix string) string {
	b := []byte(object)
	for i, c := range b {
		switch {
		case 'A' <= c && c <= 'Z':
			b[i] = c + ('a' - 'A')
		case ('a' <= c && c <= 'z') || ('0' <= c && c <= '9') || c == '-' || c == '.':
		default:
			b[i] = '-'
		}
	}
	if keep := maxNameLength - 1 - len(suffix); len(b) > keep {
		b = b[:keep]
	}
	// A subdomain's labels start and end with a letter or digit: trim what
	// the replacements or the cut left at the ends of the object part.
	for len(b) > 0 && !isAlnum(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && !isAlnum(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	if len(b) == 0 {
		return suffix
	}
	return string(b) + "." + suffix
}

func isAlnum(c byte) bool { return ('a' <= c && c <= 'z') || ('0' <= c && c <= '9') }
