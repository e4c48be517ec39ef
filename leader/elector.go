package leader

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/kube"
)

// State is where an Elector stands in the election.
type State int

const (
	// Idle: Run is not running, or returned without ever leading.
	Idle State = iota
	// Candidate: Run is trying to acquire the Lease every retry period.
	Candidate
	// Leading: this Elector holds the Lease and its leading function runs.
	Leading
	// Lost: leadership ended without a release (no renew succeeded within
	// the renew deadline, or another holder was seen); Run returned ErrLost.
	Lost
	// Released: leadership ended because Run's context ended or the
	// leading function returned; the Lease was released, unless
	// ReleaseOnCancel is false.
	Released
)

func (s State) String() string {
	switch s {
	case Idle:
		return "idle"
	case Candidate:
		return "candidate"
	case Leading:
		return "leading"
	case Lost:
		return "lost"
	case Released:
		return "released"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// ErrLost is returned by Run when leadership ended without a release:
// the leading function's context was cancelled because no renew
// succeeded within RenewDeadline, or because another candidate was seen
// holding the Lease. Errors from Run wrap it with the reason.
var ErrLost = errors.New("leader: lost the lease")

// Elector runs for leadership on one Lease. Build it with New; Run does
// the work. Its methods are safe for concurrent use, but only one Run
// may be running at a time.
type Elector struct {
	cfg     Config
	leases  *client.Resource[*Lease]
	log     *slog.Logger
	m       electorMetrics
	running atomic.Bool

	mu    sync.Mutex
	state State       // guarded by mu
	obs   observation // what Run last read or wrote; guarded by mu, written only by Run
	// lease is the object of Run's last successful write (or read), whose
	// resourceVersion guards the release. Only Run's goroutine uses it.
	lease *Lease
}

// New validates cfg and returns an Elector. It starts nothing and does
// not contact the server.
func New(cfg Config) (*Elector, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	e := &Elector{cfg: cfg,
		leases: client.For[*Lease](cfg.Client, kube.Leases, client.Options{FieldManager: "kwatch-leader-election"}),
		log:    cfg.Logger.With("lease", cfg.Namespace+"/"+cfg.Name, "identity", cfg.Identity),
	}
	e.m = newMetrics(cfg.Metrics, cfg.Namespace+"/"+cfg.Name)
	return e, nil
}

// State returns where the Elector stands now.
func (e *Elector) State() State {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.state
}

// IsLeader reports whether this Elector holds the Lease: from the
// acquisition until leadership is lost, or, after Run's context ended,
// until the leading function has returned and the Lease is released.
func (e *Elector) IsLeader() bool { return e.State() == Leading }

// Leader returns the holder of the Lease as last observed ("" when
// nobody holds it or it has not been read yet). Another candidate's
// claim may have expired since.
func (e *Elector) Leader() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.obs.rec.holder
}

func (e *Elector) setState(s State) {
	e.mu.Lock()
	e.state = s
	e.mu.Unlock()
	if s == Leading {
		e.m.isLeader.Set(1)
	} else {
		e.m.isLeader.Set(0)
	}
}

// Run campaigns for the Lease and, once it holds it, calls lead with a
// context that is cancelled when leadership ends, and renews the Lease
// while lead runs. It returns after lead has returned:
//   - nil when ctx ended (or lead returned by itself) while leading: the
//     Lease is renewed until lead has returned, then released unless
//     ReleaseOnCancel is false;
//   - nil when ctx ended before the Lease was acquired;
//   - an error wrapping ErrLost when no renew succeeded within
//     RenewDeadline or another holder was seen: lead's context was
//     cancelled at that moment, and the Lease is left to expire.
//
// Run may be called again after it returns, to campaign anew.
func (e *Elector) Run(ctx context.Context, lead func(ctx context.Context)) error {
	if lead == nil {
		return errors.New("leader: Run needs a leading function")
	}
	if !e.running.CompareAndSwap(false, true) {
		return errors.New("leader: Run is already running")
	}
	defer e.running.Store(false)
	e.setState(Candidate)
	acquired, ok := e.campaign(ctx)
	if !ok {
		e.setState(Idle)
		return nil
	}
	e.setState(Leading)
	e.log.Info("started leading")
	return e.leadUntilDone(ctx, lead, acquired)
}

// campaign is the candidate state: one round every retry period (with a
// little jitter, so candidates do not move in step) until a round wins.
// It returns when the winning round started, or false when ctx ended.
func (e *Elector) campaign(ctx context.Context) (time.Time, bool) {
	for {
		start := time.Now()
		rctx, cancel := context.WithTimeout(ctx, e.cfg.RenewDeadline)
		err := e.round(rctx, false)
		cancel()
		if err == nil {
			return start, true
		}
		if ctx.Err() != nil {
			return time.Time{}, false
		}
		if !errors.Is(err, errHeld) {
			e.log.Debug("acquire failed", "error", err)
		}
		// 0.8 to 1 retry period: a release is noticed within one.
		wait := e.cfg.RetryPeriod - time.Duration(rand.Int64N(int64(e.cfg.RetryPeriod)/5+1))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return time.Time{}, false
		case <-t.C:
		}
	}
}

