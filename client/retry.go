package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kwatch/kwatch/internal/backoff"
	"github.com/kwatch/kwatch/kube"
)

// Retry is how RetryOnConflict paces its attempts.
type Retry struct {
	Attempts int           // tries in all, the first included; 5 when zero
	Initial  time.Duration // wait after the first conflict; 10 ms when zero, doubling
	Max      time.Duration // longest wait; 1 s when zero
}

// DefaultRetry is the pacing RetryOnConflict uses with a zero Retry:
// five tries over about 150 ms, with jitter.
var DefaultRetry = Retry{Attempts: 5, Initial: 10 * time.Millisecond, Max: time.Second}

// RetryOnConflict calls fn until it returns nil or an error other than a
// conflict (kube.IsConflict: a stale resourceVersion, a failed
// precondition), waiting with jittered exponential backoff between tries.
// fn must re-read the object and re-apply its change on each call; Modify
// does exactly that. After the last try the conflict is returned, wrapped
// with the number of tries; an AlreadyExists is not a conflict.
func RetryOnConflict(ctx context.Context, pace Retry, fn func(ctx context.Context) error) error {
	if pace.Attempts <= 0 {
		pace.Attempts = DefaultRetry.Attempts
	}
	if pace.Initial <= 0 {
		pace.Initial = DefaultRetry.Initial
	}
	if pace.Max <= 0 {
		pace.Max = DefaultRetry.Max
	}
	b := backoff.New(backoff.Options{Initial: pace.Initial, Max: pace.Max, Jitter: 0.2})
	for try := 1; ; try++ {
		err := fn(ctx)
		if err == nil || !kube.IsConflict(err) {
			return err
		}
		if try >= pace.Attempts {
			return fmt.Errorf("still conflicting after %d tries: %w", try, err)
		}
		t := time.NewTimer(b.FailureAt(time.Now()))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return errors.Join(ctx.Err(), err)
		}
	}
}

// Modify reads ns/name, calls change on the object read, and updates it
// with the resourceVersion read as a precondition, starting again from the
// read on a conflict (DefaultRetry pacing). change may return ErrNoChange
// to skip the update; any other error ends Modify with it. The object
// returned is the server's after the update (or the one read, unchanged).
func (r *Client[T]) Modify(ctx context.Context, ns, name string, change func(T) error, opts UpdateOptions) (T, error) {
	var out T
	err := RetryOnConflict(ctx, Retry{}, func(ctx context.Context) error {
		cur, err := r.Get(ctx, ns, name, GetOptions{Subresource: opts.Subresource})
		if err != nil {
			return err
		}
		if cur.GetResourceVersion() == "" {
			return fmt.Errorf("client: %s %q has no resourceVersion to guard the update with", r.res, name)
		}
		if err := change(cur); err != nil {
			if errors.Is(err, ErrNoChange) {
				out = cur
				return nil
			}
			return err
		}
		out, err = r.Update(ctx, cur, opts)
		return err
	})
	return out, err
}

// ErrNoChange, returned by Modify's change function, says the object needs
// no update.
var ErrNoChange = errors.New("no change")
