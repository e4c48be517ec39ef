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
	page, err := m.leases.List(ctx, kube.Scope{Namespace: m.cfg.Namespace, LabelSelector: RingLabel + "=" + m.cfg.Ring}, watch.ListOptions{})
	if err != nil {
		return fmt.Errorf("list the ring's leases: %w", err)
	}
	now := time.Now()
	m.view.observeAt(page.Items, now)
	for _, l := range page.Items {
		if l.Name == m.name {
			m.own = l
			m.inheritAt(l, now)
		}
	}
	target := m.ringOf(m.view.live(m.cfg.Identity, now))

	m.mu.Lock()
	retargeted := m.g.retarget(target)
	if retargeted {
		m.changedAt = now
	}
	settled := m.liveLocked() && !now.Before(m.inherited) && m.g.settle(m.view.adopted(now))
	adopt := m.g.published
	if drained(m.cfg.Identity, target, m.heldLocked(now)) {
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
	if !m.extendLocked(start.Add(m.cfg.RenewDeadline)) {
		m.mu.Unlock()
		return fmt.Errorf("%w: the renew came back after the renew deadline %v", ErrFenced, m.cfg.RenewDeadline)
	}
	published := m.g.published.Version() != adopt.Version()
	m.g.confirm(adopt)
	m.mu.Unlock()
	if published {
		m.notify()
	}
	m.collect(ctx, now)
	return nil
}

// extendLocked moves the member's renew deadline to d after a
// successful renew, starting its term at the first. It reports false
// when the term had ended already (its deadline passed, or a fence): a
// late renew does not revive it. The caller holds mu.
func (m *Member) extendLocked(d time.Time) bool {
	if m.term == nil {
		if m.g.fenced {
			return false
		}
		m.term = leader.NewTerm(d)
		return true
	}
	return m.term.Extend(d)
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
		m.own, m.held = wrote, true
		return nil
	}
	if err := m.stillOurs(); err != nil {
		return err
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
	m.own, m.held = wrote, true
	return nil
}

// inheritAt notes, at the member's first sight of its own Lease l at now,
// a Lease that names this identity but that this run has not written: a
// previous process with the same identity held it, and may have died
// with a write on its way, which lands within the margin of its death
// (before this process started, so before now). No barrier passes, and
// so no key starts here, until the margin after now. A released Lease
// (holder "") needs no wait: a member releases only after the margin
// after its last cut (Run).
func (m *Member) inheritAt(l *leader.Lease, now time.Time) {
	if m.held || m.sawOwn {
		return
	}
	m.sawOwn = true
	if h := l.Spec.HolderIdentity; h != nil && *h == m.cfg.Identity {
		m.inherited = now.Add(m.cfg.Margin())
		m.log.Info("the lease names this identity from a previous process: waiting the margin before taking keys",
			"wait", m.cfg.Margin())
	}
}

// stillOurs reports, wrapping ErrFenced, a Lease of this member's name
// that says someone else holds it. Once this member has written it, that
// includes holder "": someone released it under the member (a hand
// edit, or a twin process with the same identity stopping), and the
// others count the member out at once and may pass a barrier without
// it, so taking the Lease back would let two members run one key. Before
// its first write, a released Lease is this identity's previous process
// having stopped cleanly, and is taken over.
func (m *Member) stillOurs() error {
	h := ""
	if p := m.own.Spec.HolderIdentity; p != nil {
		h = *p
	}
	switch {
	case h == m.cfg.Identity:
		return nil
	case h != "":
		return fmt.Errorf("%w: the lease %s is held by %q", ErrFenced, m.name, h)
	case m.held:
		return fmt.Errorf("%w: the lease %s was released by someone else", ErrFenced, m.name)
	}
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
