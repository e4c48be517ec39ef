package watch

import (
	"context"
	stdjson "encoding/json"
	"errors"
	"net/http"
	"reflect"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/pbwire"
	"github.com/kwatch/kwatch/kube"
)

// schemaObj is a test object of a recursive type, as a CRD is through its
// JSONSchemaProps: metadata as field 1, then schema (field 2), whose
// field 1 is its child, decoded by recursion as generated code does.
type schemaObj struct {
	ProtoMeta `json:"metadata"`
	Schema    *schemaNode `json:"schema"`
}

type schemaNode struct {
	Child *schemaNode  `json:"child"`
	Items *schemaItems `json:"items"`
}

// schemaItems decodes itself with encoding/json, as JSONSchemaPropsOrArray
// does: json-iterator's depth count starts again inside it.
type schemaItems struct{ Node *schemaNode }

func (s *schemaItems) UnmarshalJSON(b []byte) error { return stdjson.Unmarshal(b, &s.Node) }

func (o *schemaObj) GetNamespace() string              { return o.Namespace }
func (o *schemaObj) GetName() string                   { return o.Name }
func (o *schemaObj) GetResourceVersion() string        { return o.ResourceVersion }
func (o *schemaObj) GetAnnotations() map[string]string { return o.Annotations }

func (o *schemaObj) Unmarshal(b []byte) error {
	s := pbwire.NewScanner(b)
	var f pbwire.Field
	for s.Next(&f) {
		switch f.Num {
		case 1:
			p := protoPod{}
			if err := p.meta(f.Data); err != nil {
				return err
			}
			o.ProtoMeta = p.ProtoMeta
		case 2:
			o.Schema = new(schemaNode)
			if err := o.Schema.unmarshal(f.Data); err != nil {
				return err
			}
		}
	}
	return s.Err()
}

func (n *schemaNode) unmarshal(b []byte) error {
	s := pbwire.NewScanner(b)
	var f pbwire.Field
	for s.Next(&f) {
		if f.Num == 1 && f.Wire == pbwire.Bytes {
			n.Child = new(schemaNode)
			if err := n.Child.unmarshal(f.Data); err != nil {
				return err
			}
		}
	}
	return s.Err()
}

// schemaMsg is a schemaObj message whose schema nests depth levels (the
// object itself is one more).
func schemaMsg(depth int) []byte {
	return pb(nil).bytes(1, pb(nil).str(1, "crd").str(3, "ns").str(6, "7")).bytes(2, fieldChain(depth-1))
}

// fieldChain is n levels of field 1 inside field 1, innermost empty, built
// in one pass: the lengths from the inside out, then the headers.
func fieldChain(n int) []byte {
	lens := make([]int, n+1) // lens[i]: the content length of level i
	for i := n - 1; i >= 0; i-- {
		lens[i] = len(pb(nil).varint(uint64(lens[i+1]))) + 1 + lens[i+1]
	}
	out := make(pb, 0, lens[0])
	for i := 1; i <= n; i++ {
		out = out.varint(1<<3 | pbwire.Bytes).varint(uint64(lens[i]))
	}
	return out
}

// schemaJSON is a schemaObj object whose schema nests depth levels of
// objects, every other one through items.
func schemaJSON(depth int) string {
	var open, shut strings.Builder
	for i := range depth {
		if i%2 == 0 {
			open.WriteString(`{"child":`)
		} else {
			open.WriteString(`{"items":`)
		}
		shut.WriteString("}")
	}
	return `{"metadata":{"name":"crd","namespace":"ns","resourceVersion":"7"},"schema":` + open.String() + `null` + shut.String() + `}`
}

func TestRecursiveTypesAreKnown(t *testing.T) {
	for typ, want := range map[reflect.Type]bool{
		reflect.TypeFor[protoPod]():            false,
		reflect.TypeFor[Raw]():                 false,
		reflect.TypeFor[schemaObj]():           true,
		reflect.TypeFor[struct{ V any }]():     true,
		reflect.TypeFor[map[string][]int]():    false,
		reflect.TypeFor[struct{ A, B *int }](): false, // a type met twice is no cycle
	} {
		assert.Equal(t, want, nestsWithoutBound(typ), "%v", typ)
	}
}

// TestDeepProtobufIsRefusedWithTheLimit: an object of a recursive type
// nested past MaxNestingDepth is refused with an error naming the limit,
// in a watch and in DecodeObject; at the limit it decodes.
func TestDeepProtobufIsRefusedWithTheLimit(t *testing.T) {
	deep := watchFrame(Added, "Widget", schemaMsg(MaxNestingDepth+1))
	c := protoClient(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", protoWatchType)
		w.Write(watchFrame(Added, "Widget", schemaMsg(MaxNestingDepth)))
		w.Write(deep)
	})
	s, err := Watch[*schemaObj](context.Background(), c, kube.Pods, kube.Scope{}, WatchOptions{})
	require.NoError(t, err)
	defer s.Close()
	ev, err := s.Next()
	require.NoError(t, err, "an object at the limit decodes")
	require.Equal(t, "crd", ev.Object.Name)
	_, err = s.Next()
	require.ErrorIs(t, err, ErrNestingTooDeep)
	var de *DecodeError
	require.True(t, errors.As(err, &de), "%T %v", err, err)
	assert.Contains(t, err.Error(), "1000-level limit")

	_, err = DecodeObject[*schemaObj](c, protoBody("Widget", schemaMsg(MaxNestingDepth+1)), kube.ContentTypeProtobuf)
	require.ErrorIs(t, err, ErrNestingTooDeep)
	obj, err := DecodeObject[*schemaObj](c, protoBody("Widget", schemaMsg(MaxNestingDepth)), kube.ContentTypeProtobuf)
	require.NoError(t, err)
	assert.Equal(t, "crd", obj.Name)
}

// TestDeepProtobufCannotExhaustTheStack: a message as deep as a frame can
// hold would take the recursive decoder past the goroutine's stack limit
// (here lowered from 1 GB to 16 MiB, which the chain would pass about
// thirty times over), which kills the process.
func TestDeepProtobufCannotExhaustTheStack(t *testing.T) {
	defer debug.SetMaxStack(debug.SetMaxStack(16 << 20))
	msg := schemaMsg(2_000_000)
	var c protoCodec[*schemaObj]
	c.elem, c.deep = reflect.TypeFor[schemaObj](), nestsWithoutBound(reflect.TypeFor[schemaObj]())
	_, err := c.decode(msg)
	require.ErrorIs(t, err, ErrNestingTooDeep)
}

// TestDeepJSONObjectIsRefused: DecodeObject (one object, not through a
// framer) counts the nesting of a recursive type before json-iterator,
// whose own count starts again inside a custom UnmarshalJSON.
func TestDeepJSONObjectIsRefused(t *testing.T) {
	c := protoClient(t, func(http.ResponseWriter, *http.Request) {})
	_, err := DecodeObject[*schemaObj](c, []byte(schemaJSON(MaxNestingDepth)), kube.ContentTypeJSON)
	require.ErrorIs(t, err, ErrNestingTooDeep)
	assert.Contains(t, err.Error(), "more than 1000 levels")
	obj, err := DecodeObject[*schemaObj](c, []byte(schemaJSON(MaxNestingDepth-10)), kube.ContentTypeJSON)
	require.NoError(t, err)
	assert.Equal(t, "crd", obj.Name)
}
