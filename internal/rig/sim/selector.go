package sim

import (
	"fmt"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

// filter decides which objects a list or watch sees: namespace, label selector and
// field selector. The zero filter matches everything.
type filter struct {
	namespace string // "" = every namespace
	labels    labels.Selector
	fields    fields.Selector
}

// parseFilter validates the selectors of a request against the resource, with the
// real server's messages for each mistake.
func parseFilter(r *resource, ns, labelSel, fieldSel string) (filter, *StatusError) {
	f := filter{namespace: ns}
	if labelSel != "" {
		sel, err := labels.Parse(labelSel)
		if err != nil {
			return f, errBadRequest(err.Error())
		}
		if !sel.Empty() {
			f.labels = sel
		}
	}
	if fieldSel != "" {
		sel, err := fields.ParseSelector(fieldSel)
		if err != nil {
			return f, errBadRequest(err.Error())
		}
		for _, req := range sel.Requirements() {
			if !r.fieldSet[req.Field] {
				return f, errBadRequest(fmt.Sprintf("field label not supported: %s", req.Field))
			}
		}
		if !sel.Empty() {
			f.fields = sel
		}
	}
	return f, nil
}

// empty reports whether the filter has no selectors (the list then reports
// remainingItemCount, as the real server does).
func (f *filter) empty() bool { return f.labels == nil && f.fields == nil }

// matches reports whether o passes the selectors (the namespace is handled by the
// key range in lists and checked here for watches).
func (f *filter) matches(o *object) bool {
	if o == nil {
		return false
	}
	if f.namespace != "" && o.namespace != f.namespace {
		return false
	}
	if f.labels != nil && !f.labels.Matches(labels.Set(o.labels)) {
		return false
	}
	if f.fields != nil && !f.fields.Matches(fields.Set(o.fields)) {
		return false
	}
	return true
}
