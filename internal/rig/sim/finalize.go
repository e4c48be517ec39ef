package sim

import (
	"bytes"
	stdjson "encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"time"
)

// Deletion that takes time, as the real server's registry does it
// (finalizers, graceful deletion of pods, the garbage collector's finalizers):
//
//   - An object with metadata.finalizers is not removed by a delete: the delete
//     sets deletionTimestamp (now) and deletionGracePeriodSeconds 0, bumps a
//     metadata.generation the kind has, and answers the object (any kind) with
//     200. Once an update or patch leaves it with no finalizers, that write
//     removes it instead (one DELETED event carrying the last stored state) and
//     answers the deleted object.
//   - propagationPolicy Foreground adds the finalizer foregroundDeletion and
//     Orphan (or orphanDependents=true) the finalizer orphan, so the object waits
//     for the garbage collector (kube-controller-manager's; package kwatchtest's
//     option stands in for it). Background removes both.
//   - A pod bound to a node (spec.nodeName set) and not Succeeded or Failed is
//     deleted gracefully: deletionTimestamp is now plus the grace period
//     (gracePeriodSeconds, else spec.terminationGracePeriodSeconds, else 0) and
//     deletionGracePeriodSeconds that period; it stays until a delete with a
//     shorter period (the kubelet's, 0) comes. An unbound or finished pod, or a
//     period of 0, goes at once.
//   - Once deletionTimestamp is set, writes keep it and the grace period, and a
//     write that adds a finalizer is 422 Invalid, worded as the real server.
//
// Namespaces are still removed at once (no namespace controller runs here).

const (
	finalizerForeground = "foregroundDeletion"
	finalizerOrphan     = "orphan"
)

// deletion is the deletion state read from an object's metadata.
type deletion struct {
	timestamp  string // deletionTimestamp; "" when not being deleted
	grace      *int64 // deletionGracePeriodSeconds
	finalizers []string
}

func deletionOf(md map[string]any) deletion {
	var d deletion
	d.timestamp, _ = md["deletionTimestamp"].(string)
	if n, ok := int64Of(md["deletionGracePeriodSeconds"]); ok {
		d.grace = &n
	}
	d.finalizers = stringList(md["finalizers"])
	return d
}

// int64Of reads an integer of a decoded object (json.Number with the
// package's codec; other numeric types from in-process maps).
func int64Of(v any) (int64, bool) {
	switch n := v.(type) {
	case stdjson.Number:
		i, err := n.Int64()
		return i, err == nil
	case float64:
		return int64(n), true
	case int64:
		return n, true
	case int:
		return int64(n), true
	}
	return 0, false
}

func stringList(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// mayBeDeleting reports, cheaply, whether o's metadata could carry a
// deletionTimestamp or finalizers, so ordinary writes skip decoding it.
func mayBeDeleting(o *object) bool {
	if o == nil {
		return false
	}
	meta := o.raw[o.metaOff:o.metaEnd]
	return bytes.Contains(meta, []byte(`"deletionTimestamp"`))
}

// decodeStored returns a stored object as a generic map.
func decodeStored(o *object) (map[string]any, *StatusError) {
	var m map[string]any
	if err := json.Unmarshal(o.raw, &m); err != nil {
		return nil, newStatus(500, "InternalError", "stored object does not decode: "+err.Error(), nil)
	}
	return m, nil
}

// checkDeletingWriteLocked applies the rules of a write to an object being
// deleted: deletionTimestamp and the grace period stay, no finalizer may be
// added, and a write that leaves no finalizer (grace period 0) removes the
// object. It returns the tombstone when the write removed the object.
func (s *Server) checkDeletingWriteLocked(op *writeOp, cur *object) (*object, *StatusError) {
	if op.mark || op.dryRun || !mayBeDeleting(cur) {
		return nil, nil
	}
	old, serr := decodeStored(cur)
	if serr != nil {
		return nil, serr
	}
	oldMD, _ := old["metadata"].(map[string]any)
	was := deletionOf(oldMD)
	if was.timestamp == "" {
		return nil, nil
	}
	md, _ := op.m["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		op.m["metadata"] = md
	}
	md["deletionTimestamp"] = was.timestamp
	if _, ok := md["deletionGracePeriodSeconds"]; !ok && was.grace != nil {
		md["deletionGracePeriodSeconds"] = *was.grace
	}
	now := stringList(md["finalizers"])
	if added := newFinalizers(was.finalizers, now); len(added) > 0 {
		return nil, errInvalid(op.r.info.Group, op.r.info.Kind, op.name, StatusCause{
			Reason: "FieldValueForbidden", Field: "metadata.finalizers",
			Message: fmt.Sprintf("Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers %s", goStringList(added))})
	}
	if len(now) == 0 && (was.grace == nil || *was.grace == 0) {
		return s.store.deleteLocked(op.r, cur), nil
	}
	return nil, nil
}

func newFinalizers(old, now []string) []string {
	had := map[string]bool{}
	for _, f := range old {
		had[f] = true
	}
	var added []string
	for _, f := range now {
		if !had[f] {
			added = append(added, f)
			had[f] = true
		}
	}
	sort.Strings(added)
	return added
}

// goStringList formats as Go's %#v of a []string does.
func goStringList(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = strconv.Quote(s)
	}
	out := "[]string{"
	for i, s := range q {
		if i > 0 {
			out += ", "
		}
		out += s
	}
	return out + "}"
}

