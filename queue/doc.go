// Package queue is the work queue and controller runner at the end of
// kwatch's pipeline: event handlers add keys, workers reconcile them.
//
// Guarantees of Queue:
//   - Dedup: a key added while it already waits is processed once.
//   - Exclusivity: a key handed out by Get is not handed out again until
//     its Done; a key added in between is queued again at Done, not before.
//   - Bounded memory: every internal set holds a key at most once, so
//     memory follows the number of distinct keys, not the number of adds.
//   - Delays: AddAfter keeps a key in a min-heap until due; the earliest
//     request for a key wins. One timer serves the heap.
//   - Priorities: a key waits at PriorityNormal (Add) or PriorityLow
//     (AddWith; an informer's initial list and resyncs). Get hands out
//     normal keys first, each lane in the order its keys were queued, but
//     a low key that has been ready for Options.MaxLowWait
//     (DefaultMaxLowWait, 10s) goes before every normal key: under any
//     stream of normal keys a low key is handed out at most MaxLowWait
//     after it was queued, plus the time to hand out the older aged low
//     keys ahead of it and for a worker to ask. A key re-added at normal
//     priority while it waits low moves up (never down); dedup and
//     exclusivity are as above whatever the priority, and a key re-added
//     while being processed is queued at Done at the highest priority of
//     those adds. Depth and wait are also recorded per priority.
//   - No background goroutine: constructors start nothing. The delay timer
//     is armed on the first AddAfter and stopped by ShutDown.
//   - Shutdown: ShutDown ignores further adds and wakes every Get;
//     ShutDownWithDrain also waits, bounded by a context, for every key
//     handed out to be Done.
//
// Retries: a RateLimitedQueue asks a RateLimiter how long a failed key
// waits. DefaultRateLimiter is the larger of a per-key exponential backoff
// (ItemBackoff, 5ms doubling up to 1000s) and a queue-wide token bucket
// (TokenBucket, 10 per second, burst 100, a golang.org/x/time/rate
// Limiter). TokenBucket's time-dependent methods have ...At twins that
// take the time, so its logic needs no clock.
//
// Runner owns a RateLimitedQueue and N workers calling a Reconcile
// function: success forgets the key's backoff, an error or a recovered
// panic retries it rate-limited, a Result asks for a requeue; retries and
// requeues keep the priority the key was handed out at, so a failing
// initial-list key does not jump ahead of changes. Run returns
// only after every worker has exited, having let in-flight reconciles
// finish for a bounded drain time. Add is all an event handler needs.
//
// Metrics: queues and runners record client-go's workqueue_* series
// (labelled name="<queue>") and kwatch_reconcile_* series through a
// metrics.Provider (Options.Metrics). The default records nothing and
// reads no clock. metrics.Set is the built-in provider that writes
// the Prometheus text format and serves it over HTTP; informers and other
// packages register their series in the same one. Time is read from an
// injectable Clock.
package queue
