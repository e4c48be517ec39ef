package sim

import (
	"bytes"
	"context"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"
)

// Serving a CRD's version other than its storage version (crd.go): the
// request is served on the storage version, its body converted there
// first and its answer converted back, as the real server converts on the
// way to and from storage.
//
//   - GET of an object or a list: the answer's object, or every item of
//     the list in one ConversionReview, in the version asked for.
//   - POST and PUT: the body converted to the storage version, the answer
//     back.
//   - PATCH (merge or JSON patch): applied to the object in the version of
//     the request, then written back as a PUT guarded by the object's
//     resourceVersion, redone when another write came first.
//   - DELETE: the answer converted when it is the object.
//   - Not simulated: watches and server-side apply in such a version (a
//     400 that says so), Tables (served from the storage version).
//
// A failed conversion is the real server's 500 InternalError
// "conversion webhook for <group/version>, Kind=<kind> failed: <reason>".

// conversionTimeout is the real server's bound on a conversion webhook call.
const conversionTimeout = 30 * time.Second

func (s *Server) serveOtherVersion(w http.ResponseWriter, r *http.Request, t target) {
	spec := s.crds.get(t.r.info.key())
	q := r.URL.Query()
	if t.watchPx || q.Get("watch") == "1" || q.Get("watch") == "true" {
		writeStatus(w, errBadRequest("sim: a watch of "+t.r.info.key()+" in "+t.version+", not its storage version "+
			t.r.info.Version+", is not simulated"))
		return
	}
	gv := t.r.info.Group + "/" + t.version
	switch r.Method {
	case http.MethodGet, http.MethodDelete:
		body, serr := s.readBody(r)
		if serr != nil {
			writeStatus(w, serr)
			return
		}
		s.answerConverted(w, r.Context(), spec, t, gv, s.onStorage(r, t, r.Method, body))
	case http.MethodPost, http.MethodPut:
		body, serr := s.bodyToStorage(r, spec, t, gv)
		if serr != nil {
			writeStatus(w, serr)
			return
		}
		s.answerConverted(w, r.Context(), spec, t, gv, s.onStorage(r, t, r.Method, body))
	case http.MethodPatch:
		rec, serr := s.patchOtherVersion(r, spec, t, gv)
		if serr != nil {
			writeStatus(w, serr)
			return
		}
		s.answerConverted(w, r.Context(), spec, t, gv, rec)
	default:
		writeStatus(w, errMethodNotAllowed())
	}
}

// recorded is an answer served on the storage version.
type recorded struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (rc *recorded) Header() http.Header { return rc.header }
func (rc *recorded) WriteHeader(code int) {
	if rc.code == 0 {
		rc.code = code
	}
}
func (rc *recorded) Write(b []byte) (int, error) {
	rc.WriteHeader(http.StatusOK)
	return rc.body.Write(b)
}

// onStorage serves method with body on the storage version of t.
func (s *Server) onStorage(r *http.Request, t target, method string, body []byte) *recorded {
	r2 := r.Clone(r.Context())
	r2.Method = method
	segs := strings.Split(r.URL.Path, "/") // "", "apis", group, version, ...
	if len(segs) > 3 {
		segs[3] = t.r.info.Version
	}
	r2.URL.Path = strings.Join(segs, "/")
	r2.Body = io.NopCloser(bytes.NewReader(body))
	r2.ContentLength = int64(len(body))
	if method == http.MethodPut {
		r2.Header.Set("Content-Type", "application/json")
	}
	t.version = ""
	rec := &recorded{header: http.Header{}}
	s.serveResource(rec, r2, t)
	if rec.code == 0 {
		rec.code = http.StatusOK
	}
	return rec
}