// deleteOrMarkLocked deletes cur, or marks it as being deleted when finalizers
// or a grace period keep it. gone says whether the answer is a tombstone.
func (s *Server) deleteOrMarkLocked(r *resource, cur *object, o deleteOptions) (*object, bool, *StatusError) {
	st := s.store
	if o.immediate || r.info.key() == "namespaces" {
		return st.deleteLocked(r, cur), true, nil
	}
	m, serr := decodeStored(cur)
	if serr != nil {
		return nil, false, serr
	}
	md, _ := m["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		m["metadata"] = md
	}
	d := deletionOf(md)
	now := st.clock().UTC()

	graceful, period := false, int64(0)
	if r.info.key() == "pods" {
		switch {
		case d.timestamp != "" && (d.grace == nil || *d.grace == 0):
			// marked with no grace left: the finalizers alone keep it
		case d.timestamp != "":
			if o.grace == nil || *o.grace >= *d.grace {
				return cur, false, nil // graceful deletion pending: nothing changes
			}
			ts, _ := time.Parse(time.RFC3339, d.timestamp)
			ts = ts.Add(time.Duration(*o.grace-*d.grace) * time.Second)
			md["deletionTimestamp"] = formatTime(ts)
			md["deletionGracePeriodSeconds"] = *o.grace
			graceful, period = true, *o.grace
		default:
			period = podGracePeriod(m, o.grace)
			md["deletionTimestamp"] = formatTime(now.Add(time.Duration(period) * time.Second))
			md["deletionGracePeriodSeconds"] = period
			graceful = true
		}
	}
	fins := gcFinalizers(d.finalizers, o.policy)
	if !sameStrings(fins, d.finalizers) {
		if len(fins) == 0 {
			delete(md, "finalizers")
		} else {
			l := make([]any, len(fins))
			for i, f := range fins {
				l[i] = f
			}
			md["finalizers"] = l
		}
	}
	pending := len(fins) > 0
	if !graceful {
		if !pending {
			return st.deleteLocked(r, cur), true, nil
		}
		if ts, err := time.Parse(time.RFC3339, d.timestamp); d.timestamp == "" || err != nil || ts.After(now) {
			md["deletionTimestamp"] = formatTime(now)
		}
		md["deletionGracePeriodSeconds"] = int64(0)
	}
	marked, _, serr := s.writeLocked(writeOp{r: r, ns: cur.namespace, name: cur.name, m: m, update: true,
		mark: true, bumpGeneration: d.timestamp == ""})
	if serr != nil {
		return nil, false, serr
	}
	if graceful && !pending && period == 0 {
		return st.deleteLocked(r, marked), true, nil
	}
	return marked, false, nil
}

// podGracePeriod is the period of a pod's graceful deletion, as the real pod
// strategy's CheckGracefulDelete computes it.
func podGracePeriod(m map[string]any, asked *int64) int64 {
	spec, _ := m["spec"].(map[string]any)
	status, _ := m["status"].(map[string]any)
	var period int64
	if asked != nil {
		period = *asked
	} else if g, ok := int64Of(spec["terminationGracePeriodSeconds"]); ok {
		period = g
	}
	if node, _ := spec["nodeName"].(string); node == "" {
		period = 0
	}
	if phase, _ := status["phase"].(string); phase == "Failed" || phase == "Succeeded" {
		period = 0
	}
	if period < 0 {
		period = 1
	}
	return period
}

// gcFinalizers returns the finalizers after a delete with policy ("" when none
// was asked; "Orphan" for orphanDependents=true), as the real server's
// deletionFinalizersForGarbageCollection does with the Background default.
func gcFinalizers(cur []string, policy string) []string {
	orphan, foreground := false, false
	switch policy {
	case "Orphan":
		orphan = true
	case "Foreground":
		foreground = true
	case "":
		for _, f := range cur {
			orphan = orphan || f == finalizerOrphan
			foreground = foreground || f == finalizerForeground
		}
	}
	out := []string{}
	for _, f := range cur {
		if f != finalizerOrphan && f != finalizerForeground {
			out = append(out, f)
		}
	}
	if orphan {
		out = append(out, finalizerOrphan)
	}
	if foreground {
		out = append(out, finalizerForeground)
	}
	return out
}

func sameStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, s := range a {
		seen[s]++
	}
	for _, s := range b {
		seen[s]--
	}
	for _, n := range seen {
		if n != 0 {
			return false
		}
	}
	return true
}

// writeDeleteAnswer answers a delete: as writeDeleted when the object is gone;
// the object itself (any kind, 200) when finalizers or a grace period keep it.
func (s *Server) writeDeleteAnswer(w http.ResponseWriter, r *http.Request, res *resource, o *object, gone bool) {
	if gone {
		s.writeDeleted(w, r, res, o)
		return
	}
	s.writeObject(w, r, http.StatusOK, o, modeObject)
}

// deleteObjectGone is deleteObject that also says whether the object is gone.
func (s *Server) deleteObjectGone(r *resource, ns, name string, o deleteOptions) (*object, bool, *StatusError) {
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	cur := r.objs[r.objKey(ns, name)]
	if cur == nil {
		return nil, false, errNotFound(r, name)
	}
	if serr := checkDeletePreconditions(r, cur, o); serr != nil {
		return nil, false, serr
	}
	if o.dryRun {
		return cur, true, nil
	}
	out, gone, serr := s.deleteOrMarkLocked(r, cur, o)
	if serr != nil {
		return nil, false, serr
	}
	st.signalLocked()
	return out, gone, nil
}
