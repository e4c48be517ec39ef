package leader

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/kube"
)

// Why a round ended without a write.
var (
	// errHeld: another candidate holds the Lease and its claim has not
	// expired by this candidate's clock.
	errHeld = errors.New("leader: the lease is held by another candidate")
	// errTaken: the leader read the Lease and found another holder, or
	// no Lease at all.
	errTaken = errors.New("leader: another candidate holds the lease")
)

// round is one round of the election: read the Lease, decide (decideAt),
// and write what was decided, guarded by the resourceVersion read (a
// create when there is no Lease). A write refused with a conflict, or a
// create refused because the Lease now exists, means someone else wrote
// between the read and the write: the round is lost and nothing is
// overwritten. nil means the write succeeded: this candidate holds the
// Lease from the start of the round for a renew deadline.
func (e *Elector) round(ctx context.Context, leading bool) error {
	ns, name, id := e.cfg.Namespace, e.cfg.Name, e.cfg.Identity
	cur, err := e.leases.Get(ctx, ns, name, client.GetOptions{})
	switch {
	case kube.IsNotFound(err):
		e.observe(nil, time.Now())
	case err != nil:
		return fmt.Errorf("read the lease: %w", err)
	default:
		e.observe(cur, time.Now())
	}
	obs := e.observed()
	switch {
	case leading && !obs.exists:
		// Someone deleted the Lease; another candidate may have created
		// it again already. Either way this claim is gone.
		return fmt.Errorf("%w: the lease was deleted", errTaken)
	case leading && obs.rec.holder != id:
		return fmt.Errorf("%w: %q", errTaken, obs.rec.holder)
	}
	rec, v := decideAt(obs, contender{identity: id, duration: e.cfg.LeaseDuration, margin: e.cfg.Margin(), wrote: e.wrote}, time.Now())
	if v == held {
		return fmt.Errorf("%w: %q until %v", errHeld, obs.rec.holder, obs.expiry())
	}
	var wrote *Lease
	if !obs.exists {
		obj := &Lease{Spec: rec.spec()}
		obj.Namespace, obj.Name = ns, name
		wrote, err = e.leases.Create(ctx, obj, client.CreateOptions{})
	} else {
		obj := *cur
		obj.ManagedFields = nil // unchanged either way; not worth the bytes
		obj.Spec = rec.spec()
		wrote, err = e.leases.Update(ctx, &obj, client.UpdateOptions{})
	}
	if err != nil {
		if kube.IsConflict(err) || kube.IsAlreadyExists(err) {
			return fmt.Errorf("round lost: the lease was written by someone else since it was read: %w", err)
		}
		return fmt.Errorf("write the lease: %w", err)
	}
	e.observe(wrote, time.Now())
	e.wrote = true
	return nil
}

// release gives the Lease up as client-go does: holderIdentity "",
// leaseDurationSeconds 1, fresh times, guarded by the resourceVersion of
// this Elector's last write, so a Lease someone else has written since is
// left alone. ctx is not cancelled: release runs after Run's context
// ended, bounded by one renew deadline.
func (e *Elector) release(ctx context.Context) {
	if !*e.cfg.ReleaseOnCancel || e.lease == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, e.cfg.RenewDeadline)
	defer cancel()
	obj := *e.lease
	obj.ManagedFields = nil
	obj.Spec = releasedAt(e.observed().rec, time.Now()).spec()
	wrote, err := e.leases.Update(ctx, &obj, client.UpdateOptions{})
	if err != nil {
		e.log.Warn("release failed; the lease will expire instead", "error", err)
		return
	}
	e.observe(wrote, time.Now())
	e.log.Info("released the lease")
}

// observe records a read or write of the Lease (nil: there is none) at
// now, counting a change of holder.
func (e *Elector) observe(l *Lease, now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if l == nil {
		e.obs = observation{}
		e.lease = nil
		return
	}
	rec := recordOf(l.Spec)
	if e.obs.exists && rec.holder != "" && rec.holder != e.obs.rec.holder {
		e.m.transitions.Inc()
	}
	e.obs = e.obs.observeAt(rec, l.ResourceVersion, now)
	e.lease = l
}

func (e *Elector) observed() observation {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.obs
}
