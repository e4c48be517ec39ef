package watch

import (
	"testing"

	"github.com/kwatch/kwatch/kube"
)

// TestTableObjectQuery: TableObject asks for each Table row's whole object,
// and only with Table.
func TestTableObjectQuery(t *testing.T) {
	tests := []struct {
		table, object bool
		want          string
	}{
		{true, true, "Object"},
		{true, false, ""},
		{false, true, ""},
	}
	for _, tt := range tests {
		l := ListOptions{Table: tt.table, TableObject: tt.object}.query(kube.Scope{}).Get("includeObject")
		w := WatchOptions{Table: tt.table, TableObject: tt.object}.query(kube.Scope{}).Get("includeObject")
		if l != tt.want || w != tt.want {
			t.Errorf("Table %v, TableObject %v: includeObject list %q, watch %q; want %q", tt.table, tt.object, l, w, tt.want)
		}
	}
}
