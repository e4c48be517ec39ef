package watch

import (
	"net/url"
	"strconv"
	"time"

	"github.com/kwatch/kwatch/kube"
)

// Object is what the engine needs to know of any object it lists or watches.
// *corev1.Pod, a slim struct embedding metav1.ObjectMeta,
// *metav1.PartialObjectMetadata and Unstructured all satisfy it.
// The engine decodes into a nil T: T is normally a pointer type, which the
// decoder allocates.
type Object interface {
	GetNamespace() string
	GetName() string
	GetResourceVersion() string
	GetAnnotations() map[string]string
}

// EventType is the "type" field of a watch event.
type EventType string

// The event types the API server sends.
const (
	Added    EventType = "ADDED"
	Modified EventType = "MODIFIED"
	Deleted  EventType = "DELETED"
	Bookmark EventType = "BOOKMARK"
	Error    EventType = "ERROR"
)

// Valid reports whether t is one of the five event types.
func (t EventType) Valid() bool {
	switch t {
	case Added, Modified, Deleted, Bookmark, Error:
		return true
	}
	return false
}

// InitialEventsEndAnnotation marks the bookmark that ends the initial events
// of a streaming list (sendInitialEvents=true).
const InitialEventsEndAnnotation = "k8s.io/initial-events-end"

// Event is one decoded watch event. Object is nil for ERROR events, whose
// Status is returned as a *StatusError by the stream instead.
type Event[T any] struct {
	Type   EventType
	Object T
}

// ResourceVersionMatch values for lists and streaming watches.
const (
	MatchNotOlderThan = "NotOlderThan"
	MatchExact        = "Exact"
)

// ListOptions are how a list request reads (which resourceVersion, pages,
// the form of the answer); what it reads is its kube.Scope. The zero value
// lists consistently from etcd, in one page.
type ListOptions struct {
	ResourceVersion      string // "" (consistent read), "0" (any cached state) or an RV
	ResourceVersionMatch string // "", MatchNotOlderThan or MatchExact
	Limit                int64  // page size; 0 means no limit
	Continue             string // token from the previous page
	// Form is what the server sends of each item: the object
	// (FormObject), its metadata, or the server's Table.
	Form Form
	// IdleTimeout, when positive, fails the list with ErrIdleTimeout after
	// that long without a byte from the server, so a body that never ends
	// cannot hang the caller. Not sent to the server.
	IdleTimeout time.Duration
	// JSON asks for JSON even for a T that decodes protobuf (the compact
	// store sets it when the type it decodes into on read reads JSON
	// only). Not sent to the server.
	JSON bool
}

func (o ListOptions) query(sc kube.Scope) url.Values {
	q := url.Values{}
	sc.SetQuery(q)
	setNonEmpty(q, "resourceVersion", o.ResourceVersion)
	setNonEmpty(q, "resourceVersionMatch", o.ResourceVersionMatch)
	setNonEmpty(q, "continue", o.Continue)
	if o.Limit > 0 {
		q.Set("limit", strconv.FormatInt(o.Limit, 10))
	}
	o.Form.setQuery(q)
	return q
}

// WatchOptions are how a watch request reads (from which resourceVersion,
// bookmarks, the form of the events); what it watches is its kube.Scope.
type WatchOptions struct {
	ResourceVersion string // start after this RV; "" or "0" start with synthetic ADDED events
	// AllowBookmarks asks the server for BOOKMARK events that carry a newer RV.
	AllowBookmarks bool
	// TimeoutSeconds asks the server to end the stream cleanly after this long; 0 leaves it to the server.
	TimeoutSeconds int64
	// SendInitialEvents starts the watch with the current state as ADDED
	// events, ended by a bookmark annotated InitialEventsEndAnnotation
	// (a streaming list). It requires ResourceVersionMatch=NotOlderThan,
	// which Watch sets when it is empty.
	SendInitialEvents    bool
	ResourceVersionMatch string
	// Form is what the server sends of each object (FormObject: the
	// object). With a Table form each event's object is a one-row Table,
	// the first carrying the column definitions.
	Form Form
	// IdleTimeout, when positive, ends the stream with ErrIdleTimeout after
	// that long without a byte from the server (see Watch). Not sent to the server.
	IdleTimeout time.Duration
	// Decoder bounds the stream decoder (frame size, parallel decoding).
	Decoder DecoderOptions
	// JSON asks for JSON even for a T that decodes protobuf (see
	// ListOptions.JSON). Not sent to the server.
	JSON bool
}

func (o WatchOptions) query(sc kube.Scope) url.Values {
	q := url.Values{}
	q.Set("watch", "1")
	sc.SetQuery(q)
	setNonEmpty(q, "resourceVersion", o.ResourceVersion)
	if o.AllowBookmarks {
		q.Set("allowWatchBookmarks", "true")
	}
	if o.TimeoutSeconds > 0 {
		q.Set("timeoutSeconds", strconv.FormatInt(o.TimeoutSeconds, 10))
	}
	if o.SendInitialEvents {
		q.Set("sendInitialEvents", "true")
		rvm := o.ResourceVersionMatch
		if rvm == "" {
			rvm = MatchNotOlderThan
		}
		q.Set("resourceVersionMatch", rvm)
	} else {
		setNonEmpty(q, "resourceVersionMatch", o.ResourceVersionMatch)
	}
	o.Form.setQuery(q)
	return q
}

func setNonEmpty(q url.Values, k, v string) {
	if v != "" {
		q.Set(k, v)
	}
}
