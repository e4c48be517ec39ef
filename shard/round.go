package shard

import (
	"context"
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/leader"
	"github.com/kwatch/kwatch/watch"
)

// round is one round of membership, started at start:
//  1. list the ring's Leases and fold them into the view (liveness);
//  2. retarget the gate to the ring of the live members: keys lost under
//     it stop starting at once;
//  3. try the barrier with the adopted versions this list shows. Only
//     this order is safe: the barrier needs this member's own adopted
//     version to have been written before the list it is checked on, so
//     that a member the list does not show (it created its Lease after
//     the list) sees this one in its own first list and waits for it;
//  4. if no reconcile of a lost key is in flight, the write publishes the
//     target's version as adopted, else the version published before;
//  5. renew this member's Lease with it, guarded by its resourceVersion;
//     on success, move the renew deadline to start + RenewDeadline.
//
// A nil error means the Lease was renewed. Errors wrapping ErrFenced end
// the member: the Lease is gone or held by another identity.
func (m *Member) round(ctx context.Context, start time.Time) error {
	page, err := m.leases.List(ctx, m.cfg.Namespace, watch.ListOptions{LabelSelector: RingLabel + "=" + m.cfg.Ring})
	if err != nil {
		return fmt.Errorf("list the ring's leases: %w", err)
	}
	now := time.Now()
	m.view.observeAt(page.Items, now)
	for _, l := range page.Items {
		if l.Name == m.name {
			m.own = l
		}
	}
	target := m.ringOf(m.view.live(m.cfg.Identity, now))

	m.mu.Lock()
	retargeted := m.g.retarget(target)
	if retargeted {
		m.changedAt = now
	}
	settled := time.Now().Before(m.deadline) && m.g.settle(m.view.adopted(now))
	adopt := m.g.published
	if drained(m.cfg.Identity, target, m.inflight) {
		adopt = target
	}
	m.g.attempt(adopt)
	m.mu.Unlock()
	if retargeted {
		m.log.Info("ring changed", "members", target.Members(), "version", target.Version())
	}
	if settled {
		m.m.handovers.Inc()
		m.log.Info("handover done: reconciling the ring's keys", "version", target.Version())
	}
	if retargeted || settled {
		m.notify()
	}

	if err := m.renew(ctx, adopt); err != nil {
		m.mu.Lock()
		m.g.failed()
		m.mu.Unlock()
		return err
	}
	m.mu.Lock()
	m.deadline = start.Add(m.cfg.RenewDeadline)
	published := m.g.published.Version() != adopt.Version()
	m.g.confirm(adopt)
	m.mu.Unlock()
	if published {
		m.notify()
	}
	m.collect(ctx, now)
	return nil
}

// ringOf is the ring of members, reusing the gate's target when the
// members are the same (the usual round): a ring is rebuilt only when
// the membership changed.
func (m *Member) ringOf(members []string) *Ring {
	sorted := slices.Compact(slices.Sorted(slices.Values(members)))
	m.mu.Lock()
	cur := m.g.target
	m.mu.Unlock()
	if cur != nil && slices.Equal(cur.Members(), sorted) {
		return cur
	}
	return NewRing(sorted, m.cfg.VirtualNodes)
}

// renew writes this member's Lease: holder, duration, renewTime and the
// adopted version, guarded by the resourceVersion last seen (a create
// when the member has none yet).
func (m *Member) renew(ctx context.Context, adopt *Ring) error {
	now := metav1.NewMicroTime(time.Now())
	if m.own == nil {
		obj := &leader.Lease{}
		obj.Namespace, obj.Name = m.cfg.Namespace, m.name
		obj.Labels = map[string]string{RingLabel: m.cfg.Ring}
		obj.Annotations = map[string]string{AdoptedAnnotation: adopt.Version()}
		obj.Spec = leader.LeaseSpec{HolderIdentity: new(m.cfg.Identity),
			LeaseDurationSeconds: new(int32(m.cfg.LeaseDuration / time.Second)), AcquireTime: &now, RenewTime: &now}
		wrote, err := m.leases.Create(ctx, obj, client.CreateOptions{})
		if err != nil {
			return fmt.Errorf("create the member's lease: %w", err)
		}
		m.own = wrote
		return nil
	}
	if h := m.own.Spec.HolderIdentity; h != nil && *h != "" && *h != m.cfg.Identity {
		return fmt.Errorf("%w: the lease %s is held by %q", ErrFenced, m.name, *h)
	}
	obj := *m.own
	obj.ManagedFields = nil
	obj.Labels = map[string]string{RingLabel: m.cfg.Ring}
	obj.Annotations = map[string]string{AdoptedAnnotation: adopt.Version()}
	obj.Spec.HolderIdentity = new(m.cfg.Identity)
	obj.Spec.LeaseDurationSeconds = new(int32(m.cfg.LeaseDuration / time.Second))
	obj.Spec.RenewTime = &now
	wrote, err := m.leases.Update(ctx, &obj, client.UpdateOptions{})
	switch {
	case kube.IsNotFound(err):
		return fmt.Errorf("%w: the lease %s was deleted", ErrFenced, m.name)
	case err != nil:
		return fmt.Errorf("renew the member's lease: %w", err)
	}
	m.own = wrote
	return nil
}

// release gives the Lease up once work has stopped: holder "", so the
// other members count this one out at their next round, guarded by the
// resourceVersion of the last write. Bounded by one renew deadline.
func (m *Member) release(ctx context.Context) {
	if m.own == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, m.cfg.RenewDeadline)
	defer cancel()
	obj := *m.own
	obj.ManagedFields = nil
	obj.Spec.HolderIdentity = new("")
	now := metav1.NewMicroTime(time.Now())
	obj.Spec.RenewTime = &now
	if _, err := m.leases.Update(ctx, &obj, client.UpdateOptions{}); err != nil {
		m.log.Warn("release failed; the lease will expire instead", "error", err)
		return
	}
	m.log.Info("released the lease")
}

// collect deletes, best effort, Leases of other members that have been
// released or dead for two lease durations by this member's clock, so
// restarted replicas (new identities) do not pile up Leases. Each delete
// is guarded by the resourceVersion observed.
func (m *Member) collect(ctx context.Context, now time.Time) {
	for name, o := range m.view.leases {
		if name == m.name || now.Before(o.seen.Add(2*max(o.duration, m.cfg.LeaseDuration))) {
			continue
		}
		err := m.leases.Delete(ctx, m.cfg.Namespace, name, client.DeleteOptions{
			Preconditions: client.Preconditions{ResourceVersion: o.rv}})
		if err != nil && !kube.IsNotFound(err) && !kube.IsConflict(err) {
			m.log.Debug("could not delete a dead member's lease", "lease", name, "error", err)
		}
	}
}
