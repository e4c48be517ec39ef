package printers

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

const (
	objA = `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"ns","resourceVersion":"7",` +
		`"annotations":{"k":"<v>"},"managedFields":[{"manager":"kubectl"}]},"spec":{"n":12345678901234567890}}`
	objB = `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"b","namespace":"ns","resourceVersion":"8"}}`
)

func writeAll(t *testing.T, s *Stream, events ...string) string {
	t.Helper()
	var b strings.Builder
	s.W = &b
	objs := []string{objA, objB}
	for i, ev := range events {
		raw := objs[i%2]
		require.NoError(t, s.Write(ev, []string{"a", "b"}[i%2], []byte(raw)))
	}
	require.NoError(t, s.Close())
	return b.String()
}

func TestStreamJSON(t *testing.T) {
	got := writeAll(t, &Stream{}, "ADDED", "MODIFIED")
	want := `{
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "annotations": {
            "k": "\u003cv\u003e"
        },
        "name": "a",
        "namespace": "ns",
        "resourceVersion": "7"
    },
    "spec": {
        "n": 12345678901234567890
    }
}
{
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "b",
        "namespace": "ns",
        "resourceVersion": "8"
    }
}
`
	require.Equal(t, want, got, "sorted keys, 4-space indent, no managedFields, exact numbers, HTML characters escaped as kubectl escapes them")
}

func TestStreamJSONEvents(t *testing.T) {
	got := writeAll(t, &Stream{Events: true}, "ADDED", "DELETED")
	dec := json.NewDecoder(strings.NewReader(got))
	var types, names []string
	for dec.More() {
		var ev struct {
			Type   string
			Object struct{ Metadata struct{ Name string } }
		}
		require.NoError(t, dec.Decode(&ev))
		types, names = append(types, ev.Type), append(names, ev.Object.Metadata.Name)
	}
	require.Equal(t, []string{"ADDED", "DELETED"}, types)
	require.Equal(t, []string{"a", "b"}, names)
	require.True(t, strings.HasPrefix(got, `{"type":"ADDED","object":{`), "type comes first: %s", got)
	require.Equal(t, 2, strings.Count(got, "\n"), "one line per event, as kubectl prints them: %s", got)
	require.Contains(t, got, `"managedFields":[{"manager":"kubectl"}]`, "kept in watch events, as kubectl keeps them")

	dropped := writeAll(t, &Stream{Events: true, DropManagedFields: true}, "ADDED")
	require.NotContains(t, dropped, "managedFields")
}

func TestStreamLists(t *testing.T) {
	tests := []struct {
		name   string
		format Format
		events []string
		want   []string // item names
	}{
		{"json, two items", FormatJSON, []string{"ADDED", "ADDED"}, []string{"a", "b"}},
		{"json, empty", FormatJSON, nil, nil},
		{"yaml, two items", FormatYAML, []string{"ADDED", "ADDED"}, []string{"a", "b"}},
		{"yaml, empty", FormatYAML, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := writeAll(t, &Stream{Format: tt.format, List: true}, tt.events...)
			var list struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
				Items      []struct {
					Metadata struct {
						Name          string `json:"name"`
						ManagedFields any    `json:"managedFields"`
					} `json:"metadata"`
				} `json:"items"`
			}
			require.NoError(t, yaml.Unmarshal([]byte(got), &list), "output:\n%s", got)
			require.Equal(t, "List", list.Kind)
			require.Equal(t, "v1", list.APIVersion)
			var names []string
			for _, it := range list.Items {
				names = append(names, it.Metadata.Name)
				require.Nil(t, it.Metadata.ManagedFields, "managedFields are not printed")
			}
			require.Equal(t, tt.want, names, "got items %q, want %q", names, tt.want)
		})
	}
}

func TestStreamYAMLDocuments(t *testing.T) {
	got := writeAll(t, &Stream{Format: FormatYAML}, "ADDED", "MODIFIED")
	docs := strings.Split(got, "---\n")
	require.Len(t, docs, 2, "two documents: %s", got)
	require.Contains(t, docs[0], "name: a\n")
	require.Contains(t, docs[1], "name: b\n")
}

func TestStreamNames(t *testing.T) {
	tests := []struct {
		name   string
		stream Stream
		want   string
	}{
		{"names", Stream{Format: FormatName, Kind: "pod"}, "pod/a\npod/b\n"},
		{"with events", Stream{Format: FormatName, Kind: "deployment.apps", Events: true}, "ADDED deployment.apps/a\nDELETED deployment.apps/b\n"},
		{"list once", Stream{Format: FormatName, Kind: "pod", List: true}, "pod/a\npod/b\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := writeAll(t, &tt.stream, "ADDED", "DELETED")
			require.Equal(t, tt.want, got)
		})
	}
}

func TestStreamBadObject(t *testing.T) {
	s := &Stream{W: &strings.Builder{}}
	require.Error(t, s.Write("ADDED", "x", []byte(`[1,2]`)), "a JSON array is not an object")
	require.Error(t, s.Write("ADDED", "x", []byte(`{"a":`)), "truncated JSON")
}

func TestRawKeepsBytes(t *testing.T) {
	buf := []byte(objA)
	var r Raw
	require.NoError(t, fastJSON.Unmarshal(buf, &r))
	copy(buf, strings.Repeat("x", len(buf))) // a decoder reusing its buffer
	require.Equal(t, objA, string(r.JSON), "Raw holds its own copy")
	require.Equal(t, "a", r.GetName())
	require.Equal(t, "ns", r.GetNamespace())
	require.Equal(t, "7", r.GetResourceVersion())
	require.Equal(t, map[string]string{"k": "<v>"}, r.GetAnnotations())
}
