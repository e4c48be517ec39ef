package sim

import (
	stdjson "encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/merge"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// metadata.managedFields, as the real server keeps it:
//
//   - one entry per manager, operation (Apply or Update), apiVersion (Update
//     only: an applier keeps one entry across versions) and subresource, each
//     with the fields it owns in the FieldsV1 format;
//   - an Update (create, update, patch) takes ownership of the fields it
//     changes, from whoever owned them; an Apply owns exactly the fields of its
//     configuration, fails with 409 on a field another manager owns with another
//     value unless forced, and removes fields it applied before, no longer
//     applies and nobody else owns;
//   - an entry's time is when its manager last changed the object (an applier
//     that changed nothing, such as one that only shares ownership of values
//     already there, gets none; nor does the scale subresource's entry);
//   - name, namespace, uid, resourceVersion, generation, creationTimestamp,
//     managedFields, apiVersion and kind are nobody's; on a kind with a status
//     subresource, status is nobody's through the object and only status is
//     anybody's through /status;
//   - a write whose body carries no managedFields (or an empty list) keeps the
//     stored ones; a body with exactly one empty entry clears them.
//
// Not done: the conversion of kubectl's last-applied-configuration annotation, the
// cap of ten Update managers (older ones merged into "ancient-changes").

// managerID identifies an entry; its JSON is the manager identifier the library
// keys ownership by (as the real server builds it: no time, no apiVersion for an
// applier).
type managerID struct {
	Manager     string `json:"manager,omitempty"`
	Operation   string `json:"operation,omitempty"`
	APIVersion  string `json:"apiVersion,omitempty"`
	Subresource string `json:"subresource,omitempty"`
}

const (
	opApply  = "Apply"
	opUpdate = "Update"
)

func (id managerID) key() string {
	if id.Operation == opApply {
		id.APIVersion = ""
	}
	b, _ := json.Marshal(id)
	return string(b)
}

func parseManagerKey(k string) managerID {
	var id managerID
	_ = json.Unmarshal([]byte(k), &id)
	return id
}

// managedFieldsEntry is one entry as the server writes it, field for field.
type managedFieldsEntry struct {
	Manager     string             `json:"manager,omitempty"`
	Operation   string             `json:"operation,omitempty"`
	APIVersion  string             `json:"apiVersion,omitempty"`
	Time        string             `json:"time,omitempty"`
	FieldsType  string             `json:"fieldsType,omitempty"`
	FieldsV1    stdjson.RawMessage `json:"fieldsV1,omitempty"`
	Subresource string             `json:"subresource,omitempty"`
}

// managed is the decoded managedFields of an object.
type managed struct {
	sets  fieldpath.ManagedFields // by manager key
	times map[string]string       // by manager key: RFC 3339, absent for none
}

func newManaged() managed {
	return managed{sets: fieldpath.ManagedFields{}, times: map[string]string{}}
}

// decodeManaged reads a metadata.managedFields value. reset reports the one
// empty entry that clears them.
func decodeManaged(v any) (mf managed, reset bool, err error) {
	mf = newManaged()
	if typedList, ok := v.([]managedFieldsEntry); ok { // set by this write already
		b, err := json.Marshal(typedList)
		if err != nil {
			return mf, false, err
		}
		v = nil
		if err := json.Unmarshal(b, &v); err != nil {
			return mf, false, err
		}
	}
	list, ok := v.([]any)
	if !ok {
		if v != nil {
			return mf, false, errors.New("managedFields must be a list")
		}
		return mf, false, nil
	}
	if len(list) == 1 {
		if e, ok := list[0].(map[string]any); ok && len(e) == 0 {
			return mf, true, nil
		}
	}
	for i, item := range list {
		e, ok := item.(map[string]any)
		if !ok {
			return mf, false, fmt.Errorf("managedFields[%d] must be an object", i)
		}
		id := managerID{Manager: asString(e["manager"]), Operation: asString(e["operation"]),
			APIVersion: asString(e["apiVersion"]), Subresource: asString(e["subresource"])}
		if id.Operation != opApply && id.Operation != opUpdate {
			return mf, false, fmt.Errorf("managedFields[%d]: operation %q", i, id.Operation)
		}
		if ft := asString(e["fieldsType"]); ft != "FieldsV1" {
			return mf, false, fmt.Errorf("managedFields[%d]: fieldsType %q", i, ft)
		}
		raw, err := json.Marshal(e["fieldsV1"])
		if err != nil {
			return mf, false, err
		}
		set := &fieldpath.Set{}
		if err := set.FromJSON(strings.NewReader(string(raw))); err != nil {
			return mf, false, fmt.Errorf("managedFields[%d].fieldsV1: %w", i, err)
		}
		k := id.key()
		if _, dup := mf.sets[k]; dup {
			return mf, false, fmt.Errorf("managedFields[%d]: duplicate entry for %s", i, k)
		}
		mf.sets[k] = fieldpath.NewVersionedSet(set, fieldpath.APIVersion(id.APIVersion), id.Operation == opApply)
		if t := asString(e["time"]); t != "" {
			mf.times[k] = t
		}
	}
	return mf, false, nil
}

func asString(v any) string {
	s, _ := v.(string)
	return s
}

// encode returns the entries in the real server's order: appliers first, then by
// time (none first), manager, apiVersion and subresource.
func (mf managed) encode() ([]managedFieldsEntry, error) {
	out := make([]managedFieldsEntry, 0, len(mf.sets))
	for k, vs := range mf.sets {
		id := parseManagerKey(k)
		fields, err := vs.Set().ToJSON()
		if err != nil {
			return nil, err
		}
		op := opUpdate
		if vs.Applied() {
			op = opApply
		}
		out = append(out, managedFieldsEntry{Manager: id.Manager, Operation: op, APIVersion: string(vs.APIVersion()),
			Time: mf.times[k], FieldsType: "FieldsV1", FieldsV1: fields, Subresource: id.Subresource})
	}
	sort.Slice(out, func(i, j int) bool {
		p, q := out[i], out[j]
		switch {
		case p.Operation != q.Operation:
			return p.Operation < q.Operation
		case p.Time != q.Time:
			return p.Time < q.Time // RFC 3339 in UTC sorts as time; "" (none) first
		case p.Manager != q.Manager:
			return p.Manager < q.Manager
		case p.APIVersion != q.APIVersion:
			return p.APIVersion < q.APIVersion
		}
		return p.Subresource < q.Subresource
	})
	return out, nil
}

// setManaged stores mf in the object's metadata, or removes the key when empty.
func setManaged(m map[string]any, mf managed) error {
	md := metadataOf(m)
	entries, err := mf.encode()
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		delete(md, "managedFields")
		return nil
	}
	md["managedFields"] = entries
	return nil
}

