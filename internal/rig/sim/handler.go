package sim

import (
	"io"
	"mime"
	"net/http"
	"strings"
)

// target is a parsed resource URL.
type target struct {
	r       *resource
	ns      string // namespace from the path; "" for cluster-wide
	name    string // object name; "" for the collection
	sub     string // subresource: "status" (a resource with StatusSubresource) or ""
	watchPx bool   // legacy /watch/ path prefix
	// version, when not empty, is a CRD's served version other than the
	// resource's storage version: served through conversion (versions.go).
	version string
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	switch path {
	case "/healthz", "/livez", "/readyz":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok")
		return
	}
	u, admin, ok := s.authenticate(r)
	if !ok {
		writeStatus(w, errUnauthorized())
		return
	}
	if !admin {
		if serr := authorize(u, r); serr != nil {
			writeStatus(w, serr)
			return
		}
	}
	r = withUser(r, u, admin)
	if strings.HasPrefix(path, "/sim/") && !s.opts.DisableAdmin {
		s.serveAdmin(w, r)
		return
	}
	if s.serveDiscovery(w, r) || s.serveOpenAPI(w, r) {
		return
	}
	t, ok := s.parseTarget(path)
	if !ok {
		s.other.Add(1)
		writeStatus(w, errPathNotFound())
		return
	}
	s.serveResource(w, r, t)
}

// parseTarget maps /api/v1/... and /apis/group/version/... to a resource.
func (s *Server) parseTarget(path string) (target, bool) {
	var t target
	var group, version string
	var rest []string
	segs := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(segs) >= 3 && segs[0] == "api":
		version, rest = segs[1], segs[2:]
	case len(segs) >= 4 && segs[0] == "apis":
		group, version, rest = segs[1], segs[2], segs[3:]
	default:
		return t, false
	}
	if rest[0] == "watch" && len(rest) > 1 {
		t.watchPx, rest = true, rest[1:]
	}
	for _, seg := range rest {
		if seg == "" {
			return t, false
		}
	}
	if len(rest) >= 3 && rest[0] == "namespaces" {
		if r := s.gvr(&t, group, version, rest[2]); r != nil && r.info.Namespaced {
			t.r, t.ns = r, rest[1]
			rest = rest[3:]
			switch len(rest) {
			case 0:
			case 1:
				t.name = rest[0]
			case 2:
				t.name, t.sub = rest[0], rest[1]
			default:
				return t, false
			}
			return t, t.validSub()
		}
	}
	r := s.gvr(&t, group, version, rest[0])
	if r == nil || len(rest) > 3 {
		return t, false
	}
	t.r = r
	if len(rest) >= 2 {
		t.name = rest[1]
	}
	if len(rest) == 3 {
		t.sub = rest[2]
	}
	if r.info.Namespaced && t.name != "" {
		return t, false // a namespaced object needs its namespace in the path
	}
	return t, t.validSub()
}

// gvr finds the resource at group/version/plural, noting in t a CRD's
// non-storage version.
func (s *Server) gvr(t *target, group, version, plural string) *resource {
	if r := s.store.byGVR(group, version, plural); r != nil {
		return r
	}
	if r := s.resolveVersion(group, version, plural); r != nil {
		t.version = version
		return r
	}
	return nil
}

// part is what a client's write to the target may change.
func (t *target) part() writePart {
	if t.sub == "status" {
		return partStatus
	}
	return partMain
}

// validSub reports whether the subresource exists: none, status where the
// resource has one, scale where it has one (scale.go). A watch of a subresource
// is not served.
func (t *target) validSub() bool {
	return t.sub == "" || (t.sub == "status" && t.r.info.StatusSubresource && !t.watchPx) ||
		(t.sub == "scale" && scalable(t.r) && !t.watchPx)
}

