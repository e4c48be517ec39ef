package controller_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/kube"
)

// TestOwnedObjectsShareNoManagedFieldsBytes (found by a second reading
// of GetOwned): the JSON decoder interns metav1.FieldsV1.Raw (the bytes of
// an interned string), so objects with the same managedFields decoded for
// their callers alone would share those bytes, and a reader changing its
// own object's in place would change another reader's, and the shared
// cache's. Reader.Get of a JSON object in a compact cache copies it.
func TestOwnedObjectsShareNoManagedFieldsBytes(t *testing.T) {
	h, c := start(t)
	mf := `"managedFields":[{"manager":"kubectl","operation":"Apply","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:n":{}}}}]`
	for _, name := range []string{"a", "b", "c"} {
		_, err := h.Server.Create("configmaps", []byte(`{"metadata":{"namespace":"demo","name":"`+name+`",`+mf+`},"data":{"n":"1"}}`))
		require.NoError(t, err)
	}
	m, err := controller.NewManager(c, controller.ManagerOptions{Namespace: "demo", Logger: quiet()})
	require.NoError(t, err)
	cms, err := controller.Cache(m, kube.Typed[*Obj](kube.ConfigMaps))
	require.NoError(t, err)
	sh, err := controller.Informer(m, kube.Typed[*Obj](kube.ConfigMaps))
	require.NoError(t, err)
	run(t, m)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	a, ok, err := cms.Get(ctx, controller.Key{Namespace: "demo", Name: "a"})
	require.NoError(t, err)
	require.True(t, ok)
	b, ok, err := cms.Get(ctx, controller.Key{Namespace: "demo", Name: "b"})
	require.NoError(t, err)
	require.True(t, ok)
	require.Len(t, a.ManagedFields, 1)
	require.NotNil(t, a.ManagedFields[0].FieldsV1)
	want := string(b.ManagedFields[0].FieldsV1.Raw)

	// a is a's reader's to change: it edits its managedFields in place.
	raw := a.ManagedFields[0].FieldsV1.Raw
	for i := range raw {
		if raw[i] == 'n' {
			raw[i] = 'X'
		}
	}
	require.Equal(t, want, string(b.ManagedFields[0].FieldsV1.Raw),
		"another reader's owned object changed under it: the managedFields bytes are shared")
	shared, ok := sh.Store().Get("demo/c")
	require.True(t, ok)
	require.Equal(t, want, string(shared.ManagedFields[0].FieldsV1.Raw),
		"a third object decoded later for the shared cache got the changed bytes")
}
