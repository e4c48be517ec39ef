package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/metrics"
	"github.com/kwatch/kwatch/watch"
)

// statsSource is the part of an informer the metrics read.
type statsSource interface {
	Stats() informer.Stats
	Health() informer.Health
}

// readyGrace is how long after the last activity a synced informer that is
// between watches still counts as ready: resuming a watch is routine.
const readyGrace = 30 * time.Second

// counterSync turns the informer's cumulative Stats into Prometheus
// counters: at each scrape, every counter is advanced by what its field
// grew since the previous scrape.
type counterSync struct {
	src statsSource

	mu       sync.Mutex
	last     informer.Stats // the Stats at the previous scrape
	counters []statCounter
}

type statCounter struct {
	c   metrics.Counter
	get func(informer.Stats) int64
}

func newCounterSync(reg *metrics.Set, src statsSource, res metrics.Label) *counterSync {
	cs := &counterSync{src: src}
	add := func(name, help string, get func(informer.Stats) int64) {
		cs.counters = append(cs.counters, statCounter{c: reg.Counter(name, help, res), get: get})
	}
	add("kwatch_informer_events_total", "Watch events applied, bookmarks included.", func(s informer.Stats) int64 { return s.Events })
	add("kwatch_informer_relists_total", "Lists committed to the cache, the first included.", func(s informer.Stats) int64 { return s.Relists })
	add("kwatch_informer_watches_total", "Watch requests opened.", func(s informer.Stats) int64 { return s.Watches })
	add("kwatch_informer_idle_timeouts_total", "Watches ended for receiving nothing within the idle deadline.", func(s informer.Stats) int64 { return s.IdleTimeouts })
	add("kwatch_informer_gone_total", "410 Gone/Expired answers (resourceVersion too old).", func(s informer.Stats) int64 { return s.Gone })
	add("kwatch_informer_errors_total", "Other failed list or watch phases.", func(s informer.Stats) int64 { return s.Errors })
	add("kwatch_informer_transform_errors_total", "Objects dropped by the transform.", func(s informer.Stats) int64 { return s.TransformErrors })
	add("kwatch_informer_store_errors_total", "Objects the cache refused.", func(s informer.Stats) int64 { return s.StoreErrors })
	add("kwatch_informer_handler_panics_total", "Handler calls that panicked.", func(s informer.Stats) int64 { return s.HandlerPanics })
	return cs
}

// sync advances the counters to the informer's current Stats.
func (cs *counterSync) sync() {
	now := cs.src.Stats()
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for _, c := range cs.counters {
		if d := c.get(now) - c.get(cs.last); d > 0 {
			c.c.Add(float64(d))
		}
	}
	cs.last = now
}

// serveMetrics serves /metrics, /healthz and /readyz on --metrics-addr
// under the group, and returns the hook that counts printed changes. The
// listener is opened now, so a bad address is reported before anything
// else starts.
func serveMetrics(g *group, o *getOptions, res kube.Resource, inf statsSource, objects func() int) (func(watch.EventType), error) {
	if o.metricsAddr == "" {
		return func(watch.EventType) {}, nil
	}
	ln, err := net.Listen("tcp", o.metricsAddr)
	if err != nil {
		return nil, fmt.Errorf("cannot serve metrics on --metrics-addr %s: %w", o.metricsAddr, err)
	}
	reg := metrics.NewSet()
	label := metrics.Label{Name: "resource", Value: res.String()}
	cs := newCounterSync(reg, inf, label)
	registerGauges(reg, inf, objects, label)
	printed := map[watch.EventType]metrics.Counter{}
	for _, t := range []watch.EventType{watch.Added, watch.Modified, watch.Deleted} {
		printed[t] = reg.Counter("kwatch_printed_events_total", "Changes printed, by event type.",
			label, metrics.Label{Name: "type", Value: string(t)})
	}
	if err := reg.Err(); err != nil {
		ln.Close()
		return nil, fmt.Errorf("metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		cs.sync()
		reg.ServeHTTP(w, r)
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) { readyz(w, inf.Health()) })
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	g.Go(func(ctx context.Context) error { return serveUntil(ctx, srv, ln) })
	return func(t watch.EventType) {
		if c, ok := printed[t]; ok {
			c.Inc()
		}
	}, nil
}

func registerGauges(reg *metrics.Set, inf statsSource, objects func() int, label metrics.Label) {
	boolValue := func(b bool) float64 {
		if b {
			return 1
		}
		return 0
	}
	reg.GaugeFunc("kwatch_informer_objects", "Objects in the cache.", func() float64 { return float64(objects()) }, label)
	reg.GaugeFunc("kwatch_informer_handler_backlog", "Changes queued for the printer.",
		func() float64 { return float64(inf.Stats().HandlerBacklog) }, label)
	metrics.CounterFunc(reg, "kwatch_informer_handler_merged_total",
		"Changes merged into a later change of their object, not printed: the output fell behind the server.",
		func() float64 { return float64(inf.Stats().HandlerMerged) }, label)
	reg.GaugeFunc("kwatch_informer_synced", "1 once the first list is in the cache.",
		func() float64 { return boolValue(inf.Health().Synced) }, label)
	reg.GaugeFunc("kwatch_informer_watching", "1 while a watch stream is open.",
		func() float64 { return boolValue(inf.Health().Watching) }, label)
	reg.GaugeFunc("kwatch_informer_last_activity_timestamp_seconds", "When the last event, bookmark or list arrived (Unix time).",
		func() float64 {
			if t := inf.Health().LastActivity; !t.IsZero() {
				return float64(t.UnixNano()) / 1e9
			}
			return 0
		}, label)
}

// readyz answers 200 when the cache is synced and being kept current: a
// watch is open, or one was within readyGrace.
func readyz(w http.ResponseWriter, h informer.Health) {
	switch {
	case !h.Synced:
		http.Error(w, "not ready: initial list not loaded yet", http.StatusServiceUnavailable)
	case !h.Watching && time.Since(h.LastActivity) > readyGrace:
		msg := "not ready: no watch open since " + h.LastActivity.UTC().Format(time.RFC3339)
		if h.LastError != nil {
			msg += "; last error: " + oneLine(h.LastError.Error())
		}
		http.Error(w, msg, http.StatusServiceUnavailable)
	default:
		fmt.Fprintln(w, "ok")
	}
}

// serveUntil serves on ln until ctx ends, then shuts the server down and
// waits for its goroutine.
func serveUntil(ctx context.Context, srv *http.Server, ln net.Listener) error {
	errc := make(chan error, 1) // buffered: Serve's goroutine never blocks on it
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("metrics server: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("metrics server: %w", err)
	}
	return nil
}
