package events

import (
	"sync"
	"time"

	"github.com/kwatch/kwatch/internal/ratelimit"
)

// limitKey is the object a token bucket belongs to.
type limitKey struct {
	kind, apiVersion, namespace, name, uid string
}

func limitKeyOf(r ObjectReference) limitKey {
	return limitKey{r.Kind, r.APIVersion, r.Namespace, r.Name, string(r.UID)}
}

// objectLimiter is a token bucket per object, as client-go's spam filter
// keeps one per source and object: a burst of events about one object
// passes, then one per interval. It is bounded: past max objects, the
// buckets that have refilled are dropped (they hold nothing a new bucket
// would not), and if that frees none, every bucket is; an object whose
// bucket is dropped gets a new, full one. Safe for concurrent use.
type objectLimiter struct {
	perSecond float64
	burst     int
	max       int

	mu      sync.Mutex
	buckets map[limitKey]*ratelimit.Bucket // at most max entries
}

func newObjectLimiter(every time.Duration, burst, max int) *objectLimiter {
	return &objectLimiter{perSecond: ratelimit.Every(every), burst: burst, max: max, buckets: make(map[limitKey]*ratelimit.Bucket)}
}

// allowAt takes a token from k's bucket at now and reports whether it had one.
func (l *objectLimiter) allowAt(k limitKey, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[k]
	if b == nil {
		if len(l.buckets) >= l.max {
			l.pruneLocked(now)
		}
		b = ratelimit.New(l.perSecond, l.burst)
		l.buckets[k] = b
	}
	return b.AllowAt(now)
}

// pruneLocked drops the full buckets, or all of them when none is full.
// l.mu must be held.
func (l *objectLimiter) pruneLocked(now time.Time) {
	for k, b := range l.buckets {
		if b.Full(now) {
			delete(l.buckets, k)
		}
	}
	if len(l.buckets) >= l.max {
		clear(l.buckets)
	}
}
