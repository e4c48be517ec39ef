package watch

import (
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type walkInner struct {
	Image string
	Args  []string
	Tags  [2]string
	Count int
}

type walkNode struct {
	Name  string
	Child *walkNode // a recursive type
}

type walkObj struct {
	Meta      metav1.ObjectMeta
	Phase     walkPhase
	Inner     walkInner
	Ptr       *walkInner
	List      []walkInner
	Node      *walkNode
	Labels    map[string]string
	Any       any
	When      metav1.Time
	private   string
	NoStrings struct{ A, B int }
}

type walkPhase string

// fresh builds an object whose every string is a new allocation, as a
// generated Unmarshal leaves them.
func fresh(s string) string { return strings.Clone(s) }

func newWalkObj() *walkObj {
	return &walkObj{
		Meta: metav1.ObjectMeta{Namespace: fresh("team-a"), Name: fresh("web-1"),
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: fresh("kubelet"),
				FieldsV1: &metav1.FieldsV1{Raw: []byte(fresh(`{"f:status":{}}`))}}}},
		Phase:   walkPhase(fresh("Running")),
		Inner:   walkInner{Image: fresh("nginx:1.27"), Args: []string{fresh("--port=80")}, Tags: [2]string{fresh("a"), fresh("b")}},
		Ptr:     &walkInner{Image: fresh("proxy:2")},
		List:    []walkInner{{Image: fresh("sidecar:3")}, {Image: fresh("sidecar:3")}},
		Node:    &walkNode{Name: fresh("root"), Child: &walkNode{Name: fresh("leaf")}},
		Labels:  map[string]string{fresh("app"): fresh("web")},
		When:    metav1.NewTime(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)),
		private: fresh("hidden"),
	}
}

func same(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

func TestInternWalkSharesEveryReachableString(t *testing.T) {
	walk := planOf(reflectTypeOf[walkObj]())
	require.NotNil(t, walk)
	a, b := newWalkObj(), newWalkObj()
	require.Equal(t, a, b)
	require.False(t, same(a.Meta.Name, b.Meta.Name))
	walk(unsafe.Pointer(a))
	walk(unsafe.Pointer(b))
	require.Equal(t, newWalkObj(), a, "interning changes no value")
	require.Equal(t, a, b)

	for name, pair := range map[string][2]string{
		"struct field":     {a.Meta.Name, b.Meta.Name},
		"named string":     {string(a.Phase), string(b.Phase)},
		"slice of strings": {a.Inner.Args[0], b.Inner.Args[0]},
		"array":            {a.Inner.Tags[1], b.Inner.Tags[1]},
		"pointer":          {a.Ptr.Image, b.Ptr.Image},
		"slice of structs": {a.List[1].Image, b.List[0].Image},
		"recursive type":   {a.Node.Child.Name, b.Node.Child.Name},
		"managedFields":    {a.Meta.ManagedFields[0].Manager, b.Meta.ManagedFields[0].Manager},
	} {
		require.True(t, same(pair[0], pair[1]), name)
	}
	require.Same(t, unsafe.SliceData(a.Meta.ManagedFields[0].FieldsV1.Raw), unsafe.SliceData(b.Meta.ManagedFields[0].FieldsV1.Raw))
	require.False(t, same(a.private, b.private), "unexported fields are left alone")
	require.Same(t, a.When.Location(), b.When.Location())
}

func TestInternWalkSkipsTypesWithoutStrings(t *testing.T) {
	require.Nil(t, planOf(reflectTypeOf[struct {
		A int
		B []float64
		M map[string]string
		t string
	}]()))
}

func reflectTypeOf[T any]() reflect.Type { return reflect.TypeFor[T]() }

func TestInternStringKeepsItsOwnCopyOnAMiss(t *testing.T) {
	tbl := &internTable{seed: interned.seed}
	first := fresh("a-string-seen-for-the-first-time")
	got := tbl.internString(first)
	require.True(t, same(first, got), "a miss stores the string itself, no copy")
	again := fresh(first)
	require.True(t, same(first, tbl.internString(again)), "a hit returns the stored string")
	require.Equal(t, first, tbl.intern([]byte(first)))
}
