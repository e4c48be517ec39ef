package sim

import (
	"bytes"
	stdjson "encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Deletes. Options come from the body (DeleteOptions) and the query, the query
// winning where both set one, and are checked as the real server checks them.
// What gracePeriodSeconds, propagationPolicy and an object's finalizers do is in
// finalize.go. The answer for a removed object is the object for pods, services
// and namespaces, and a Status of Success naming it for every other kind, as on
// the real server; an object kept is answered as itself.

// deleteOptions are the parsed options of one delete.
type deleteOptions struct {
	precondUID, precondRV string
	dryRun                bool
	grace                 *int64 // gracePeriodSeconds; nil when not given
	policy                string // "Foreground", "Background", "Orphan" or "" (orphanDependents maps to one)
	immediate             bool   // the in-process Delete: no finalizers, no grace period
}

// deleteBody is the part of DeleteOptions the simulator reads.
type deleteBody struct {
	Kind              string  `json:"kind"`
	APIVersion        string  `json:"apiVersion"`
	GracePeriod       *int64  `json:"gracePeriodSeconds"`
	PropagationPolicy *string `json:"propagationPolicy"`
	Orphan            *bool   `json:"orphanDependents"`
	Preconditions     struct {
		UID             *string `json:"uid"`
		ResourceVersion *string `json:"resourceVersion"`
	} `json:"preconditions"`
	DryRun []string `json:"dryRun"`
}

var propagationPolicies = []string{"Foreground", "Background", "Orphan"}

// parseDeleteOptions reads a delete's body and query.
func parseDeleteOptions(body []byte, q url.Values) (deleteOptions, *StatusError) {
	var d deleteBody
	if bytes.HasPrefix(body, pbMagic) { // client-go's typed clients in protobuf (deleteproto.go)
		var serr *StatusError
		if body, serr = deleteOptionsJSON(body); serr != nil {
			return deleteOptions{}, serr
		}
	}
	if len(strings.TrimSpace(string(body))) > 0 {
		// The standard library's decoder words errors as the real server's does.
		if err := stdjson.Unmarshal(body, &d); err != nil {
			return deleteOptions{}, errBadRequest("couldn't get version/kind; json parse error: " + err.Error())
		}
		if d.Kind != "" && d.Kind != "DeleteOptions" {
			return deleteOptions{}, errBadRequest(fmt.Sprintf("no kind %q is registered for version %q in scheme %q",
				d.Kind, "meta.k8s.io/v1", "pkg/runtime/scheme.go:111"))
		}
	}
	if v, ok := q["propagationPolicy"]; ok {
		d.PropagationPolicy = &v[0]
	}
	if v := q.Get("orphanDependents"); v != "" {
		b, _ := strconv.ParseBool(v)
		d.Orphan = &b
	}
	if v := q.Get("gracePeriodSeconds"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return deleteOptions{}, errBadRequest("invalid gracePeriodSeconds " + strconv.Quote(v) + ": " + err.Error())
		}
		d.GracePeriod = &n
	}
	if _, ok := q["dryRun"]; ok {
		d.DryRun = q["dryRun"]
	}
	var causes []StatusCause
	_, dryCauses := parseDryRun(url.Values{"dryRun": d.DryRun})
	causes = append(causes, dryCauses...)
	if p := d.PropagationPolicy; p != nil {
		switch {
		case d.Orphan != nil:
			causes = append(causes, StatusCause{Reason: "FieldValueInvalid", Field: "propagationPolicy",
				Message: "Invalid value: " + strconv.Quote(*p) + ": orphanDependents and deletionPropagation cannot be both set"})
		case !contains(propagationPolicies, *p):
			causes = append(causes, StatusCause{Reason: "FieldValueNotSupported", Field: "propagationPolicy",
				Message: "Unsupported value: " + strconv.Quote(*p) + `: supported values: "Foreground", "Background", "Orphan", "nil"`})
		}
	}
	if len(causes) > 0 {
		return deleteOptions{}, errInvalid("meta.k8s.io", "DeleteOptions", "", causes...)
	}
	o := deleteOptions{dryRun: len(d.DryRun) > 0, grace: d.GracePeriod}
	switch {
	case d.PropagationPolicy != nil:
		o.policy = *d.PropagationPolicy
	case d.Orphan != nil && *d.Orphan:
		o.policy = "Orphan"
	case d.Orphan != nil:
		o.policy = "Background"
	}
	if d.Preconditions.UID != nil {
		o.precondUID = *d.Preconditions.UID
	}
	if d.Preconditions.ResourceVersion != nil {
		o.precondRV = *d.Preconditions.ResourceVersion
	}
	return o, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// errPrecondition is the 409 of a delete whose precondition fails
// (status-409-delete-precondition.json): it names the kind, not the resource.
func errPrecondition(r *resource, name, msg string) *StatusError {
	return newStatus(http.StatusConflict, "Conflict",
		fmt.Sprintf("Operation cannot be fulfilled on %s %q: %s", r.info.Kind, name, msg),
		&StatusDetails{Name: name, Group: r.info.Group, Kind: r.info.Kind})
}

// checkDeletePreconditions applies the uid and resourceVersion preconditions to
// the current object, uid first.
func checkDeletePreconditions(r *resource, cur *object, o deleteOptions) *StatusError {
	if o.precondUID != "" && o.precondUID != cur.uid {
		return errPrecondition(r, cur.name, fmt.Sprintf(
			"the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated",
			o.precondUID, cur.uid))
	}
	if rv := strconv.FormatUint(cur.rv, 10); o.precondRV != "" && o.precondRV != rv {
		return errPrecondition(r, cur.name, fmt.Sprintf(
			"the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified",
			o.precondRV, rv))
	}
	return nil
}

// deleteReturnsObject reports whether a delete answers with the object (the real
// server's pods, services and namespaces) rather than a Status.
func deleteReturnsObject(r *resource) bool {
	switch r.info.key() {
	case "pods", "services", "namespaces":
		return true
	}
	return false
}

// writeDeleted answers a delete: the object, or a Status of Success naming it.
func (s *Server) writeDeleted(w http.ResponseWriter, r *http.Request, res *resource, o *object) {
	if deleteReturnsObject(res) {
		s.writeObject(w, r, http.StatusOK, o, modeObject)
		return
	}
	b, _ := json.Marshal(struct {
		Kind       string            `json:"kind"`
		APIVersion string            `json:"apiVersion"`
		Metadata   struct{}          `json:"metadata"`
		Status     string            `json:"status"`
		Details    deleteSuccessInfo `json:"details"`
	}{Kind: "Status", APIVersion: "v1", Status: "Success",
		Details: deleteSuccessInfo{Name: o.name, Group: res.info.Group, Kind: res.info.Resource, UID: o.uid}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache, private")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

type deleteSuccessInfo struct {
	Name  string `json:"name"`
	Group string `json:"group,omitempty"`
	Kind  string `json:"kind"`
	UID   string `json:"uid"`
}
