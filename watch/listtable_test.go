package watch

import (
	"bytes"
	stdjson "encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// tableRow decodes a one-row Table, as a CLI's row type does.
type tableRow struct {
	Columns []struct {
		Name     string `json:"name"`
		Priority int    `json:"priority"`
	} `json:"columnDefinitions"`
	Rows []struct {
		Cells  []any `json:"cells"`
		Object struct {
			Metadata struct {
				Name            string            `json:"name"`
				Namespace       string            `json:"namespace"`
				ResourceVersion string            `json:"resourceVersion"`
				Annotations     map[string]string `json:"annotations"`
			} `json:"metadata"`
		} `json:"object"`
	} `json:"rows"`
}

func (r *tableRow) GetNamespace() string              { return r.Rows[0].Object.Metadata.Namespace }
func (r *tableRow) GetName() string                   { return r.Rows[0].Object.Metadata.Name }
func (r *tableRow) GetResourceVersion() string        { return r.Rows[0].Object.Metadata.ResourceVersion }
func (r *tableRow) GetAnnotations() map[string]string { return r.Rows[0].Object.Metadata.Annotations }

// TestDecodeListTable decodes the real server's Tables row by row: each row
// arrives as a one-row Table, the first carrying the column definitions.
func TestDecodeListTable(t *testing.T) {
	for _, name := range []string{"table-namespaces.json", "table-deployments.json", "table-widgets-crd.json"} {
		t.Run(name, func(t *testing.T) {
			body := readCapture(t, name)
			var want struct {
				Columns []stdjson.RawMessage `json:"columnDefinitions"`
				Rows    []struct {
					Cells []any `json:"cells"`
				} `json:"rows"`
				Metadata struct{ ResourceVersion string } `json:"metadata"`
			}
			require.NoError(t, stdjson.Unmarshal(body, &want))
			var got []*tableRow
			meta, err := DecodeList(bytes.NewReader(body), 0, func(r *tableRow) error {
				got = append(got, r)
				return nil
			})
			require.NoError(t, err)
			require.Equal(t, want.Metadata.ResourceVersion, meta.ResourceVersion)
			require.Len(t, got, len(want.Rows))
			for i, r := range got {
				require.Len(t, r.Rows, 1, "row %d is a one-row Table", i)
				require.Equal(t, want.Rows[i].Cells, r.Rows[0].Cells, "row %d's cells", i)
				require.NotEmpty(t, r.GetName(), "row %d has its object's metadata", i)
				if i == 0 {
					require.Len(t, r.Columns, len(want.Columns), "the first row has the columns")
				} else {
					require.Empty(t, r.Columns, "row %d has no columns", i)
				}
			}
		})
	}
}

func TestDecodeListTableErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"row not an object", `{"kind":"Table","rows":[1]}`, "table row 0"},
		{"rows not an array", `{"kind":"Table","rows":{}}`, "want '['"},
		{"rows null is empty", `{"kind":"Table","rows":null}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeList(bytes.NewReader([]byte(tt.in)), 0, func(*tableRow) error { return nil })
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.want)
		})
	}
}
