package queue

// RateLimitedOptions configures NewRateLimited. The zero value is a queue
// with the zero Options and DefaultRateLimiter on the queue's clock.
type RateLimitedOptions[K comparable] struct {
	Options
	// RateLimiter decides the wait of AddRateLimited. Nil means
	// DefaultRateLimiter, with its token bucket on Options.Clock.
	RateLimiter RateLimiter[K]
}

// RateLimitedQueue is a Queue whose keys can be retried with a wait chosen
// by a RateLimiter. All of Queue's methods are promoted.
//
// The zero value is not usable; create one with NewRateLimited. All methods
// are safe for concurrent use. A Runner owns one; use it directly to write
// your own worker loop with retries.
type RateLimitedQueue[K comparable] struct {
	*Queue[K]
	limiter RateLimiter[K]
}

// NewRateLimited returns an empty rate-limited queue. Like New it starts no
// goroutine.
func NewRateLimited[K comparable](opts RateLimitedOptions[K]) *RateLimitedQueue[K] {
	limiter := opts.RateLimiter
	if limiter == nil {
		limiter = defaultRateLimiter[K](opts.Clock)
	}
	return &RateLimitedQueue[K]{Queue: New[K](opts.Options), limiter: limiter}
}

// AddRateLimited adds item after the wait the rate limiter gives it, and
// counts a retry in workqueue_retries_total. After ShutDown it does
// nothing, and the limiter does not count the retry.
func (q *RateLimitedQueue[K]) AddRateLimited(item K) {
	q.AddRateLimitedWith(item, AddOptions{})
}

// AddRateLimitedWith is AddRateLimited at opts.Priority: a worker passes
// the priority GetWithPriority gave, so that a retried key keeps it. The
// key waits the longer of opts.After and the rate limiter's wait.
func (q *RateLimitedQueue[K]) AddRateLimitedWith(item K, opts AddOptions) {
	if q.ShuttingDown() {
		return
	}
	q.m.retries.Inc()
	opts.After = max(opts.After, q.limiter.When(item))
	q.AddWith(item, opts)
}

// Forget tells the rate limiter that item is done being retried, so its
// next failure starts from the shortest backoff. It does not remove item
// from the queue.
func (q *RateLimitedQueue[K]) Forget(item K) { q.limiter.Forget(item) }

// NumRequeues returns how many times item has been rate-limited since it
// was last forgotten.
func (q *RateLimitedQueue[K]) NumRequeues(item K) int { return q.limiter.NumRequeues(item) }
