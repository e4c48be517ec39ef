package printers

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const jsonpathDoc = `{"kind":"List","items":[
 {"metadata":{"name":"a","labels":{"app":"web","x.y/z":"1"}},"spec":{"n":3,"ports":[{"p":80},{"p":443}]},"status":{"phase":"Running","ok":true,"f":1.5}},
 {"metadata":{"name":"b","labels":{"app":"db"}},"spec":{"n":1,"ports":[]},"status":{"phase":"Pending","ok":false,"f":null}},
 {"metadata":{"name":"c"},"spec":{"n":10},"status":{"phase":"Running"}}]}`

func TestJSONPath(t *testing.T) {
	data, err := DecodeJSON([]byte(jsonpathDoc))
	require.NoError(t, err)
	tests := []struct {
		tmpl, want string
	}{
		{"{.kind}", "List"},
		{"kind: {kind}", "kind: List"},
		{"{.items[*].metadata.name}", "a b c"},
		{"{$.items[0].metadata.name}", "a"},
		{"{.items[-1].metadata.name}", "c"},
		{"{.items[0:2].metadata.name}", "a b"},
		{"{.items[::2].metadata.name}", "a c"},
		{"{.items[-2:].metadata.name}", "b c"},
		{"{.items[0,2].metadata.name}", "a c"},
		{"{.items[5].metadata.name}", ""},
		{"{.items[0].metadata['name','labels']}", `a {"app":"web","x.y/z":"1"}`},
		{"{.items[0]['metadata.name']}", "a"},
		{`{.items[0].metadata.labels.x\.y/z}`, "1"},
		{"{.items[0].metadata.labels['x.y/z']}", ""}, // kubectl splits the quoted key at dots
		{"{.items[0].spec.ports}", `[{"p":80},{"p":443}]`},
		{"{.items[0].spec.ports[*].p}", "80 443"},
		{"{.items[0].status.ok} {.items[0].status.f} {.items[1].status.f}", "true 1.5 null"},
		{"{.items[0].spec.*}", `3 [{"p":80},{"p":443}]`},
		{"{..p}", "80 443"},
		{"{.items[*].metadata.labels.app}", "web db"},
		{`{.items[?(@.status.phase=="Running")].metadata.name}`, "a c"},
		{`{.items[?(@.status.phase!='Running')].metadata.name}`, "b"},
		{"{.items[?(@.spec.n>2)].metadata.name}", "a c"},
		{"{.items[?(@.spec.n<=3)].metadata.name}", "a b"},
		{"{.items[?(@.status.ok==true)].metadata.name}", "a"},
		{"{.items[?(@.metadata.labels)].metadata.name}", "a b"},
		{"{.items[?(@.spec.n==@.spec.n)].metadata.name}", "a b c"},
		{`{range .items[*]}{.metadata.name}={.spec.n}{"\n"}{end}`, "a=3\nb=1\nc=10\n"},
		{`{range .items[*]}[{range .spec.ports[*]}{.p},{end}]{end}`, "[80,443,][][]"},
		{`{"a\tb"}`, "a\tb"},
		{"{.items[*].nothing}", ""},
		{"plain text", "plain text"},
	}
	for _, tt := range tests {
		t.Run(tt.tmpl, func(t *testing.T) {
			jp, err := ParseJSONPath(tt.tmpl)
			require.NoError(t, err)
			var b bytes.Buffer
			require.NoError(t, jp.Execute(&b, data))
			require.Equal(t, tt.want, b.String())
		})
	}
}

func TestJSONPathErrors(t *testing.T) {
	data, err := DecodeJSON([]byte(jsonpathDoc))
	require.NoError(t, err)
	for _, tmpl := range []string{"{.a", "{end}", "{range .items[*]}", "{.items[}", "{.items[x]}", `{"\q"}`, "{}", "{.items[?(@.a=~x)]}"} {
		_, err := ParseJSONPath(tmpl)
		require.Error(t, err, "%q parses", tmpl)
		require.Contains(t, err.Error(), "jsonpath", tmpl)
	}
	jp, err := ParseJSONPath("{.items[0].nothing}")
	require.NoError(t, err)
	jp.AllowMissing = false
	err = jp.Execute(&bytes.Buffer{}, data)
	require.ErrorContains(t, err, `error executing jsonpath "{.items[0].nothing}": nothing is not found`)
	jp, err = ParseJSONPath("{.items[7]}")
	require.NoError(t, err)
	jp.AllowMissing = false
	require.ErrorContains(t, jp.Execute(&bytes.Buffer{}, data), "array index out of bounds: index 7, length 3")
}

