package sim

import (
	stdjson "encoding/json"
	"mime"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// The scale subresource of deployments, replicasets and statefulsets:
// <object>/scale reads and writes an autoscaling/v1 Scale whose spec.replicas is
// the object's (1 when unset, the kinds' default), whose status.replicas is the
// object's status.replicas and whose status.selector is the object's label
// selector as a string. GET reads it; PUT and PATCH (merge, JSON or strategic
// merge patch of the Scale) write spec.replicas back to the object and nothing
// else, with a managedFields entry of subresource scale (which, as on the real
// server, has no time). A metadata.resourceVersion in a PUT is a precondition.
// Server-side apply of a Scale is not served (415).

// scalable reports whether a resource has a scale subresource.
func scalable(r *resource) bool {
	switch r.info.key() {
	case "deployments.apps", "replicasets.apps", "statefulsets.apps":
		return true
	}
	return false
}

// scale is an autoscaling/v1 Scale, field for field as the real server writes it.
type scale struct {
	Kind       string    `json:"kind"`
	APIVersion string    `json:"apiVersion"`
	Metadata   scaleMeta `json:"metadata"`
	Spec       struct {
		Replicas int64 `json:"replicas"`
	} `json:"spec"`
	Status struct {
		Replicas int64  `json:"replicas"`
		Selector string `json:"selector,omitempty"`
	} `json:"status"`
}

type scaleMeta struct {
	Name              string `json:"name"`
	Namespace         string `json:"namespace,omitempty"`
	UID               string `json:"uid"`
	ResourceVersion   string `json:"resourceVersion"`
	CreationTimestamp string `json:"creationTimestamp"`
}

// scaleOf is the Scale of a stored object.
func scaleOf(o *object) (*scale, *StatusError) {
	var m map[string]any
	if err := json.Unmarshal(o.raw, &m); err != nil {
		return nil, newStatus(http.StatusInternalServerError, "InternalError", "stored object does not decode: "+err.Error(), nil)
	}
	sc := &scale{Kind: "Scale", APIVersion: "autoscaling/v1", Metadata: scaleMeta{Name: o.name, Namespace: o.namespace,
		UID: o.uid, ResourceVersion: o.rvString(), CreationTimestamp: formatTime(o.created)}}
	sc.Spec.Replicas = 1
	if v := lookupPath(m, "spec.replicas"); v != "" {
		sc.Spec.Replicas, _ = strconv.ParseInt(v, 10, 64)
	}
	if v := lookupPath(m, "status.replicas"); v != "" {
		sc.Status.Replicas, _ = strconv.ParseInt(v, 10, 64)
	}
	spec, _ := m["spec"].(map[string]any)
	sc.Status.Selector = selectorString(spec["selector"])
	return sc, nil
}

// selectorString renders a LabelSelector as a label selector string, the
// requirements sorted by key as the real server sorts them.
func selectorString(v any) string {
	sel, _ := v.(map[string]any)
	type req struct{ key, text string }
	var reqs []req
	if ml, ok := sel["matchLabels"].(map[string]any); ok {
		for k, val := range ml {
			reqs = append(reqs, req{k, k + "=" + asString(val)})
		}
	}
	exprs, _ := sel["matchExpressions"].([]any)
	for _, e := range exprs {
		em, _ := e.(map[string]any)
		k := asString(em["key"])
		var vals []string
		if list, ok := em["values"].([]any); ok {
			for _, x := range list {
				vals = append(vals, asString(x))
			}
		}
		sort.Strings(vals)
		switch asString(em["operator"]) {
		case "In":
			reqs = append(reqs, req{k, k + " in (" + strings.Join(vals, ",") + ")"})
		case "NotIn":
			reqs = append(reqs, req{k, k + " notin (" + strings.Join(vals, ",") + ")"})
		case "Exists":
			reqs = append(reqs, req{k, k})
		case "DoesNotExist":
			reqs = append(reqs, req{k, "!" + k})
		}
	}
	sort.SliceStable(reqs, func(i, j int) bool { return reqs[i].key < reqs[j].key })
	parts := make([]string, len(reqs))
	for i, r := range reqs {
		parts[i] = r.text
	}
	return strings.Join(parts, ",")
}

func (s *Server) serveScale(w http.ResponseWriter, r *http.Request, t target) {
	if t.name == "" {
		writeStatus(w, errMethodNotAllowed())
		return
	}
	var v verb
	switch r.Method {
	case http.MethodGet:
		v = verbGet
	case http.MethodPut:
		v = verbUpdate
	case http.MethodPatch:
		v = verbPatch
	default:
		writeStatus(w, errMethodNotAllowed())
		return
	}
	t.r.counts[v].Add(1)
	if s.applyRequestFaults(w, r, t.r, v) {
		return
	}
	o, serr := s.scaleRequest(r, t)
	if serr != nil {
		writeStatus(w, serr)
		return
	}
	sc, serr := scaleOf(o)
	if serr != nil {
		writeStatus(w, serr)
		return
	}
	writeJSONType(w, "application/json", sc)
}

// scaleRequest serves a scale GET, PUT or PATCH and returns the object after it.
func (s *Server) scaleRequest(r *http.Request, t target) (*object, *StatusError) {
	if r.Method == http.MethodGet {
		return s.current(t.r, t.ns, t.name)
	}
	kind := "Update"
	mt := ""
	if r.Method == http.MethodPatch {
		kind = "Patch"
		mt, _, _ = mime.ParseMediaType(r.Header.Get("Content-Type"))
		if mt != mediaMergePatch && mt != mediaJSONPatch && mt != mediaStrategicPatch {
			return nil, errUnsupportedPatch(true)
		}
	}
	opts, serr := parseWriteOptions(r.URL.Query(), kind, false)
	if serr != nil {
		return nil, serr
	}
	body, serr := s.readBody(r)
	if serr != nil {
		return nil, serr
	}
	owner := ownerFor(r, t, opts.fieldManager)
	for range 10 {
		cur, serr := s.current(t.r, t.ns, t.name)
		if serr != nil {
			return nil, serr
		}
		want, precond, serr := wantedScale(t, cur, body, mt)
		if serr != nil {
			return nil, serr
		}
		o, serr := s.setReplicas(t, cur, want, precond, owner, opts.dryRun)
		if serr != nil && serr.Status.Reason == "Conflict" && precond == "" {
			continue
		}
		return o, serr
	}
	return nil, errConflict(t.r, t.name)
}

// wantedScale is the Scale a PUT body or a patch of the current Scale asks for,
// and the resourceVersion precondition it carries.
func wantedScale(t target, cur *object, body []byte, mediaType string) (*scale, string, *StatusError) {
	var doc map[string]any
	if mediaType == "" {
		b, err := yamlToJSON(body)
		if err == nil {
			err = json.Unmarshal(b, &doc)
		}
		if err != nil || doc == nil {
			return nil, "", errBadRequest("the body of the request could not be decoded as a Scale")
		}
		if v := asString(doc["apiVersion"]); v != "" && v != "autoscaling/v1" {
			return nil, "", errBadRequest("the API version in the data (" + v + ") does not match the expected API version (autoscaling/v1)")
		}
		if k := asString(doc["kind"]); k != "" && k != "Scale" {
			return nil, "", errBadRequest("the kind in the data (" + k + ") does not match the expected kind (Scale)")
		}
		if n := metaString(doc, "name"); n != "" && n != t.name {
			return nil, "", errBadRequest("the name of the object (" + n + ") does not match the name on the URL (" + t.name + ")")
		}
	} else {
		sc, serr := scaleOf(cur)
		if serr != nil {
			return nil, "", serr
		}
		b, _ := json.Marshal(sc)
		if err := json.Unmarshal(b, &doc); err != nil {
			return nil, "", errBadRequest(err.Error())
		}
		if doc, serr = applyPatch(doc, body, mediaType, kindRules{}); serr != nil {
			return nil, "", serr
		}
	}
	precond := metaString(doc, "resourceVersion")
	if mediaType != "" && precond == cur.rvString() {
		precond = "" // the current Scale's own resourceVersion, carried through the patch
	}
	var out scale
	b, _ := json.Marshal(doc)
	if err := stdjson.Unmarshal(b, &out); err != nil {
		return nil, "", errBadRequest("the body of the request could not be decoded as a Scale: " + err.Error())
	}
	if out.Spec.Replicas < 0 {
		return nil, "", errInvalid("autoscaling", "Scale", t.name, StatusCause{Reason: "FieldValueInvalid",
			Message: "Invalid value: " + strconv.FormatInt(out.Spec.Replicas, 10) + ": must be greater than or equal to 0",
			Field:   "spec.replicas"})
	}
	return &out, precond, nil
}

// setReplicas writes want's spec.replicas to the object cur.
func (s *Server) setReplicas(t target, cur *object, want *scale, precond string, owner *fieldOwner, dryRun bool) (*object, *StatusError) {
	var m map[string]any
	if err := json.Unmarshal(cur.raw, &m); err != nil {
		return nil, newStatus(http.StatusInternalServerError, "InternalError", "stored object does not decode: "+err.Error(), nil)
	}
	spec, _ := m["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
		m["spec"] = spec
	}
	spec["replicas"] = want.Spec.Replicas
	if precond == "" {
		precond = cur.rvString()
	}
	w := *owner
	o, _, serr := s.write(writeOp{r: t.r, ns: t.ns, name: t.name, m: m, update: true, precondRV: precond,
		part: partMain, owner: &w, dryRun: dryRun})
	return o, serr
}
