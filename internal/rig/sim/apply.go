package sim

import (
	stdjson "encoding/json"
	"errors"
	"fmt"
	"net/http"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/merge"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// Server-side apply: PATCH with Content-Type application/apply-patch+yaml and a
// fieldManager. The body is the manager's whole configuration (YAML or JSON)
// with apiVersion and kind; the result is the stored object merged with it, less
// the fields the manager applied before and no longer applies (unless another
// manager owns them), and the manager owns exactly the configuration's fields
// (managedfields.go). A field another manager owns with another value is a 409
// with one FieldManagerConflict cause per field, unless force=true, which takes
// it. Applying to an object that does not exist creates it (201). A
// metadata.resourceVersion in the configuration is a precondition.

// applyOp is one server-side apply of a client.
type applyOp struct {
	r        *resource
	ns, name string
	body     []byte
	owner    *fieldOwner
	force    bool
	dryRun   bool
	part     writePart
}

// apply applies op's configuration and returns the stored object and whether it
// was created. Like a patch, it is retried on a newer object when another write
// races with it.
func (s *Server) apply(op applyOp) (*object, bool, *StatusError) {
	cfg, serr := decodeApplyConfig(op.r, op.ns, op.name, op.body)
	if serr != nil {
		return nil, false, serr
	}
	clientRV := metaString(cfg, "resourceVersion")
	for range 10 {
		cur, serr := s.current(op.r, op.ns, op.name)
		if serr != nil && (serr.Status.Code != http.StatusNotFound || op.part == partStatus) {
			return nil, false, serr
		}
		var live map[string]any
		if cur != nil {
			if err := json.Unmarshal(cur.raw, &live); err != nil {
				return nil, false, newStatus(http.StatusInternalServerError, "InternalError", "stored object does not decode: "+err.Error(), nil)
			}
		}
		w := *op.owner
		w.now = s.store.clock()
		obj, serr := applyConfig(op.r, &w, op.force, live, deepCopyJSON(cfg))
		if serr != nil {
			return nil, false, serr
		}
		wo := writeOp{r: op.r, ns: op.ns, name: op.name, m: obj, owner: &w, tracked: true, dryRun: op.dryRun, part: op.part,
			trackedFields: metadataOf(obj)["managedFields"]}
		if cur == nil {
			if serr := prepareCreate(op.r, op.name, obj); serr != nil {
				return nil, false, serr
			}
			wo.create = true
		} else {
			wo.update, wo.precondRV = true, clientRV
			if clientRV == "" {
				wo.precondRV = cur.rvString()
			}
		}
		o, created, serr := s.write(wo)
		if serr != nil && clientRV == "" && (serr.Status.Reason == "Conflict" || serr.Status.Reason == "AlreadyExists" ||
			(cur != nil && serr.Status.Reason == "NotFound")) {
			continue // another write came first: apply to what it left
		}
		return o, created, serr
	}
	return nil, false, errConflict(op.r, op.name)
}

// decodeApplyConfig reads and checks an apply configuration.
func decodeApplyConfig(r *resource, ns, name string, body []byte) (map[string]any, *StatusError) {
	b, err := yamlToJSON(body)
	if err != nil {
		return nil, errBadRequest("error decoding patch: error converting YAML to JSON: " + err.Error())
	}
	var probe map[string]any
	if err := stdjson.Unmarshal(b, &probe); err != nil {
		return nil, errBadRequest("error decoding patch: error unmarshaling JSON: while decoding JSON: " + err.Error())
	}
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil || cfg == nil {
		return nil, errBadRequest("error decoding patch: the configuration must be an object")
	}
	apiVersion, kind := asString(cfg["apiVersion"]), asString(cfg["kind"])
	if apiVersion != r.info.apiVersion() || kind != r.info.Kind {
		group, version := "", apiVersion
		for i := 0; i < len(apiVersion); i++ {
			if apiVersion[i] == '/' {
				group, version = apiVersion[:i], apiVersion[i+1:]
				break
			}
		}
		return nil, errBadRequest(fmt.Sprintf("invalid object type: %s/%s, Kind=%s", group, version, kind))
	}
	md, ok := cfg["metadata"].(map[string]any)
	if !ok && cfg["metadata"] != nil {
		return nil, errBadRequest("error decoding patch: metadata must be an object")
	}
	if md["managedFields"] != nil {
		return nil, errBadRequest("metadata.managedFields must be nil")
	}
	if n := asString(md["name"]); n != "" && n != name {
		return nil, errBadRequest("the name of the object (" + n + ") does not match the name on the URL (" + name + ")")
	}
	if n := asString(md["namespace"]); n != "" && r.info.Namespaced && n != ns {
		return nil, errBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return cfg, nil
}

// applyConfig merges cfg into live (nil: the object does not exist) for w and
// returns the object to store, its managedFields set.
func applyConfig(r *resource, w *fieldOwner, force bool, live, cfg map[string]any) (map[string]any, *StatusError) {
	if live == nil {
		live = skeleton(r)
	}
	mf, _, err := decodeManaged(metadataOf(live)["managedFields"])
	if err != nil {
		mf = newManaged()
	}
	lv, cv := forSMD(live), smdValue(cfg)
	os := buildSchema(r, lv, cv)
	tl, err := os.typed(lv, typed.AllowDuplicates)
	if err != nil {
		return nil, newStatus(http.StatusInternalServerError, "InternalError", "failed to create typed live object: "+err.Error(), nil)
	}
	tc, err := os.typed(cv)
	if err != nil {
		return nil, errBadRequest(fmt.Sprintf("failed to create typed patch object (%s): %v", objectRef(r, metaString(cfg, "namespace"), metaString(cfg, "name")), err))
	}
	version := fieldpath.APIVersion(r.info.apiVersion())
	k := managerID{Manager: w.manager, Operation: opApply, Subresource: w.subresource}.key()
	out, sets, err := w.updater(version).Apply(tl, tc, version, mf.sets, k, force)
	if err != nil {
		var conflicts merge.Conflicts
		if errors.As(err, &conflicts) {
			return nil, errApplyConflict(conflicts)
		}
		return nil, newStatus(http.StatusInternalServerError, "InternalError", err.Error(), nil)
	}
	mf.sets = sets
	mf.stripKey(k)
	var merged any = lv
	if out != nil {
		merged = out.AsValue().Unstructured()
		mf.times[k] = formatTime(w.now)
	}
	for key := range mf.times {
		if _, ok := mf.sets[key]; !ok {
			delete(mf.times, key)
		}
	}
	obj, err := fromSMD(merged)
	if err == nil {
		err = setManaged(obj, mf)
	}
	if err != nil {
		return nil, newStatus(http.StatusInternalServerError, "InternalError", err.Error(), nil)
	}
	return obj, nil
}

// objectRef names an object in messages as the real server does: "ns/name; group/version, Kind=kind".
func objectRef(r *resource, ns, name string) string {
	gv := r.info.apiVersion()
	if r.info.Group == "" {
		gv = "/" + gv
	}
	return fmt.Sprintf("%s/%s; %s, Kind=%s", ns, name, gv, r.info.Kind)
}

// deepCopyJSON copies a decoded JSON object.
func deepCopyJSON(m map[string]any) map[string]any {
	b, _ := json.Marshal(m)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}
