package sim

import (
	"bytes"
	"hash/fnv"
	"strconv"
)

// Object is one stored object as the in-process API returns it: a value, safe to
// keep and share. The zero value means no object.
type Object struct {
	Namespace       string
	Name            string
	UID             string
	ResourceVersion uint64
	// JSON is the exact body the server serves; it is shared, so do not modify it.
	JSON []byte
}

func toObject(o *object) Object {
	return Object{Namespace: o.namespace, Name: o.name, UID: o.uid, ResourceVersion: o.rv, JSON: o.raw}
}

// writeOp is one create or update of a generic (JSON) object.
type writeOp struct {
	r        *resource
	ns, name string
	m        map[string]any // the decoded object; its metadata is completed in place
	create   bool           // the object must not exist
	update   bool           // the object must exist
	// precondRV, when not empty, must equal the current resourceVersion (409 otherwise).
	precondRV string
	dryRun    bool
	part      writePart // what the write may change; partWhole for in-process writes
	// owner, for a client's write, is who makes it: the write records its
	// managedFields (see managedfields.go) and is validated (validate.go). Nil for
	// in-process writes, which keep the stored managedFields when m has none.
	owner *fieldOwner
	// tracked says m's managedFields are final already (a server-side apply):
	// trackedFields, which a write of the status alone keeps too.
	tracked       bool
	trackedFields any
	// mark is a delete's own write of deletionTimestamp (finalize.go), which the
	// rules for writes to an object being deleted do not apply to;
	// bumpGeneration bumps metadata.generation, as the first mark does.
	mark, bumpGeneration bool
}

// write validates and commits op, returning the stored object and whether
// it was created. A client's write is first admitted by the webhooks
// (admitWrite).
func (s *Server) write(op writeOp) (*object, bool, *StatusError) {
	var o *object
	var created bool
	var serr *StatusError
	if op.owner != nil && op.owner.adm != nil && !op.mark && s.webhooksConfigured() {
		o, created, serr = s.admitWrite(op)
	} else {
		o, created, serr = s.commitWrite(op)
	}
	if serr == nil && !op.dryRun && o != nil && op.r.info.key() == crdResource {
		s.crdWritten(o) // crd.go
	}
	return o, created, serr
}

// commitWrite validates and commits op.
func (s *Server) commitWrite(op writeOp) (*object, bool, *StatusError) {
	st := s.store
	st.mu.Lock()
	defer st.mu.Unlock()
	o, created, err := s.writeLocked(op)
	if err == nil && !op.dryRun {
		st.signalLocked()
	}
	return o, created, err
}

func (s *Server) writeLocked(op writeOp) (*object, bool, *StatusError) {
	st, r := s.store, op.r
	if r.info.Namespaced && op.ns == "" {
		return nil, false, errBadRequest("the namespace of the object must be set")
	}
	if !r.info.Namespaced {
		op.ns = ""
	}
	key := r.objKey(op.ns, op.name)
	cur := r.objs[key]
	if op.owner != nil && op.create {
		if serr := validateObject(r, op.m, op.name, true); serr != nil {
			return nil, false, serr
		}
	}
	if serr := op.check(cur); serr != nil {
		return nil, false, serr
	}
	m, serr := applyPart(r, op.part, op.m, cur)
	if serr == nil && r.info.key() == "secrets" {
		serr = normalizeSecret(m)
	}
	if serr != nil {
		return nil, false, serr
	}
	op.m = m
	if tomb, serr := s.checkDeletingWriteLocked(&op, cur); serr != nil || tomb != nil {
		return tomb, false, serr // refused, or the write removed the last finalizer
	}
	if serr := s.trackLocked(&op, cur); serr != nil {
		return nil, false, serr
	}
	md, _ := op.m["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		op.m["metadata"] = md
	}
	o := &object{key: key, namespace: op.ns, name: op.name, generation: 1}
	if cur != nil {
		o.uid, o.created, o.generation = cur.uid, cur.created, cur.generation
	} else {
		o.uid, o.created = st.newUIDLocked(), st.clock()
	}
	specJSON, _ := json.Marshal(op.m["spec"])
	if r.info.key() == "deployments.apps" {
		// The real deployment strategy bumps generation on annotation changes
		// too (they once carried rollbacks): write/generation-on-spec-changes-only.
		ann, _ := json.Marshal(md["annotations"])
		specJSON = append(specJSON, ann...)
	}
	o.specSum = hash64(specJSON)
	if cur != nil && (cur.specSum != o.specSum || op.bumpGeneration) {
		o.generation++
	}
	s.completeMeta(r, o, md)
	enc, err := encodeGeneric(&r.info, op.m)
	if err != nil {
		return nil, false, errBadRequest("cannot encode object: " + err.Error())
	}
	o.labels = stringMap(md["labels"])
	o.fields = fieldsOf(r, op.m, op.ns, op.name)
	if r.info.key() == "pods" {
		o.pod = podSummaryFromMap(op.m)
	}
	if cur != nil && sameBody(cur, &enc) {
		return cur, false, nil // a no-op update keeps the resourceVersion, as the real server does
	}
	if op.dryRun {
		rv := st.rv
		if cur != nil {
			rv = cur.rv
		}
		enc.commit(o, rv)
		return o, cur == nil, nil
	}
	if r.info.Namespaced {
		s.ensureNamespaceLocked(op.ns)
	}
	st.putLocked(r, o, &enc, cur)
	return o, cur == nil, nil
}

