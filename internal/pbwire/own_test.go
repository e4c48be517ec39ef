package pbwire

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type meta struct{}

func (*meta) Unmarshal([]byte) error { return nil }

type typeMeta struct{}

func (*typeMeta) Unmarshal([]byte) error { return nil }

type slim struct {
	meta
	X string
}

type generated struct {
	typeMeta
	meta
}

func (*generated) Unmarshal([]byte) error { return nil }

type plain struct{}

func (*plain) Unmarshal([]byte) error { return nil }

type deeper struct{ slim }

type none struct{ X int }

func TestHasOwnMethod(t *testing.T) {
	for typ, want := range map[reflect.Type]bool{
		reflect.TypeFor[*slim]():      false, // only the embedded metadata's
		reflect.TypeFor[*deeper]():    false,
		reflect.TypeFor[*generated](): true, // two embedded providers collide: its own
		reflect.TypeFor[*plain]():     true,
		reflect.TypeFor[*none]():      false,
	} {
		if got := HasOwnMethod(typ, "Unmarshal"); got != want {
			t.Errorf("%v: got %v, want %v", typ, got, want)
		}
	}
}

// BenchmarkHasOwnMethod: asked for every write's answer, it must not look
// methods up each time.
func BenchmarkHasOwnMethod(b *testing.B) {
	t := reflect.TypeFor[*metav1.Status]()
	for b.Loop() {
		if !HasOwnMethod(t, "Unmarshal") {
			b.Fatal("a Status has its own Unmarshal")
		}
	}
}