func metadataOf(m map[string]any) map[string]any {
	md, _ := m["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		m["metadata"] = md
	}
	return md
}

// stripSet is what nobody owns.
var stripSet = fieldpath.NewSet(
	fieldpath.MakePathOrDie("apiVersion"),
	fieldpath.MakePathOrDie("kind"),
	fieldpath.MakePathOrDie("metadata"),
	fieldpath.MakePathOrDie("metadata", "name"),
	fieldpath.MakePathOrDie("metadata", "namespace"),
	fieldpath.MakePathOrDie("metadata", "creationTimestamp"),
	fieldpath.MakePathOrDie("metadata", "selfLink"),
	fieldpath.MakePathOrDie("metadata", "uid"),
	fieldpath.MakePathOrDie("metadata", "clusterName"),
	fieldpath.MakePathOrDie("metadata", "generation"),
	fieldpath.MakePathOrDie("metadata", "managedFields"),
	fieldpath.MakePathOrDie("metadata", "resourceVersion"),
)

// stripKey removes stripSet from one manager's set, and the entry when empty.
func (mf managed) stripKey(k string) {
	vs, ok := mf.sets[k]
	if !ok {
		return
	}
	set := vs.Set().Difference(stripSet)
	if set.Empty() {
		delete(mf.sets, k)
		delete(mf.times, k)
		return
	}
	mf.sets[k] = fieldpath.NewVersionedSet(set, vs.APIVersion(), vs.Applied())
}

// fieldOwner is who makes a client's write, for metadata.managedFields.
type fieldOwner struct {
	manager     string
	subresource string // "", "status" or "scale"
	now         time.Time
	// ignore are paths the write cannot own (status through the object).
	ignore *fieldpath.Set
	// only, when not empty, is the one top-level field the write can own
	// ("status" through /status).
	only string
	// adm is the client request's admission (admission.go); nil for
	// in-process writes, which no webhook sees.
	adm *admissionCtx
}

// filter is what the write can own, as the library's ignore filter.
func (w *fieldOwner) filter() fieldpath.Filter {
	if w.only != "" {
		return fieldpath.NewIncludeMatcherFilter(fieldpath.MakePrefixMatcherOrDie(w.only))
	}
	if w.ignore == nil {
		return nil
	}
	return fieldpath.NewExcludeSetFilter(w.ignore)
}

func (w *fieldOwner) updater(version fieldpath.APIVersion) *merge.Updater {
	b := merge.UpdaterBuilder{Converter: sameVersion{}}
	if f := w.filter(); f != nil {
		b.IgnoreFilter = map[fieldpath.APIVersion]fieldpath.Filter{version: f}
	}
	return b.BuildUpdater()
}

// sameVersion is the library's version converter for a server that serves each
// kind in one version: objects are the same in every version.
type sameVersion struct{}

func (sameVersion) Convert(v *typed.TypedValue, _ fieldpath.APIVersion) (*typed.TypedValue, error) {
	return v, nil
}

func (sameVersion) IsMissingVersionError(error) bool { return false }

// forSMD is a copy of a decoded object without its managedFields, in the
// library's value types.
func forSMD(m map[string]any) map[string]any {
	c := smdValue(m).(map[string]any)
	if md, ok := c["metadata"].(map[string]any); ok {
		delete(md, "managedFields")
	}
	return c
}