func (s *Server) serveResource(w http.ResponseWriter, r *http.Request, t target) {
	if t.version != "" {
		s.serveOtherVersion(w, r, t) // versions.go
		return
	}
	q := r.URL.Query()
	isWatch := t.watchPx || q.Get("watch") == "1" || q.Get("watch") == "true"
	if t.sub == "scale" && !isWatch {
		s.serveScale(w, r, t)
		return
	}
	switch r.Method {
	case http.MethodGet:
		switch {
		case isWatch && t.sub != "":
			writeStatus(w, errMethodNotAllowed())
		case isWatch:
			t.r.counts[verbWatch].Add(1)
			s.serveWatch(w, r, t)
		case t.name == "":
			t.r.counts[verbList].Add(1)
			s.serveList(w, r, t)
		default:
			t.r.counts[verbGet].Add(1)
			s.serveGet(w, r, t)
		}
	case http.MethodPost:
		t.r.counts[verbCreate].Add(1)
		s.serveCreate(w, r, t)
	case http.MethodPut:
		t.r.counts[verbUpdate].Add(1)
		s.serveUpdate(w, r, t)
	case http.MethodPatch:
		t.r.counts[verbPatch].Add(1)
		s.servePatch(w, r, t)
	case http.MethodDelete:
		t.r.counts[verbDelete].Add(1)
		s.serveDelete(w, r, t)
	default:
		writeStatus(w, errMethodNotAllowed())
	}
}

func (s *Server) serveGet(w http.ResponseWriter, r *http.Request, t target) {
	mode, ok := negotiate(r.Header.Get("Accept"), false)
	if !ok {
		writeStatus(w, errNotAcceptable())
		return
	}
	if s.applyRequestFaults(w, r, t.r, verbGet) {
		return
	}
	o, serr := s.current(t.r, t.ns, t.name)
	if serr != nil {
		writeStatus(w, serr)
		return
	}
	if mode == modeTable {
		s.writeTable(w, r, t.r, o)
		return
	}
	s.writeObject(w, r, http.StatusOK, o, mode)
}

// writeObject sends one object in the negotiated representation.
func (s *Server) writeObject(w http.ResponseWriter, r *http.Request, code int, o *object, mode outputMode) {
	var b []byte
	switch mode {
	case modeMeta:
		b = appendPartial(nil, o)
	default: // a Table needs the resource's printer: serveGet uses writeTable
		b = o.raw
	}
	w.Header().Set("Content-Type", contentType(mode, false))
	w.Header().Set("Cache-Control", "no-cache, private")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

// readBody reads a request body up to Options.MaxRequestBytes.
func (s *Server) readBody(r *http.Request) ([]byte, *StatusError) {
	body, err := io.ReadAll(io.LimitReader(r.Body, s.opts.MaxRequestBytes+1))
	if err != nil {
		return nil, errBadRequest("reading the request body: " + err.Error())
	}
	if int64(len(body)) > s.opts.MaxRequestBytes {
		return nil, newStatus(http.StatusRequestEntityTooLarge, "RequestEntityTooLarge",
			"Request entity too large: limit is "+itoa(int(s.opts.MaxRequestBytes))+" bytes (Options.MaxRequestBytes)", nil)
	}
	return body, nil
}

// decodeRequest reads a create/update body as JSON or YAML, or as protobuf for the
// built-in kinds (protobody.go).
func (s *Server) decodeRequest(r *http.Request, res *resource) (map[string]any, *StatusError) {
	body, serr := s.readBody(r)
	if serr != nil {
		return nil, serr
	}
	ct := r.Header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	switch mt {
	case "", "application/json", "application/yaml":
	case mediaProtobuf:
		if body, serr = decodeProtobuf(res, body, ct); serr != nil {
			return nil, serr
		}
	default: // CBOR and other bodies are not understood: say so rather than misparse
		return nil, errUnsupportedBody(res, ct)
	}
	if mt == "application/yaml" {
		var err error
		if body, err = yamlToJSON(body); err != nil {
			return nil, errBadRequest("the body of the request could not be decoded as YAML: " + err.Error())
		}
	}
	return decodeObject(res, body)
}
