package sim

import (
	"bytes"
	"context"
)

// The garbage collector's part, which kube-controller-manager does beside a real
// API server (the API server alone only stores ownerReferences and adds the
// foregroundDeletion and orphan finalizers on delete). CollectGarbage runs it
// for tests that want cascading deletion:
//
//   - Background: a dependent whose owners (metadata.ownerReferences, by uid)
//     are all gone is deleted, as a client's delete with no options would be
//     (its own finalizers and a pod's grace period still apply); one with some
//     owners left loses the references to the missing ones.
//   - Foreground: the dependents of an owner with the foregroundDeletion
//     finalizer are deleted (in the foreground too when they have dependents of
//     their own); once no object references it with
//     blockOwnerDeletion: true, the finalizer is removed (which removes the owner
//     when it was the last).
//   - Orphan: the dependents of an owner with the orphan finalizer lose their
//     references to it, then the finalizer is removed.
//
// Each pass reads every object, so it suits the tests' small clusters, not a
// benchmark's 100,000 pods.

// CollectGarbage collects after every change until ctx ends, then returns nil.
func (s *Server) CollectGarbage(ctx context.Context) error {
	for {
		s.store.mu.RLock()
		wait := s.store.notify
		s.store.mu.RUnlock()
		s.collectOnce()
		select {
		case <-ctx.Done():
			return nil
		case <-wait:
		}
	}
}

// gcObject is one object a pass looks at, decoded.
type gcObject struct {
	r    *resource
	o    *object
	m    map[string]any
	md   map[string]any
	refs []map[string]any // ownerReferences
	del  deletion
}

func (g *gcObject) hasFinalizer(f string) bool {
	for _, x := range g.del.finalizers {
		if x == f {
			return true
		}
	}
	return false
}

// collectOnce does one pass: every action whose condition holds now.
func (s *Server) collectOnce() {
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	byUID := map[string]*gcObject{}
	var dependents []*gcObject
	for _, r := range st.ordered {
		for _, o := range r.objs {
			meta := o.raw[o.metaOff:o.metaEnd]
			owned := bytes.Contains(meta, []byte(`"ownerReferences"`))
			if !owned && !bytes.Contains(meta, []byte(`"finalizers"`)) {
				byUID[o.uid] = &gcObject{r: r, o: o}
				continue
			}
			g, ok := decodeGC(r, o)
			if !ok {
				continue
			}
			byUID[o.uid] = g
			if len(g.refs) > 0 {
				dependents = append(dependents, g)
			}
		}
	}
	changed := false
	blocking := map[string]bool{} // owners some remaining dependent blocks
	referenced := map[string]bool{}
	owners := map[string]bool{} // objects some dependent references
	for _, d := range dependents {
		for _, ref := range d.refs {
			uid, _ := ref["uid"].(string)
			owners[uid] = true
		}
	}
	for _, d := range dependents {
		changed = s.collectDependentLocked(d, byUID, owners[d.o.uid], blocking, referenced) || changed
	}
	for uid, g := range byUID {
		if g.m == nil || g.del.timestamp == "" {
			continue
		}
		var fins []any
		for _, f := range g.del.finalizers {
			if (f == finalizerForeground && !blocking[uid]) || (f == finalizerOrphan && !referenced[uid]) {
				continue
			}
			fins = append(fins, f)
		}
		if len(fins) == len(g.del.finalizers) {
			continue
		}
		if len(fins) == 0 {
			delete(g.md, "finalizers")
		} else {
			g.md["finalizers"] = fins
		}
		changed = s.gcWriteLocked(g) || changed
	}
	if changed {
		st.signalLocked()
	}
}

// gcWriteLocked writes g's changed metadata back; false when refused.
func (s *Server) gcWriteLocked(g *gcObject) bool {
	_, _, serr := s.writeLocked(writeOp{r: g.r, ns: g.o.namespace, name: g.o.name, m: g.m, update: true})
	return serr == nil
}

func decodeGC(r *resource, o *object) (*gcObject, bool) {
	m, serr := decodeStored(o)
	if serr != nil {
		return nil, false
	}
	md, _ := m["metadata"].(map[string]any)
	if md == nil {
		return nil, false
	}
	g := &gcObject{r: r, o: o, m: m, md: md, del: deletionOf(md)}
	refs, _ := md["ownerReferences"].([]any)
	for _, x := range refs {
		if ref, ok := x.(map[string]any); ok {
			g.refs = append(g.refs, ref)
		}
	}
	return g, true
}

// collectDependentLocked deletes d when no owner of it is left that is not
// being deleted in the foreground (and one is, or one is gone), or else drops
// its references to owners that are gone, orphan it or are being deleted in the
// foreground; it records which owners d still references, and blocks.
func (s *Server) collectDependentLocked(d *gcObject, byUID map[string]*gcObject, isOwner bool, blocking, referenced map[string]bool) bool {
	var solid, fg []map[string]any
	missing, orphaned := false, false
	for _, ref := range d.refs {
		uid, _ := ref["uid"].(string)
		switch owner := byUID[uid]; {
		case owner == nil:
			missing = true
		case owner.del.timestamp != "" && owner.hasFinalizer(finalizerOrphan):
			orphaned = true
		case owner.del.timestamp != "" && owner.hasFinalizer(finalizerForeground):
			fg = append(fg, ref)
		default:
			solid = append(solid, ref)
		}
	}
	remaining, deleteIt := solid, false
	if len(solid) == 0 && (len(fg) > 0 || missing) {
		remaining, deleteIt = fg, true
	}
	for _, ref := range remaining {
		uid, _ := ref["uid"].(string)
		referenced[uid] = true
		if b, _ := ref["blockOwnerDeletion"].(bool); b {
			blocking[uid] = true
		}
	}
	switch {
	case d.del.timestamp != "":
		for _, ref := range fg { // being deleted already: it blocks until it is gone
			uid, _ := ref["uid"].(string)
			if b, _ := ref["blockOwnerDeletion"].(bool); b {
				blocking[uid] = true
			}
		}
		return false
	case deleteIt:
		// As the real collector: a dependent of an owner deleted in the
		// foreground that has dependents of its own goes in the foreground too.
		opts := deleteOptions{}
		if len(fg) > 0 && isOwner {
			opts.policy = "Foreground"
		}
		_, _, serr := s.deleteOrMarkLocked(d.r, d.o, opts)
		return serr == nil
	case !missing && !orphaned && len(fg) == 0:
		return false
	}
	if len(solid) == 0 {
		delete(d.md, "ownerReferences")
	} else {
		keep := make([]any, len(solid))
		for i, ref := range solid {
			keep[i] = ref
		}
		d.md["ownerReferences"] = keep
	}
	return s.gcWriteLocked(d)
}
