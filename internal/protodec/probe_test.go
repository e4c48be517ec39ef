package protodec

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// misTagged's tag says field 2, and its Marshal writes field 1: the probe
// must catch the disagreement.
type misTagged struct {
	A string `protobuf:"bytes,2,opt,name=a"`
}

func (m *misTagged) Marshal() ([]byte, error) {
	return append([]byte{0x0a, byte(len(m.A))}, m.A...), nil
}

// wellTagged is misTagged with the tag its Marshal follows.
type wellTagged struct {
	A string `protobuf:"bytes,1,opt,name=a"`
	B *int64 `protobuf:"bytes,2,opt,name=b"` // a tag that says bytes of a number, as some k8s.io tags do
}

func (m *wellTagged) Marshal() ([]byte, error) {
	b := []byte{0x0a, byte(len(m.A))}
	b = append(b, m.A...)
	if m.B != nil {
		b = append(b, 0x10, byte(*m.B))
	}
	return b, nil
}

func TestProbeChecksTheTagsAgainstMarshal(t *testing.T) {
	var b builder
	b.building = map[reflect.Type]*Plan{}
	fields, why := b.fields(reflect.TypeFor[misTagged]())
	require.Empty(t, why)
	require.Contains(t, probe(reflect.TypeFor[misTagged](), fields), "field 2 is not encoded as the table expects")

	fields, why = b.fields(reflect.TypeFor[wellTagged]())
	require.Empty(t, why)
	require.Equal(t, wireVarint, int(fields[2].wire), "the wire type follows the Go type, not the tag")
	require.Empty(t, probe(reflect.TypeFor[wellTagged](), fields))
}

func TestUnmappedFieldsSayWhy(t *testing.T) {
	var b builder
	b.building = map[reflect.Type]*Plan{}
	for _, c := range []struct {
		typ  reflect.Type
		want string
	}{
		{reflect.TypeFor[struct {
			A []int64 `protobuf:"varint,1,rep,name=a"`
		}](), "field A"},
		{reflect.TypeFor[struct{ A string }](), "has no protobuf tag"},
		{reflect.TypeFor[struct {
			A string `protobuf:"bytes,1,opt,name=a"`
			B string `protobuf:"bytes,1,opt,name=b"`
		}](), "two fields are numbered 1"},
	} {
		_, why := b.fields(c.typ)
		require.True(t, strings.Contains(why, c.want), "%v: %q", c.typ, why)
	}
}