// bodyToStorage reads a create or update body (JSON) in version gv and
// returns it converted to the storage version.
func (s *Server) bodyToStorage(r *http.Request, spec *crdSpec, t target, gv string) ([]byte, *StatusError) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "" && mt != "application/json" {
		return nil, newStatus(http.StatusUnsupportedMediaType, "UnsupportedMediaType",
			"sim: a body in "+gv+", not the storage version, must be JSON", nil)
	}
	body, serr := s.readBody(r)
	if serr != nil {
		return nil, serr
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil || m == nil {
		return nil, errBadRequest("the body of the request could not be decoded as a JSON object")
	}
	if v, _ := m["apiVersion"].(string); v != gv {
		return nil, errBadRequest("the API version in the data (" + v + ") does not match the expected API version (" + gv + ")")
	}
	out, serr := s.convert(r.Context(), spec, t, []map[string]any{m}, t.r.info.apiVersion())
	if serr != nil {
		return nil, serr
	}
	b, _ := json.Marshal(out[0])
	return b, nil
}

// patchOtherVersion applies a patch written against version gv.
func (s *Server) patchOtherVersion(r *http.Request, spec *crdSpec, t target, gv string) (*recorded, *StatusError) {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != mediaMergePatch && mt != mediaJSONPatch {
		return nil, newStatus(http.StatusUnsupportedMediaType, "UnsupportedMediaType",
			"sim: a patch of "+mt+" in "+gv+", not the storage version, is not simulated (merge and JSON patches are)", nil)
	}
	patch, serr := s.readBody(r)
	if serr != nil {
		return nil, serr
	}
	for range 10 {
		got := s.onStorage(r, t, http.MethodGet, nil)
		if got.code != http.StatusOK {
			return got, nil
		}
		var cur map[string]any
		if err := json.Unmarshal(got.body.Bytes(), &cur); err != nil {
			return nil, newStatus(http.StatusInternalServerError, "InternalError", "stored object does not decode", nil)
		}
		rv := metaString(cur, "resourceVersion")
		inV, serr := s.convert(r.Context(), spec, t, []map[string]any{cur}, gv)
		if serr != nil {
			return nil, serr
		}
		patched, serr := applyPatch(inV[0], patch, mt, nil)
		if serr != nil {
			return nil, serr
		}
		clientRV := metaString(patched, "resourceVersion")
		if md, ok := patched["metadata"].(map[string]any); ok && clientRV == "" {
			md["resourceVersion"] = rv
		}
		back, serr := s.convert(r.Context(), spec, t, []map[string]any{patched}, t.r.info.apiVersion())
		if serr != nil {
			return nil, serr
		}
		body, _ := json.Marshal(back[0])
		rec := s.onStorage(r, t, http.MethodPut, body)
		if rec.code == http.StatusConflict && clientRV == "" {
			continue // another write came first: patch what it left
		}
		return rec, nil
	}
	return nil, errConflict(t.r, t.name)
}

// answerConverted writes rec with its object, or its list's items, in gv.
func (s *Server) answerConverted(w http.ResponseWriter, ctx context.Context, spec *crdSpec, t target, gv string, rec *recorded) {
	out := rec.body.Bytes()
	var m map[string]any
	if rec.code/100 == 2 && json.Unmarshal(out, &m) == nil {
		var serr *StatusError
		switch m["kind"] {
		case t.r.info.Kind:
			var conv []map[string]any
			if conv, serr = s.convert(ctx, spec, t, []map[string]any{m}, gv); serr == nil {
				out, _ = json.Marshal(conv[0])
			}
		case t.r.info.Kind + "List":
			out, serr = s.convertList(ctx, spec, t, m, gv)
		}
		if serr != nil {
			writeStatus(w, serr)
			return
		}
	}
	for k, vs := range rec.header {
		if k != "Content-Length" {
			w.Header()[k] = vs
		}
	}
	w.WriteHeader(rec.code)
	_, _ = w.Write(out)
}

func (s *Server) convertList(ctx context.Context, spec *crdSpec, t target, list map[string]any, gv string) ([]byte, *StatusError) {
	raw, _ := list["items"].([]any)
	items := make([]map[string]any, 0, len(raw))
	for _, it := range raw {
		if m, ok := it.(map[string]any); ok {
			items = append(items, m)
		}
	}
	conv, serr := s.convert(ctx, spec, t, items, gv)
	if serr != nil {
		return nil, serr
	}
	out := make([]any, len(conv))
	for i, m := range conv {
		out[i] = m
	}
	list["items"], list["apiVersion"] = out, gv
	b, _ := json.Marshal(list)
	return b, nil
}

