package webhook

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/jsonpatch"
)

func TestMutationPatchBadInput(t *testing.T) {
	_, err := mutationPatch([]byte(`{}`), []byte(`{"a":`), []byte(`{}`))
	require.ErrorContains(t, err, "the object before")
	_, err = mutationPatch([]byte(`{}`), []byte(`{}`), []byte(`nope`))
	require.ErrorContains(t, err, "the object after")
	_, err = mutationPatch([]byte("{\"a/b\":{\"\xff\":0}}"), []byte(`{}`), []byte(`{"b":1}`))
	require.ErrorContains(t, err, "the object sent: not valid UTF-8")
}

// TestMutationPatchAnchorsInRaw: the typed encoding has a zero-valued
// spec the sent object lacks, and lacks a field the sent object has; the
// patch must apply to the sent object and change only what the handler
// changed.
func TestMutationPatchAnchorsInRaw(t *testing.T) {
	raw := `{"metadata":{"name":"a","unknown":"keep"},"extra":1}`
	before := `{"metadata":{"name":"a"},"spec":{"size":0}}`
	after := `{"metadata":{"name":"a","labels":{"x":"y"}},"spec":{"size":3}}`
	patch, err := mutationPatch([]byte(raw), []byte(before), []byte(after))
	require.NoError(t, err)
	var ops []jsonpatch.Op
	require.NoError(t, json.Unmarshal(patch, &ops))
	got, err := applyOps(decodeJSON(t, []byte(raw)), ops)
	require.NoError(t, err, "patch %s", patch)
	want := `{"metadata":{"name":"a","unknown":"keep","labels":{"x":"y"}},"extra":1,"spec":{"size":3}}`
	require.Equal(t, normalize(decodeJSON(t, []byte(want))), normalize(got), "patch %s", patch)

	none, err := mutationPatch([]byte(raw), []byte(before), []byte(before))
	require.NoError(t, err)
	require.Nil(t, none)
}

func decodeJSON(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(b, &v))
	return v
}

func normalize(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// applyOps applies an encoded patch's operations as the API server
// would, after the values went through JSON.
func applyOps(doc any, ops []jsonpatch.Op) (any, error) {
	return jsonpatch.Apply(doc, ops)
}
