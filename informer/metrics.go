package informer

import (
	"errors"
	"time"

	"github.com/kwatch/kwatch/metrics"
)

// The series RegisterMetrics exports, each labelled name="<MetricsOptions.Name>".
const (
	MetricEvents          = "kwatch_informer_events_total"
	MetricRelists         = "kwatch_informer_relists_total"
	MetricWatches         = "kwatch_informer_watches_total"
	MetricWatchRestarts   = "kwatch_informer_watch_restarts_total"
	MetricIdleTimeouts    = "kwatch_informer_idle_timeouts_total"
	MetricGone            = "kwatch_informer_gone_total"
	MetricErrors          = "kwatch_informer_errors_total"
	MetricTransformErrors = "kwatch_informer_transform_errors_total"
	MetricStoreErrors     = "kwatch_informer_store_errors_total"
	MetricHandlerPanics   = "kwatch_informer_handler_panics_total"
	MetricHandlerMerged   = "kwatch_informer_handler_merged_total"
	MetricHandlerBacklog  = "kwatch_informer_handler_backlog"
	MetricSynced          = "kwatch_informer_synced"
	MetricWatching        = "kwatch_informer_watching"
	MetricLastEventAge    = "kwatch_informer_last_event_age_seconds"
	MetricObjects         = "kwatch_informer_objects"
)

// MetricsSource is what RegisterMetrics reads: an *Informer[T] of any T.
type MetricsSource interface {
	Stats() Stats
	Health() Health
}

// MetricsOptions configures RegisterMetrics.
type MetricsOptions struct {
	// Name is the value of the name label on every series; required. A
	// manager names each informer by its resource and scope.
	Name string
	// Now is the clock read at scrape time for the age of the last event.
	// Nil means time.Now.
	Now func() time.Time
	// Objects, when set, is called at scrape time for the number of cached
	// objects (kwatch_informer_objects), typically Store().Len. Nil leaves
	// that series out.
	Objects func() int
}

// RegisterMetrics exports src's Stats and Health through p, read at scrape
// time: nothing is copied on the informer's hot path and no goroutine
// starts. Totals are counters (see metrics.CounterFunc for a provider
// without CounterFunc); the handler backlog, synced, watching, the cached
// objects and the age of the last event are gauges. The age counts from
// the last event, bookmark or list; before any, from the call to
// RegisterMetrics, so an informer that never hears from its server ages
// like one whose server went quiet. Registering the same name again
// replaces the functions read, as for a new informer of that name.
//
// A nil p is metrics.Noop.
func RegisterMetrics(p metrics.Provider, src MetricsSource, opts MetricsOptions) error {
	if src == nil {
		return errors.New("informer: RegisterMetrics: nil MetricsSource")
	}
	if opts.Name == "" {
		return errors.New("informer: RegisterMetrics: MetricsOptions.Name is empty")
	}
	p, _ = metrics.OrNoop(p)
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	registered := now()
	l := metrics.Label{Name: "name", Value: opts.Name}
	total := func(name, help string, get func(Stats) int64) {
		metrics.CounterFunc(p, name, help, func() float64 { return float64(get(src.Stats())) }, l)
	}
	total(MetricEvents, "Watch events applied, bookmarks included.", func(s Stats) int64 { return s.Events })
	total(MetricRelists, "Lists committed to the cache, the first included.", func(s Stats) int64 { return s.Relists })
	total(MetricWatches, "Watch requests opened.", func(s Stats) int64 { return s.Watches })
	total(MetricWatchRestarts, "Watch requests opened after the first: each one resumes after a watch ended.",
		func(s Stats) int64 { return max(0, s.Watches-1) })
	total(MetricIdleTimeouts, "Watches ended for receiving nothing within the idle deadline.", func(s Stats) int64 { return s.IdleTimeouts })
	total(MetricGone, "410 Gone/Expired answers (resourceVersion too old).", func(s Stats) int64 { return s.Gone })
	total(MetricErrors, "Other failed list or watch phases.", func(s Stats) int64 { return s.Errors })
	total(MetricTransformErrors, "Objects the transform refused; they are not cached.", func(s Stats) int64 { return s.TransformErrors })
	total(MetricStoreErrors, "Objects the cache refused; they are not cached.", func(s Stats) int64 { return s.StoreErrors })
	total(MetricHandlerPanics, "Handler calls that panicked, OnApplied calls included.", func(s Stats) int64 { return s.HandlerPanics })
	total(MetricHandlerMerged, "Changes merged into a later change of their object before a handler saw them (a slow handler).",
		func(s Stats) int64 { return s.HandlerMerged })

	p.GaugeFunc(MetricHandlerBacklog, "Changes waiting for the handlers, summed over handlers (bounded: by the objects, or by an Ordered handler's buffer).",
		func() float64 { return float64(src.Stats().HandlerBacklog) }, l)
	p.GaugeFunc(MetricSynced, "1 once the first list is in the cache.", func() float64 { return boolValue(src.Health().Synced) }, l)
	p.GaugeFunc(MetricWatching, "1 while a watch stream is open.", func() float64 { return boolValue(src.Health().Watching) }, l)
	p.GaugeFunc(MetricLastEventAge, "Seconds since the last event, bookmark or list arrived (before any: since the metrics were registered).",
		func() float64 {
			last := src.Health().LastActivity
			if last.IsZero() {
				last = registered
			}
			return max(0, now().Sub(last).Seconds())
		}, l)
	if opts.Objects != nil {
		p.GaugeFunc(MetricObjects, "Objects in the cache.", func() float64 { return float64(opts.Objects()) }, l)
	}
	return nil
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
