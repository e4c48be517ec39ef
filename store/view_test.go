package store

import (
	"reflect"
	"testing"
)

// TestViewHasNoWriters keeps View read-only: a method that writes to the
// store must not appear on it.
func TestViewHasNoWriters(t *testing.T) {
	typ := reflect.TypeFor[View[obj]]()
	for _, name := range []string{"Upsert", "Delete", "Commit", "NewReplacement", "SetResourceVersion"} {
		if _, ok := typ.MethodByName(name); ok {
			t.Errorf("View has %s: readers could write to the cache", name)
		}
	}
}

func TestViewReadsTheStore(t *testing.T) {
	s := New(Options[obj]{})
	v := s.View()
	if _, _, err := s.Upsert(mk("ns", "a"), "1"); err != nil {
		t.Fatal(err)
	}
	got, ok := v.Get("ns/a")
	if !ok || got.Name != "a" || v.Len() != 1 || v.ResourceVersion() != "1" {
		t.Fatalf("view after upsert: got %v %v len %d rv %q", got, ok, v.Len(), v.ResourceVersion())
	}
	if objs, err := v.ByIndex(NamespaceIndex, "ns"); err != nil || len(objs) != 1 {
		t.Fatalf("ByIndex: %v %v", objs, err)
	}
	s.Delete("ns/a", "2")
	if _, ok := v.Get("ns/a"); ok || v.ResourceVersion() != "2" {
		t.Fatalf("view does not show the delete")
	}
}
