package sim

import (
	"fmt"
	"strconv"
)

// The in-process API. Resources are named "pods", "configmaps", "deployments.apps"
// (or any unique plural). Every method is safe for concurrent use and returns once
// the change is committed and visible to lists and watches.

// Create stores a new object given as JSON (kind and apiVersion may be omitted;
// metadata.generateName works). It returns the stored object.
func (s *Server) Create(resource string, obj []byte) (Object, error) {
	r, m, err := s.decodeFor(resource, obj)
	if err != nil {
		return Object{}, err
	}
	name, serr := s.nameFor(r, m)
	if serr != nil {
		return Object{}, serr
	}
	if serr := prepareCreate(r, name, m); serr != nil {
		return Object{}, serr
	}
	o, _, serr := s.write(writeOp{r: r, ns: metaString(m, "namespace"), name: name, m: m, create: true})
	if serr != nil {
		return Object{}, serr
	}
	return toObject(o), nil
}

// Update replaces an existing object given as JSON. A non-empty
// metadata.resourceVersion is a precondition: a stale one fails with 409 Conflict.
func (s *Server) Update(resource string, obj []byte) (Object, error) {
	r, m, err := s.decodeFor(resource, obj)
	if err != nil {
		return Object{}, err
	}
	o, _, serr := s.write(writeOp{r: r, ns: metaString(m, "namespace"), name: metaString(m, "name"), m: m,
		update: true, precondRV: metaString(m, "resourceVersion")})
	if serr != nil {
		return Object{}, serr
	}
	return toObject(o), nil
}

// Patch applies a JSON merge patch to an existing object.
func (s *Server) Patch(resource, namespace, name string, mergePatch []byte) (Object, error) {
	r, err := s.store.lookup(resource)
	if err != nil {
		return Object{}, err
	}
	o, serr := s.patch(patchOp{r: r, ns: namespace, name: name, patch: mergePatch, mediaType: mediaMergePatch})
	if serr != nil {
		return Object{}, serr
	}
	return toObject(o), nil
}

// Delete removes an object at once, whatever its finalizers or grace period (as
// a kubelet's delete with grace period 0 after the finalizers' owners are done),
// and returns the resourceVersion of its deletion.
func (s *Server) Delete(resource, namespace, name string) (uint64, error) {
	r, err := s.store.lookup(resource)
	if err != nil {
		return 0, err
	}
	tomb, serr := s.deleteObject(r, namespace, name, deleteOptions{immediate: true})
	if serr != nil {
		return 0, serr
	}
	return tomb.rv, nil
}

// Get returns the current state of one object; a missing one is a 404 *StatusError.
func (s *Server) Get(resource, namespace, name string) (Object, error) {
	r, err := s.store.lookup(resource)
	if err != nil {
		return Object{}, err
	}
	s.store.mu.RLock()
	o := r.objs[r.objKey(namespace, name)]
	s.store.mu.RUnlock()
	if o == nil {
		return Object{}, errNotFound(r, name)
	}
	return toObject(o), nil
}

// Snapshot returns the resourceVersion and every current object of a resource,
// keyed "namespace/name" (just "name" for cluster-scoped resources): the state an
// informer's store should converge to.
func (s *Server) Snapshot(resource string) (uint64, map[string]Object, error) {
	r, err := s.store.lookup(resource)
	if err != nil {
		return 0, nil, err
	}
	s.store.mu.RLock()
	defer s.store.mu.RUnlock()
	out := make(map[string]Object, len(r.objs))
	for k, o := range r.objs {
		out[k] = toObject(o)
	}
	return s.store.rv, out, nil
}

// PutPod creates or replaces a pod rendered from p (see Pod for the defaults) and
// returns its new resourceVersion. A replaced pod keeps its uid and creation time.
func (s *Server) PutPod(p Pod) (uint64, error) {
	if p.Namespace == "" || p.Name == "" {
		return 0, fmt.Errorf("sim: PutPod needs Namespace and Name (got %q/%q)", p.Namespace, p.Name)
	}
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	rv := s.putPodLocked(p)
	st.signalLocked()
	return rv, nil
}

func (s *Server) putPodLocked(p Pod) uint64 {
	st := s.store
	r := st.resources["pods"]
	q := p.defaults()
	key := r.objKey(q.Namespace, q.Name)
	cur := r.objs[key]
	o := &object{key: key, namespace: q.Namespace, name: q.Name, generation: 1,
		labels: q.Labels, fields: podFields(&q), pod: podSummaryOf(&q)}
	if cur != nil {
		o.uid, o.created = cur.uid, cur.created
	} else {
		o.uid, o.created = st.newUIDLocked(), st.clock()
	}
	enc := encodePod(&q, o.uid, o.created, o.generation)
	s.ensureNamespaceLocked(q.Namespace)
	st.putLocked(r, o, &enc, cur)
	return st.rv
}

// decodeFor resolves a resource and decodes an object for it.
func (s *Server) decodeFor(resource string, obj []byte) (*resource, map[string]any, error) {
	r, err := s.store.lookup(resource)
	if err != nil {
		return nil, nil, err
	}
	m, serr := decodeObject(r, obj)
	if serr != nil {
		return nil, nil, serr
	}
	return r, m, nil
}

// patch applies a patch of the given media type to a current object. A
// metadata.resourceVersion inside a merge patch is a precondition; otherwise a patch
// that races with another writer is retried on the newer object, as the real server does.
// patchOp is one patch of a stored object.
type patchOp struct {
	r         *resource
	ns, name  string
	patch     []byte
	mediaType string
	part      writePart   // what the patch may change; partWhole for in-process patches
	owner     *fieldOwner // who makes a client's patch; nil in process
	dryRun    bool
}

func (s *Server) patch(op patchOp) (*object, *StatusError) {
	r, ns, name, patch, mediaType := op.r, op.ns, op.name, op.patch, op.mediaType
	rules, builtin := rulesFor(r)
	if !builtin {
		rules = nil
	}
	var clientRV string
	if mediaType != mediaJSONPatch {
		var pm map[string]any
		if json.Unmarshal(patch, &pm) == nil {
			clientRV = metaString(pm, "resourceVersion")
		}
	}
	for range 10 {
		cur, serr := s.current(r, ns, name)
		if serr != nil {
			return nil, serr
		}
		var m map[string]any
		if err := json.Unmarshal(cur.raw, &m); err != nil {
			return nil, newStatus(500, "InternalError", "stored object does not decode: "+err.Error(), nil)
		}
		patched, serr := applyPatch(m, patch, mediaType, rules)
		if serr != nil {
			return nil, serr
		}
		precond := strconv.FormatUint(cur.rv, 10)
		if clientRV != "" {
			precond = clientRV
		}
		var owner *fieldOwner
		if op.owner != nil {
			w := *op.owner // each attempt starts from the request's owner
			owner = &w
		}
		o, _, serr := s.write(writeOp{r: r, ns: ns, name: name, m: patched, update: true, precondRV: precond,
			part: op.part, owner: owner, dryRun: op.dryRun})
		if serr != nil && serr.Status.Reason == "Conflict" && clientRV == "" {
			continue
		}
		return o, serr
	}
	return nil, errConflict(r, name)
}

func (s *Server) current(r *resource, ns, name string) (*object, *StatusError) {
	s.store.mu.RLock()
	defer s.store.mu.RUnlock()
	o := r.objs[r.objKey(ns, name)]
	if o == nil {
		return nil, errNotFound(r, name)
	}
	return o, nil
}

func metaString(m map[string]any, field string) string {
	md, _ := m["metadata"].(map[string]any)
	s, _ := md[field].(string)
	return s
}
