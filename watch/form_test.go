package watch

import (
	"strings"
	"testing"

	"github.com/kwatch/kwatch/kube"
)

// TestFormQuery: FormTableObject asks for each Table row's whole object;
// no other form sends includeObject.
func TestFormQuery(t *testing.T) {
	tests := []struct {
		form Form
		want string
	}{
		{FormObject, ""},
		{FormMetadata, ""},
		{FormTable, ""},
		{FormTableObject, "Object"},
	}
	for _, tt := range tests {
		l := ListOptions{Form: tt.form}.query(kube.Scope{}).Get("includeObject")
		w := WatchOptions{Form: tt.form}.query(kube.Scope{}).Get("includeObject")
		if l != tt.want || w != tt.want {
			t.Errorf("Form %v: includeObject list %q, watch %q; want %q", tt.form, l, w, tt.want)
		}
	}
}

// TestFormCheck: a Form that is none of the constants is refused, naming
// the field, before any request.
func TestFormCheck(t *testing.T) {
	for _, f := range []Form{FormObject, FormMetadata, FormTable, FormTableObject} {
		if err := f.check("ListOptions.Form"); err != nil {
			t.Errorf("Form %v: got %v, want nil", f, err)
		}
	}
	for _, f := range []Form{-1, FormTableObject + 1} {
		err := f.check("ListOptions.Form")
		if err == nil || !strings.Contains(err.Error(), "ListOptions.Form "+f.String()) {
			t.Errorf("Form %d: got %v, want an error naming ListOptions.Form", int(f), err)
		}
	}
}