// convert returns objs in apiVersion desired: strategy None sets the
// apiVersion, Webhook asks the CRD's conversion webhook for those not in it.
func (s *Server) convert(ctx context.Context, spec *crdSpec, t target, objs []map[string]any, desired string) ([]map[string]any, *StatusError) {
	out := make([]map[string]any, len(objs))
	var todo []int
	for i, m := range objs {
		out[i] = m
		if v, _ := m["apiVersion"].(string); v != desired {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		return out, nil
	}
	conv := spec.Spec.Conversion
	if conv == nil || conv.Strategy != "Webhook" {
		for _, i := range todo {
			out[i]["apiVersion"] = desired
		}
		return out, nil
	}
	from, _ := objs[todo[0]]["apiVersion"].(string)
	send := make([]map[string]any, len(todo))
	for j, i := range todo {
		send[j] = objs[i]
	}
	got, err := s.askConversion(ctx, spec, send, desired)
	if err != nil {
		msg := fmt.Sprintf("conversion webhook for %s, Kind=%s failed: %v", from, t.r.info.Kind, err)
		return nil, newStatus(http.StatusInternalServerError, "InternalError", "Internal error occurred: "+msg,
			&StatusDetails{Causes: []StatusCause{{Message: msg}}})
	}
	for j, i := range todo {
		out[i] = got[j]
	}
	return out, nil
}

type conversionReview struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Request    *struct {
		UID               string           `json:"uid"`
		DesiredAPIVersion string           `json:"desiredAPIVersion"`
		Objects           []map[string]any `json:"objects"`
	} `json:"request,omitempty"`
	Response *struct {
		UID              string           `json:"uid"`
		ConvertedObjects []map[string]any `json:"convertedObjects"`
		Result           Status           `json:"result"`
	} `json:"response,omitempty"`
}

// askConversion sends one ConversionReview and checks its answer as the
// real server does: the uid, Success, one object per object sent, each in
// the desired version.
func (s *Server) askConversion(ctx context.Context, spec *crdSpec, objs []map[string]any, desired string) ([]map[string]any, error) {
	hook := spec.Spec.Conversion.Webhook
	if hook == nil || hook.ClientConfig.URL == nil {
		return nil, errors.New("the simulator calls spec.conversion.webhook.clientConfig.url only")
	}
	var rv conversionReview
	rv.APIVersion, rv.Kind = "apiextensions.k8s.io/v1", "ConversionReview"
	uid := s.newUID()
	rv.Request = &struct {
		UID               string           `json:"uid"`
		DesiredAPIVersion string           `json:"desiredAPIVersion"`
		Objects           []map[string]any `json:"objects"`
	}{uid, desired, objs}
	body, err := stdjson.Marshal(rv)
	if err != nil {
		return nil, err
	}
	out, err := s.postReview(ctx, *hook.ClientConfig.URL, hook.ClientConfig.CABundle, conversionTimeout, body)
	if err != nil {
		return nil, err
	}
	var ans conversionReview
	switch err := json.Unmarshal(out, &ans); {
	case err != nil:
		return nil, fmt.Errorf("received invalid webhook response: %w", err)
	case ans.Response == nil:
		return nil, errors.New("no response provided")
	case ans.Response.UID != uid:
		return nil, fmt.Errorf("expected response.uid=%q, got %q", uid, ans.Response.UID)
	case ans.Response.Result.Status != "Success":
		return nil, errors.New(ans.Response.Result.Message)
	case len(ans.Response.ConvertedObjects) != len(objs):
		return nil, fmt.Errorf("expected %d converted objects, got %d", len(objs), len(ans.Response.ConvertedObjects))
	}
	for i, m := range ans.Response.ConvertedObjects {
		if v, _ := m["apiVersion"].(string); v != desired {
			return nil, fmt.Errorf("invalid converted object at index %v: invalid apiVersion %q, expected %q", i, v, desired)
		}
	}
	return ans.Response.ConvertedObjects, nil
}