func TestCustomColumns(t *testing.T) {
	data, err := DecodeJSON([]byte(jsonpathDoc))
	require.NoError(t, err)
	cc, err := ParseCustomColumns("NAME:.metadata.name,PORTS:{.spec.ports[*].p},APP:metadata.labels.app")
	require.NoError(t, err)
	var rows [][]string
	for _, it := range data.(map[string]any)["items"].([]any) {
		cells, err := cc.Cells(it)
		require.NoError(t, err)
		rows = append(rows, cells)
	}
	var b bytes.Buffer
	require.NoError(t, WriteColumns(&b, cc.Headers, rows, false))
	require.Equal(t, "NAME   PORTS    APP\na      80,443   web\nb      <none>   db\nc      <none>   <none>\n", b.String())

	file, err := ParseCustomColumnsFile("NAME   N\n.metadata.name   .spec.n\n")
	require.NoError(t, err)
	require.Equal(t, []string{"NAME", "N"}, file.Headers)
	for _, bad := range []string{"NAME", ":.x", "A:{.x", "A:.x{y}"} {
		_, err := ParseCustomColumns(bad)
		require.Error(t, err, bad)
	}
}

func TestSortStable(t *testing.T) {
	items := []string{"a", "b", "c", "d", "e"}
	keys := []any{"web-2", nil, "web-10", int64(3), "web-2"}
	_, err := keyLess(int64(1), "x")
	require.Error(t, err, "a number and a string do not compare")
	keys[3] = "db"
	require.NoError(t, SortStable(items, keys))
	require.Equal(t, []string{"b", "d", "c", "a", "e"}, items, "missing first, then byte order, ties in order")
	nums := []string{"x", "y", "z"}
	require.NoError(t, SortStable(nums, []any{int64(10), 1.5, int64(2)}))
	require.Equal(t, []string{"y", "z", "x"}, nums)
}

// FuzzJSONPath: any template either fails to parse with an error or runs
// on any document without panicking.
func FuzzJSONPath(f *testing.F) {
	for _, s := range []string{"{.kind}", "{range .items[*]}{.a}{end}", `{.items[?(@.a=="x")].b}`, "{..a}", "{.a[1:-1:2]}",
		"{.a['b','c']}", `{"\n"}`, "{.a\\.b}", "x{", "{{}}", "{.a[?(@)]}"} {
		f.Add(s, jsonpathDoc)
	}
	f.Fuzz(func(t *testing.T, tmpl, doc string) {
		jp, err := ParseJSONPath(tmpl)
		if err != nil {
			require.True(t, strings.HasPrefix(err.Error(), "jsonpath "), "error names the template: %v", err)
			return
		}
		data, err := DecodeJSON([]byte(doc))
		if err != nil {
			return
		}
		for _, allow := range []bool{true, false} {
			jp.AllowMissing = allow
			_ = jp.Execute(&bytes.Buffer{}, data)
		}
	})
}

// FuzzCustomColumns: any spec either fails with an error or yields as many
// headers as cells for any document.
func FuzzCustomColumns(f *testing.F) {
	for _, s := range []string{"NAME:.metadata.name", "A:{.a},B:b.c[*]", "X:.items[?(@.a==1)].b", ":x", "A:", "A:{.a"} {
		f.Add(s, jsonpathDoc)
	}
	f.Fuzz(func(t *testing.T, spec, doc string) {
		cc, err := ParseCustomColumns(spec)
		if err != nil {
			return
		}
		data, err := DecodeJSON([]byte(doc))
		if err != nil {
			return
		}
		cells, err := cc.Cells(data)
		if err == nil {
			require.Len(t, cells, len(cc.Headers))
		}
	})
}
