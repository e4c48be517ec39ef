package sim

import (
	"mime"
	"net/http"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// The HTTP handlers of writes: create (POST), update (PUT), patch and apply
// (PATCH), delete and delete of a collection (DELETE). Each reads its options
// (validate.go, delete.go), names its field manager and commits through write,
// patch, apply or deleteObject.

// ownerFor is who makes a client's write to t: fieldManager, or the manager the
// User-Agent names, and what the write may own.
func ownerFor(req *http.Request, t target, fieldManager string) *fieldOwner {
	w := &fieldOwner{manager: managerName(fieldManager, req.UserAgent()), adm: newAdmissionCtx(req, fieldManager)}
	switch t.sub {
	case "status":
		w.subresource, w.only = "status", "status"
	case "scale":
		w.subresource = "scale"
	default:
		if t.r.info.StatusSubresource {
			w.ignore = fieldpath.NewSet(fieldpath.MakePathOrDie("status"))
		}
	}
	return w
}

func (s *Server) serveCreate(w http.ResponseWriter, r *http.Request, t target) {
	if t.name != "" || (t.r.info.Namespaced && t.ns == "") {
		writeStatus(w, errMethodNotAllowed())
		return
	}
	if s.applyRequestFaults(w, r, t.r, verbCreate) {
		return
	}
	opts, serr := parseWriteOptions(r.URL.Query(), "Create", false)
	var m map[string]any
	if serr == nil {
		m, serr = s.decodeRequest(r, t.r)
	}
	if serr == nil {
		if ns := metaString(m, "namespace"); ns != "" && ns != t.ns && t.r.info.Namespaced {
			serr = errBadRequest("the namespace of the provided object does not match the namespace sent on the request")
		}
	}
	var name string
	if serr == nil {
		name, serr = s.nameFor(t.r, m)
	}
	owner := ownerFor(r, t, opts.fieldManager)
	if serr == nil {
		if t.r.info.key() == "namespaces" && lookupPath(m, "spec.finalizers") == "" {
			// The finalizer the server adds is nobody's.
			owner.ignore.Insert(fieldpath.MakePathOrDie("spec", "finalizers"))
		}
		serr = prepareCreate(t.r, name, m)
	}
	if serr != nil {
		writeStatus(w, serr)
		return
	}
	o, _, serr := s.write(writeOp{r: t.r, ns: t.ns, name: name, m: m, create: true, dryRun: opts.dryRun, owner: owner})
	if serr != nil {
		writeStatus(w, serr)
		return
	}
	if opts.dryRun {
		o = withoutRV(o)
	}
	owner.adm.writeWarnings(w)
	s.writeObject(w, r, http.StatusCreated, o, modeObject)
}

func (s *Server) serveUpdate(w http.ResponseWriter, r *http.Request, t target) {
	if t.name == "" {
		writeStatus(w, errMethodNotAllowed())
		return
	}
	if s.applyRequestFaults(w, r, t.r, verbUpdate) {
		return
	}
	opts, serr := parseWriteOptions(r.URL.Query(), "Update", false)
	var m map[string]any
	if serr == nil {
		m, serr = s.decodeRequest(r, t.r)
	}
	if serr == nil {
		if n := metaString(m, "name"); n != "" && n != t.name {
			serr = errBadRequest("the name of the object (" + n + ") does not match the name on the URL (" + t.name + ")")
		}
	}
	if serr != nil {
		writeStatus(w, serr)
		return
	}
	owner := ownerFor(r, t, opts.fieldManager)
	o, _, serr := s.write(writeOp{r: t.r, ns: t.ns, name: t.name, m: m, update: true, part: t.part(),
		precondRV: metaString(m, "resourceVersion"), dryRun: opts.dryRun, owner: owner})
	if serr != nil {
		writeStatus(w, serr)
		return
	}
	owner.adm.writeWarnings(w)
	s.writeObject(w, r, http.StatusOK, o, modeObject)
}

func (s *Server) servePatch(w http.ResponseWriter, r *http.Request, t target) {
	if t.name == "" {
		writeStatus(w, errMethodNotAllowed())
		return
	}
	if s.applyRequestFaults(w, r, t.r, verbPatch) {
		return
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	_, builtin := rulesFor(t.r)
	switch {
	case mt == mediaMergePatch || mt == mediaJSONPatch || mt == mediaApplyPatch:
	case mt == mediaStrategicPatch && builtin:
	default:
		writeStatus(w, errUnsupportedPatch(builtin))
		return
	}
	opts, serr := parseWriteOptions(r.URL.Query(), "Patch", mt == mediaApplyPatch)
	if serr != nil {
		writeStatus(w, serr)
		return
	}
	body, serr := s.readBody(r)
	if serr != nil {
		writeStatus(w, serr)
		return
	}
	owner := ownerFor(r, t, opts.fieldManager)
	if mt == mediaApplyPatch {
		o, created, serr := s.apply(applyOp{r: t.r, ns: t.ns, name: t.name, body: body, owner: owner,
			force: opts.force, dryRun: opts.dryRun, part: t.part()})
		if serr != nil {
			writeStatus(w, serr)
			return
		}
		owner.adm.writeWarnings(w)
		code := http.StatusOK
		if created {
			code = http.StatusCreated
			if opts.dryRun {
				o = withoutRV(o)
			}
		}
		s.writeObject(w, r, code, o, modeObject)
		return
	}
	o, serr := s.patch(patchOp{r: t.r, ns: t.ns, name: t.name, patch: body, mediaType: mt, part: t.part(),
		owner: owner, dryRun: opts.dryRun})
	if serr != nil {
		writeStatus(w, serr)
		return
	}
	owner.adm.writeWarnings(w)
	s.writeObject(w, r, http.StatusOK, o, modeObject)
}

func (s *Server) serveDelete(w http.ResponseWriter, r *http.Request, t target) {
	if t.sub != "" || (t.name == "" && t.r.info.Namespaced && t.ns == "") {
		writeStatus(w, errMethodNotAllowed())
		return
	}
	if t.name == "" {
		s.serveDeleteCollection(w, r, t)
		return
	}
	if s.applyRequestFaults(w, r, t.r, verbDelete) {
		return
	}
	body, serr := s.readBody(r)
	if serr != nil {
		writeStatus(w, serr)
		return
	}
	opts, serr := parseDeleteOptions(body, r.URL.Query())
	if serr != nil {
		writeStatus(w, serr)
		return
	}
	adm, serr := s.admitDelete(r, t)
	if serr != nil {
		writeStatus(w, serr)
		return
	}
	tomb, gone, serr := s.deleteObjectGone(t.r, t.ns, t.name, opts)
	if serr != nil {
		writeStatus(w, serr)
		return
	}
	adm.writeWarnings(w)
	s.writeDeleteAnswer(w, r, t.r, tomb, gone)
}

// serveDeleteCollection deletes every object of the collection that matches the
// selectors, one event each, and returns them as a list (as the real server does).
func (s *Server) serveDeleteCollection(w http.ResponseWriter, r *http.Request, t target) {
	if s.applyRequestFaults(w, r, t.r, verbDelete) {
		return
	}
	body, serr := s.readBody(r)
	if serr != nil {
		writeStatus(w, serr)
		return
	}
	opts, serr := parseDeleteOptions(body, r.URL.Query())
	if serr != nil {
		writeStatus(w, serr)
		return
	}
	opts.precondUID, opts.precondRV = "", "" // preconditions apply to one object
	q := r.URL.Query()
	f, serr := parseFilter(t.r, t.ns, q.Get("labelSelector"), q.Get("fieldSelector"))
	if serr != nil {
		writeStatus(w, serr)
		return
	}
	lq := listQuery{filter: f}
	res, serr := s.list(t, &lq)
	if serr != nil {
		writeStatus(w, serr)
		return
	}
	deleted := make([]*object, 0, len(res.items))
	for _, o := range res.items {
		if tomb, err := s.deleteObject(t.r, o.namespace, o.name, opts); err == nil {
			deleted = append(deleted, tomb)
		}
	}
	res.items, res.next, res.rv = deleted, "", s.ResourceVersion()
	s.writeList(w, r, t, &listQuery{mode: modeObject}, res)
}
