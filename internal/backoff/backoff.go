package backoff

import (
	"math/rand/v2"
	"time"
)

// Defaults, as the informer documents them.
const (
	DefaultInitial    = 800 * time.Millisecond
	DefaultMax        = 30 * time.Second
	DefaultResetAfter = 2 * time.Minute
	DefaultJitter     = 1.0
)

// Options configure a Backoff. Each zero field takes its default.
type Options struct {
	Initial    time.Duration // first delay; 800 ms
	Max        time.Duration // delays never exceed this; 30 s
	ResetAfter time.Duration // a failure this long after the previous one starts again from Initial; 2 min
	// Jitter adds up to Jitter*delay at random, so many clients that failed
	// together do not retry together; 1.0. Negative disables jitter.
	Jitter float64
}

// Backoff is the delay state of one retrying loop. The zero value is not
// usable; use New. It is not safe for concurrent use.
type Backoff struct {
	opts        Options
	next        time.Duration // delay before jitter for the next failure
	lastFailure time.Time
	rand        func() float64
}

// New returns a Backoff with opts' zero fields defaulted.
func New(opts Options) *Backoff {
	if opts.Initial <= 0 {
		opts.Initial = DefaultInitial
	}
	if opts.Max <= 0 {
		opts.Max = DefaultMax
	}
	if opts.Max < opts.Initial {
		opts.Max = opts.Initial
	}
	if opts.ResetAfter <= 0 {
		opts.ResetAfter = DefaultResetAfter
	}
	if opts.Jitter == 0 {
		opts.Jitter = DefaultJitter
	}
	if opts.Jitter < 0 {
		opts.Jitter = 0
	}
	return &Backoff{opts: opts, next: opts.Initial, rand: rand.Float64}
}

// SetRand replaces the random source (for tests); f returns values in [0, 1).
func (b *Backoff) SetRand(f func() float64) { b.rand = f }

// FailureAt records a failure at now and returns how long to wait before
// retrying. Delays double from Initial up to Max; after ResetAfter without a
// failure they start again from Initial.
func (b *Backoff) FailureAt(now time.Time) time.Duration {
	if !b.lastFailure.IsZero() && now.Sub(b.lastFailure) >= b.opts.ResetAfter {
		b.next = b.opts.Initial
	}
	b.lastFailure = now
	d := b.next
	if b.next < b.opts.Max {
		b.next = min(b.next*2, b.opts.Max)
	}
	if b.opts.Jitter > 0 {
		d += time.Duration(b.opts.Jitter * b.rand() * float64(d))
	}
	return min(d, b.opts.Max+time.Duration(b.opts.Jitter*float64(b.opts.Max)))
}

// Reset starts the next failure from Initial, as after a proven success.
func (b *Backoff) Reset() {
	b.next = b.opts.Initial
	b.lastFailure = time.Time{}
}

// Jittered returns d plus up to frac*d at random: for spreading periodic
// work (watch timeouts, relists) over clients.
func Jittered(d time.Duration, frac float64) time.Duration {
	if frac <= 0 || d <= 0 {
		return d
	}
	return d + time.Duration(rand.Float64()*frac*float64(d))
}