// managerName is the manager of a write: fieldManager, or else the User-Agent up
// to its first '/' (printable characters only, at most 128 bytes), or "unknown".
func managerName(fieldManager, userAgent string) string {
	if fieldManager != "" {
		return fieldManager
	}
	var b strings.Builder
	for _, r := range strings.SplitN(userAgent, "/", 2)[0] {
		if !unicode.IsPrint(r) {
			continue
		}
		if b.Len()+utf8.RuneLen(r) > maxFieldManager {
			break
		}
		b.WriteRune(r)
	}
	if b.Len() == 0 {
		return "unknown"
	}
	return b.String()
}

// maxFieldManager is the longest fieldManager the server accepts.
const maxFieldManager = 128

// recordUpdate sets obj's managedFields after an Update by w of live (nil for a
// create) into obj. As on the real server, a failure to track fields does not
// fail the write: the object is stored without managedFields.
func recordUpdate(r *resource, w *fieldOwner, live, obj map[string]any) {
	if err := trackUpdate(r, w, live, obj); err != nil {
		delete(metadataOf(obj), "managedFields")
	}
}

func trackUpdate(r *resource, w *fieldOwner, live, obj map[string]any) error {
	if live == nil {
		live = skeleton(r)
	}
	mf, reset, err := decodeManaged(metadataOf(obj)["managedFields"])
	if err != nil || (!reset && len(mf.sets) == 0) {
		if mf, _, err = decodeManaged(metadataOf(live)["managedFields"]); err != nil {
			mf = newManaged()
		}
	}
	lv, nv := forSMD(live), forSMD(obj)
	os := buildSchema(r, lv, nv)
	tl, err := os.typed(lv, typed.AllowDuplicates)
	if err != nil {
		return err
	}
	tn, err := os.typed(nv, typed.AllowDuplicates)
	if err != nil {
		return err
	}
	version := fieldpath.APIVersion(r.info.apiVersion())
	const self = "current-operation"
	_, sets, err := w.updater(version).Update(tl, tn, version, mf.sets, self)
	if err != nil {
		return err
	}
	mf.sets = sets
	mf.stripKey(self)
	if vs, ok := mf.sets[self]; ok {
		delete(mf.sets, self)
		k := managerID{Manager: w.manager, Operation: opUpdate, APIVersion: string(version), Subresource: w.subresource}.key()
		set := vs.Set()
		if prev, ok := mf.sets[k]; ok {
			set = set.Union(prev.Set())
		}
		mf.sets[k] = fieldpath.NewVersionedSet(set, version, false)
		if w.subresource != "scale" {
			mf.times[k] = formatTime(w.now)
		}
	}
	for k := range mf.times {
		if _, ok := mf.sets[k]; !ok {
			delete(mf.times, k)
		}
	}
	return setManaged(obj, mf)
}

// skeleton is the object a create starts from: the shape of an empty object of
// the kind (its non-pointer structs present, as the real server's typed empty
// object has them), so that they are not owned as added.
func skeleton(r *resource) map[string]any {
	m := map[string]any{}
	if r.info.BookmarkBody != "" {
		_ = json.Unmarshal([]byte("{"+r.info.BookmarkBody+"}"), &m)
	}
	return m
}

// errApplyConflict is the 409 of an apply that conflicts, worded as the real
// server words it (status-409-apply-conflict.json).
func errApplyConflict(conflicts merge.Conflicts) *StatusError {
	sort.SliceStable(conflicts, func(i, j int) bool {
		if conflicts[i].Manager != conflicts[j].Manager {
			return conflicts[i].Manager < conflicts[j].Manager
		}
		return conflicts[i].Path.Compare(conflicts[j].Path) < 0
	})
	causes := make([]StatusCause, 0, len(conflicts))
	for _, c := range conflicts {
		causes = append(causes, StatusCause{Reason: "FieldManagerConflict",
			Message: "conflict with " + printManager(c.Manager), Field: c.Path.String()})
	}
	var msg string
	if len(conflicts) == 1 {
		msg = fmt.Sprintf("Apply failed with 1 conflict: conflict with %s: %s", printManager(conflicts[0].Manager), conflicts[0].Path)
	} else {
		var lines []string
		last := ""
		for _, c := range conflicts {
			if c.Manager != last || len(lines) == 0 {
				lines = append(lines, fmt.Sprintf("conflicts with %s:", printManager(c.Manager)))
				last = c.Manager
			}
			lines = append(lines, "- "+c.Path.String())
		}
		msg = fmt.Sprintf("Apply failed with %d conflicts: %s", len(conflicts), strings.Join(lines, "\n"))
	}
	return newStatus(http.StatusConflict, "Conflict", msg, &StatusDetails{Causes: causes})
}

// printManager names a manager in a conflict: `"name"`, with its subresource,
// and "using <apiVersion>" for an Update manager.
func printManager(key string) string {
	id := parseManagerKey(key)
	s := fmt.Sprintf("%q", id.Manager)
	if id.Subresource != "" {
		s += fmt.Sprintf(" with subresource %q", id.Subresource)
	}
	if id.Operation == opUpdate {
		s += " using " + id.APIVersion
	}
	return s
}