// check applies the existence and resourceVersion preconditions to the current object.
func (op *writeOp) check(cur *object) *StatusError {
	switch {
	case op.create && cur != nil:
		return errAlreadyExists(op.r, op.name)
	case op.update && cur == nil:
		return errNotFound(op.r, op.name)
	case op.precondRV != "" && cur != nil && op.precondRV != strconv.FormatUint(cur.rv, 10):
		return errConflict(op.r, op.name)
	}
	return nil
}

// completeMeta sets the server-owned metadata fields.
func (s *Server) completeMeta(r *resource, o *object, md map[string]any) {
	md["name"] = o.name
	if r.info.Namespaced {
		md["namespace"] = o.namespace
	} else {
		delete(md, "namespace")
	}
	md["uid"] = o.uid
	md["creationTimestamp"] = formatTime(o.created)
	delete(md, "resourceVersion")
	delete(md, "selfLink")
	if r.info.key() == "pods" || r.info.Group != "" {
		md["generation"] = o.generation
	}
	if r.info.key() == "namespaces" {
		lbl, _ := md["labels"].(map[string]any)
		if lbl == nil {
			lbl = map[string]any{}
			md["labels"] = lbl
		}
		lbl["kubernetes.io/metadata.name"] = o.name
	}
}

// sameBody reports whether enc encodes the same object as cur apart from its RV.
func sameBody(cur *object, enc *encoded) bool {
	return enc.rvAt == cur.rvOff && bytes.Equal(enc.buf[:enc.rvAt], cur.raw[:cur.rvOff]) &&
		bytes.Equal(enc.buf[enc.rvAt:], cur.raw[cur.rvOff+cur.rvLen:])
}

func hash64(b []byte) uint64 {
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}

// ensureNamespaceLocked creates namespace ns (with its own event) if it does not exist.
func (s *Server) ensureNamespaceLocked(ns string) {
	r := s.store.resources["namespaces"]
	if r == nil || r.objs[ns] != nil {
		return
	}
	m := map[string]any{
		"metadata": map[string]any{"name": ns},
		"spec":     map[string]any{"finalizers": []any{"kubernetes"}},
		"status":   map[string]any{"phase": "Active"},
	}
	_, _, _ = s.writeLocked(writeOp{r: r, name: ns, m: m, create: true})
}

// EnsureNamespace creates namespace ns if it does not exist.
func (s *Server) EnsureNamespace(ns string) error {
	if ns == "" {
		return errBadRequest("namespace name must not be empty")
	}
	s.store.mu.Lock()
	defer s.store.mu.Unlock()
	s.ensureNamespaceLocked(ns)
	s.store.signalLocked()
	return nil
}

// deleteObject removes an object, or marks it as being deleted when finalizers or
// a pod's grace period keep it (finalize.go), honouring the uid and
// resourceVersion preconditions of o, and returns its final or marked state. A
// dry run returns the object as it is and changes nothing.
func (s *Server) deleteObject(r *resource, ns, name string, o deleteOptions) (*object, *StatusError) {
	out, _, serr := s.deleteObjectGone(r, ns, name, o) // finalize.go
	return out, serr
}

// decodeObject parses a request body into a generic object, checking its kind and
// apiVersion against the resource when they are set.
func decodeObject(r *resource, body []byte) (map[string]any, *StatusError) {
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, errBadRequest("the body of the request could not be decoded as a JSON object: " + err.Error())
	}
	if m == nil {
		return nil, errBadRequest("the body of the request must be a JSON object")
	}
	if v, ok := m["apiVersion"].(string); ok && v != "" && v != r.info.apiVersion() {
		return nil, errBadRequest("the API version in the data (" + v + ") does not match the expected API version (" + r.info.apiVersion() + ")")
	}
	if v, ok := m["kind"].(string); ok && v != "" && v != r.info.Kind {
		return nil, errBadRequest("the kind in the data (" + v + ") does not match the expected kind (" + r.info.Kind + ")")
	}
	if md, ok := m["metadata"]; ok && md != nil {
		if _, isMap := md.(map[string]any); !isMap {
			return nil, errBadRequest("metadata must be a JSON object")
		}
	}
	return m, nil
}

// nameFor resolves the name of a created object, generating one from generateName.
func (s *Server) nameFor(r *resource, m map[string]any) (string, *StatusError) {
	md, _ := m["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	if name != "" {
		return name, nil
	}
	if gen, _ := md["generateName"].(string); gen != "" {
		s.store.mu.Lock()
		suffix := make([]byte, 5)
		const alphabet = "bcdfghjklmnpqrstvwxz2456789"
		for i := range suffix {
			suffix[i] = alphabet[s.store.rng.IntN(len(alphabet))]
		}
		s.store.mu.Unlock()
		return gen + string(suffix), nil
	}
	return "", errInvalid(r.info.Group, r.info.Kind, "", StatusCause{
		Reason: "FieldValueRequired", Message: "Required value: name or generateName is required", Field: "metadata.name"})
}
