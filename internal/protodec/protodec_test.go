package protodec

import (
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// sampleMeta is an object's metadata with every kind of field set.
func sampleMeta() metav1.ObjectMeta {
	ctl, block := true, false
	grace := int64(30)
	del := metav1.NewTime(time.Unix(1700000000, 0))
	return metav1.ObjectMeta{
		Name: "web-7d4b9", GenerateName: "web-", Namespace: "default", UID: "8f7d0b2e",
		ResourceVersion: "12345", Generation: 7,
		CreationTimestamp:          metav1.NewTime(time.Unix(1690000000, 0)),
		DeletionTimestamp:          &del,
		DeletionGracePeriodSeconds: &grace,
		Labels:                     map[string]string{"app": "web", "tier": "frontend", "": "empty key"},
		Annotations:                map[string]string{"a": "", "b": "2"},
		OwnerReferences: []metav1.OwnerReference{
			{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "1", Controller: &ctl, BlockOwnerDeletion: &block},
			{APIVersion: "v1", Kind: "Node", Name: "n", UID: "2"},
		},
		Finalizers: []string{"a/b", "c/d", ""},
		ManagedFields: []metav1.ManagedFieldsEntry{{
			Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1",
			Time: &del, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{}}`)},
			Subresource: "status",
		}},
	}
}

// decodeBoth decodes b into fresh values of T with the generated Unmarshal
// and with the plan, and requires the plan to agree whenever it succeeds.
// It returns whether the plan decoded b itself.
func decodeBoth[T any, PT interface {
	*T
	Unmarshal([]byte) error
}](t testing.TB, b []byte, alias bool) bool {
	t.Helper()
	want := PT(new(T))
	wantErr := want.Unmarshal(b)
	p := For(reflect.TypeFor[T]())
	require.NotNil(t, p)
	got := PT(new(T))
	if err := p.Decode(b, reflectPtr(got), alias); err != nil {
		return false
	}
	if wantErr != nil {
		t.Fatalf("the plan decoded what the generated code refuses (%v): %x", wantErr, b)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the plan decoded\n%#v\nthe generated code\n%#v\nfrom %x", got, want, b)
	}
	return true
}

func TestPlanDecodesAsTheGeneratedCode(t *testing.T) {
	meta := sampleMeta()
	b, err := meta.Marshal()
	require.NoError(t, err)
	for _, alias := range []bool{false, true} {
		require.True(t, decodeBoth[metav1.ObjectMeta](t, b, alias), "alias %v", alias)
	}
	pm := metav1.PartialObjectMetadata{ObjectMeta: meta}
	b, err = pm.Marshal()
	require.NoError(t, err)
	require.True(t, decodeBoth[metav1.PartialObjectMetadata](t, b, true))

	st := metav1.Status{Status: "Failure", Message: "no", Reason: metav1.StatusReasonNotFound, Code: 404,
		Details: &metav1.StatusDetails{Name: "x", Kind: "pods", UID: "u", RetryAfterSeconds: 3,
			Causes: []metav1.StatusCause{{Type: "FieldValueInvalid", Message: "bad", Field: "spec"}}}}
	b, err = st.Marshal()
	require.NoError(t, err)
	require.True(t, decodeBoth[metav1.Status](t, b, true))
}

func TestPlanOfTypes(t *testing.T) {
	for _, c := range []struct {
		typ   reflect.Type
		table bool
	}{
		{reflect.TypeFor[metav1.ObjectMeta](), true},
		{reflect.TypeFor[metav1.Status](), true},
		{reflect.TypeFor[metav1.Time](), false},     // handwritten
		{reflect.TypeFor[metav1.FieldsV1](), false}, // handwritten, though tagged
		{reflect.TypeFor[resource.Quantity](), false},
		{reflect.TypeFor[runtime.RawExtension](), false}, // an untagged field
	} {
		p := For(c.typ)
		require.NotNil(t, p, "%v", c.typ)
		require.Equal(t, c.table, p.Table(), "%v", c.typ)
	}
	require.Nil(t, For(reflect.TypeFor[struct{ A int }]()), "a type with no Unmarshal has no plan")
}

// TestAliasedStringsPointIntoTheMessage checks the point of alias.
func TestAliasedStringsPointIntoTheMessage(t *testing.T) {
	meta := sampleMeta()
	b, err := meta.Marshal()
	require.NoError(t, err)
	var got metav1.ObjectMeta
	require.NoError(t, For(reflect.TypeFor[metav1.ObjectMeta]()).Decode(b, reflectPtr(&got), true))
	require.True(t, within(b, got.Name) && within(b, got.Finalizers[1]) && within(b, got.Labels["app"]))
	require.NoError(t, For(reflect.TypeFor[metav1.ObjectMeta]()).Decode(b, reflectPtr(new(metav1.ObjectMeta)), false))
	var copied metav1.ObjectMeta
	require.NoError(t, For(reflect.TypeFor[metav1.ObjectMeta]()).Decode(b, reflectPtr(&copied), false))
	require.False(t, within(b, copied.Name))
}