// leadUntilDone is the leading state. lead runs on a goroutine this
// function waits for; the Lease is renewed every retry period. The
// renew deadline runs from the start of the last successful round
// (acquired first): when it passes, or a read shows another holder,
// leadership is lost and lead's context is cancelled at once. When ctx
// ends, lead's context is cancelled too, but the Lease is still renewed
// until lead has returned, and released after.
func (e *Elector) leadUntilDone(ctx context.Context, lead func(ctx context.Context), acquired time.Time) error {
	leadCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan struct{})
	go func() {
		defer close(done)
		lead(leadCtx)
	}()
	deadline := acquired.Add(e.cfg.RenewDeadline)
	lost := time.NewTimer(time.Until(deadline))
	defer lost.Stop()
	next := time.NewTimer(e.cfg.RetryPeriod)
	defer next.Stop()
	renewCtx := context.WithoutCancel(ctx) // renewing goes on while lead winds down
	cancelled := ctx.Done()
	var lostErr error
loop:
	for {
		select {
		case <-cancelled:
			cancelled = nil
			stop()
			continue
		case <-done:
			break loop
		case <-lost.C:
			lostErr = fmt.Errorf("%w: no renew succeeded within the renew deadline %v", ErrLost, e.cfg.RenewDeadline)
			break loop
		case <-next.C:
		}
		if !time.Now().Before(deadline) { // both timers fired: no round can help
			lostErr = fmt.Errorf("%w: no renew succeeded within the renew deadline %v", ErrLost, e.cfg.RenewDeadline)
			break loop
		}
		renewed, err := e.renew(renewCtx, deadline)
		if err != nil {
			lostErr = err
			break loop
		}
		if !renewed.Equal(deadline) {
			deadline = renewed
			lost.Reset(time.Until(deadline))
		}
		next.Reset(e.cfg.RetryPeriod)
	}
	if lostErr != nil {
		e.setState(Lost) // before stop: IsLeader is false once lead's context ends
		stop()
		e.log.Error("stopped leading", "error", lostErr)
		<-done
		return lostErr
	}
	stop()
	<-done
	e.release(renewCtx)
	e.setState(Released)
	return nil
}

// renew is one renew round, bounded by the current renew deadline. It
// returns the deadline after it (moved to a renew deadline past the
// round's start if it renewed), or an error wrapping ErrLost when
// leadership is over: another holder was seen, or the deadline passed.
func (e *Elector) renew(ctx context.Context, deadline time.Time) (time.Time, error) {
	start := time.Now()
	rctx, cancel := context.WithDeadline(ctx, deadline)
	err := e.round(rctx, true)
	cancel()
	switch {
	case err == nil:
		return start.Add(e.cfg.RenewDeadline), nil
	case errors.Is(err, errTaken):
		e.m.renewFailures.Inc()
		return deadline, fmt.Errorf("%w: %w", ErrLost, err)
	case !time.Now().Before(deadline):
		e.m.renewFailures.Inc()
		return deadline, fmt.Errorf("%w: no renew succeeded within the renew deadline %v (last: %w)", ErrLost, e.cfg.RenewDeadline, err)
	}
	e.m.renewFailures.Inc()
	e.log.Warn("renew failed; retrying until the renew deadline", "error", err, "deadline", deadline)
	return deadline, nil
}
