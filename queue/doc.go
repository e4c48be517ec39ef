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
// panic retries it rate-limited, a Result asks for a requeue. Run returns
// only after every worker has exited, having let in-flight reconciles
// finish for a bounded drain time. Add is all an event handler needs.
//
// Metrics: queues and runners record client-go's workqueue_* series
// (labelled name="<queue>") and kwatch_reconcile_* series through a
// metrics.Provider (Options.Metrics). The default records nothing and
// reads no clock. metrics.Registry is the built-in provider that writes
// the Prometheus text format and serves it over HTTP; informers and other
// packages register their series in the same one. Time is read from an
// injectable Clock.
package queue
