package jsonpatch

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestApply(t *testing.T) {
	tests := []struct {
		name, doc, ops, want string
	}{
		{"add member", `{"a":1}`, `[{"op":"add","path":"/b","value":2}]`, `{"a":1,"b":2}`},
		{"add replaces a member", `{"a":1}`, `[{"op":"add","path":"/a","value":2}]`, `{"a":2}`},
		{"insert into an array", `{"l":[1,3]}`, `[{"op":"add","path":"/l/1","value":2}]`, `{"l":[1,2,3]}`},
		{"append to an array", `{"l":[1]}`, `[{"op":"add","path":"/l/-","value":2},{"op":"add","path":"/l/2","value":3}]`, `{"l":[1,2,3]}`},
		{"remove from an array", `{"l":[1,2,3]}`, `[{"op":"remove","path":"/l/0"}]`, `{"l":[2,3]}`},
		{"replace in an array", `[[1]]`, `[{"op":"replace","path":"/0/0","value":"x"}]`, `[["x"]]`},
		{"escaped names", `{"a/b":{"~":1}}`, `[{"op":"remove","path":"/a~1b/~0"}]`, `{"a/b":{}}`},
		{"the whole document", `{"a":1}`, `[{"op":"replace","path":"","value":[1]}]`, `[1]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ops []Op
			require.NoError(t, json.Unmarshal([]byte(tt.ops), &ops))
			got, err := Apply(decodeJSON(t, []byte(tt.doc)), ops)
			require.NoError(t, err)
			require.Equal(t, decodeJSON(t, []byte(tt.want)), got)
		})
	}
}

func TestApplyRefuses(t *testing.T) {
	tests := []struct {
		name, doc, ops, want string
	}{
		{"replace of a missing member", `{}`, `[{"op":"replace","path":"/a","value":1}]`, `operation 0 (replace /a): no member "a"`},
		{"remove of a missing member", `{}`, `[{"op":"remove","path":"/a"}]`, `no member "a"`},
		{"missing parent", `{}`, `[{"op":"add","path":"/a/b","value":1}]`, `the parent does not exist`},
		{"index past the end", `[1]`, `[{"op":"replace","path":"/1","value":1}]`, `no array element "1"`},
		{"leading zero", `[1,2]`, `[{"op":"remove","path":"/01"}]`, `no array element "01"`},
		{"not a pointer", `{}`, `[{"op":"add","path":"a","value":1}]`, `does not start with /`},
		{"unknown operation", `{}`, `[{"op":"move","path":"/a"}]`, `unsupported operation "move"`},
		{"under a scalar", `{"a":1}`, `[{"op":"add","path":"/a/b","value":1}]`, `neither an object nor an array`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ops []Op
			require.NoError(t, json.Unmarshal([]byte(tt.ops), &ops))
			_, err := Apply(decodeJSON(t, []byte(tt.doc)), ops)
			require.ErrorContains(t, err, tt.want)
		})
	}
}

func TestPointer(t *testing.T) {
	toks := []string{"a/b", "~c", "", "d"}
	p := Join(toks)
	require.Equal(t, "/a~1b/~0c//d", p)
	got, err := Split(p)
	require.NoError(t, err)
	require.Equal(t, toks, got)
	none, err := Split("")
	require.NoError(t, err)
	require.Empty(t, none)
}

// FuzzDiff: for any two JSON documents, the patch applies to the first
// and yields the second, after both went through JSON as the patch does.
func FuzzDiff(f *testing.F) {
	f.Add([]byte(`{"a":1,"b":[1,2]}`), []byte(`{"a":2,"c":{"d":null}}`))
	f.Add([]byte(`[1,{"x":"y"}]`), []byte(`[1,{"x":"z"}]`))
	f.Add([]byte(`{"a/b":{"~":1}}`), []byte(`{"a/b":{}}`))
	f.Add([]byte("{\"a/b\":{\"\xff\":0}}"), []byte(`{"a/b":{}}`))
	f.Add([]byte(`0`), []byte(`1E1000`))
	f.Fuzz(func(t *testing.T, before, after []byte) {
		b, errB := decodeNumbers(before)
		a, errA := decodeNumbers(after)
		if errB != nil || errA != nil {
			return
		}
		ops := Diff(b, a)
		enc, err := json.Marshal(ops)
		if err != nil {
			t.Fatalf("patch %v does not encode: %v", ops, err)
		}
		var sent []Op
		d := json.NewDecoder(bytes.NewReader(enc))
		d.UseNumber() // as the API server reads numbers: 1E1000 is no float64
		if err := d.Decode(&sent); err != nil {
			t.Fatalf("patch %s does not decode: %v", enc, err)
		}
		doc, _ := decodeNumbers(before)
		got, err := Apply(doc, sent)
		if err != nil {
			t.Fatalf("patch %s of %s does not apply: %v", enc, before, err)
		}
		if !Equal(normalize(got), normalize(a)) {
			t.Fatalf("patch %s of %s gives %v, want %s", enc, before, got, after)
		}
	})
}
