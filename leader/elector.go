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
	leases  *client.Client[*Lease]
	log     *slog.Logger
	m       electorMetrics
	running atomic.Bool

	mu    sync.Mutex
	state State       // guarded by mu
	obs   observation // what Run last read or wrote; guarded by mu, written only by Run
	// term is the current leadership's, or the last one's; nil before the
	// first. Guarded by mu, set only by Run.
	term *Term
	// lease is the object of Run's last successful write (or read), whose
	// resourceVersion guards the release. Only Run's goroutine uses it.
	lease *Lease
	// wrote is true once a round of this Elector wrote the Lease: a
	// record naming its identity is then its own, not a previous
	// process's (decideAt). Only Run's goroutine uses it.
	wrote bool
}

// New validates cfg and returns an Elector. It starts nothing and does
// not contact the server.
func New(cfg Config) (*Elector, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	e := &Elector{cfg: cfg,
		leases: client.For(cfg.Client, kube.Typed[*Lease](kube.Leases), client.Options{FieldManager: "kwatch-leader-election"}),
		log:    cfg.Logger.With("lease", cfg.Namespace+"/"+cfg.Name, "identity", cfg.Identity),
	}
	e.m = newMetrics(cfg.Metrics, cfg.Namespace+"/"+cfg.Name)
	return e, nil
}

// State returns where the Elector stands now. Leadership ends with its
// term, by the clock, even before Run's goroutine has noticed.
func (e *Elector) State() State {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.state == Leading && e.term != nil {
		if _, ok := e.term.Until(); !ok {
			if errors.Is(context.Cause(e.term.Context()), errReleased) {
				return Released
			}
			return Lost
		}
	}
	return e.state
}

// IsLeader reports whether this Elector holds the Lease: from the
// acquisition until leadership is lost, or, after Run's context ended,
// until the leading function has returned and the Lease is released.
func (e *Elector) IsLeader() bool { return e.State() == Leading }

// Term is the term of the current leadership (the last one's after it
// ended; nil before the first). Its Until says whether this Elector may
// act now by the local clock, whatever Run's goroutine is doing, and its
// Context is cancelled at the renew deadline: the answer package
// controller's write fence and reconciles rely on (doc.go).
func (e *Elector) Term() *Term {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.term
}

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
// function waits for; the Lease is renewed every retry period. The term
// (term.go) runs from the start of the last successful round (acquired
// first) for a renew deadline: when it passes, or a read shows another
// holder, leadership is lost and lead's context is cancelled at once,
// by the term's timer, whatever this goroutine is doing. When ctx ends,
// lead's context is cancelled too, but the Lease is still renewed until
// lead has returned, and released after (the term ends first).
func (e *Elector) leadUntilDone(ctx context.Context, lead func(ctx context.Context), acquired time.Time) error {
	term := NewTerm(acquired.Add(e.cfg.RenewDeadline))
	e.mu.Lock()
	e.term = term
	e.mu.Unlock()
	defer term.End(errReleased) // whatever ends leadership ends the term
	leadCtx, stop := context.WithCancel(ctx)
	defer stop()
	defer context.AfterFunc(term.Context(), stop)()
	done := make(chan struct{})
	go func() {
		defer close(done)
		lead(leadCtx)
	}()
	next := time.NewTimer(e.cfg.RetryPeriod)
	defer next.Stop()
	renewCtx := context.WithoutCancel(ctx) // renewing goes on while lead winds down
	cancelled := ctx.Done()
	lostErr := func() error {
		for {
			select {
			case <-cancelled:
				cancelled = nil
				stop()
				continue
			case <-done:
				if _, ok := term.Until(); !ok { // the deadline passed first, maybe unseen
					return fmt.Errorf("%w: no renew succeeded within the renew deadline %v", ErrLost, e.cfg.RenewDeadline)
				}
				return nil
			case <-term.Context().Done():
				return fmt.Errorf("%w: no renew succeeded within the renew deadline %v", ErrLost, e.cfg.RenewDeadline)
			case <-next.C:
			}
			if err := e.renew(renewCtx, term); err != nil {
				return err
			}
			next.Reset(e.cfg.RetryPeriod)
		}
	}()
	if lostErr != nil {
		term.End(lostErr)
		e.setState(Lost) // before stop: IsLeader is false once lead's context ends
		stop()
		e.log.Error("stopped leading", "error", lostErr)
		<-done
		return lostErr
	}
	stop()
	<-done
	term.End(errReleased) // before the release: nothing may act once another can lead
	term.AwaitMargin(e.cfg.Margin(), e.log)
	e.release(renewCtx)
	e.setState(Released)
	return nil
}

// errReleased ends a term given up on purpose: Run's context ended or
// the leading function returned.
var errReleased = errors.New("leader: leadership released")

// renew is one renew round, bounded by the term's deadline. It extends
// the term to a renew deadline past the round's start if it renewed,
// and returns an error wrapping ErrLost when leadership is over: another
// holder was seen, or the deadline passed (a renew that succeeds after
// it does not count: the term is over for good).
func (e *Elector) renew(ctx context.Context, term *Term) error {
	start := time.Now()
	deadline, ok := term.Until()
	if !ok {
		return fmt.Errorf("%w: no renew succeeded within the renew deadline %v", ErrLost, e.cfg.RenewDeadline)
	}
	rctx, cancel := context.WithDeadline(ctx, deadline)
	err := e.round(rctx, true)
	cancel()
	switch {
	case err == nil:
		if term.Extend(start.Add(e.cfg.RenewDeadline)) {
			return nil
		}
		e.m.renewFailures.Inc()
		return fmt.Errorf("%w: the renew came back after the renew deadline %v", ErrLost, e.cfg.RenewDeadline)
	case errors.Is(err, errTaken):
		e.m.renewFailures.Inc()
		return fmt.Errorf("%w: %w", ErrLost, err)
	}
	e.m.renewFailures.Inc()
	if _, ok := term.Until(); !ok {
		return fmt.Errorf("%w: no renew succeeded within the renew deadline %v (last: %w)", ErrLost, e.cfg.RenewDeadline, err)
	}
	e.log.Warn("renew failed; retrying until the renew deadline", "error", err, "deadline", deadline)
	return nil
}
