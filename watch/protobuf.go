package watch

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"unsafe"

	"github.com/kwatch/kwatch/internal/pbwire"
	"github.com/kwatch/kwatch/internal/protodec"
	"github.com/kwatch/kwatch/kube"
)

// acceptProtobuf asks for protobuf and lets the server answer JSON for the
// resources it cannot encode so (custom resources).
const acceptProtobuf = kube.ContentTypeProtobuf + "," + kube.ContentTypeJSON

// ProtobufObject is an object type that decodes the API server's protobuf
// encoding of itself, as every type of k8s.io/api does through its
// generated Unmarshal method (declared on the type itself: see
// DecodesProtobuf). Unless Config.Encoding.ContentType is
// ContentTypeJSON, lists and watches of such a type ask for protobuf.
type ProtobufObject interface {
	Unmarshal([]byte) error
}

// DecodesProtobuf reports whether T decodes the API server's protobuf
// encoding of itself: a pointer type with an Unmarshal of its own, as every
// k8s.io/api type has. A struct whose Unmarshal is promoted from one
// embedded field (a slim type embedding metav1.ObjectMeta alone) does not.
func DecodesProtobuf[T any]() bool {
	var zero T
	if _, ok := any(zero).(ProtobufObject); !ok {
		return false
	}
	t := reflect.TypeFor[T]()
	return t.Kind() == reflect.Pointer && pbwire.HasOwnMethod(t, "Unmarshal")
}

// protoCodec allocates and decodes objects of a pointer type T that
// implements ProtobufObject.
type protoCodec[T Object] struct {
	elem   reflect.Type
	intern walker // interns a decoded object's strings; nil if it has none
	deep   bool   // T can nest without bound: its messages' depth is checked first
	// table decodes T from its field table, strings aliasing the message
	// (tableDecode); nil when T decodes with its generated Unmarshal alone.
	table *protodec.Plan
}

// newProtoCodec returns the codec of T, or nil when T cannot decode
// protobuf: it is not a pointer to a type with an Unmarshal method of its
// own. A slim struct embedding metav1.ObjectMeta alone has ObjectMeta's
// Unmarshal, which would read a whole object's message as metadata; it is
// decoded from JSON (see pbwire.HasOwnMethod). The codec interns each
// decoded object's strings unless noIntern.
func newProtoCodec[T Object](noIntern bool) *protoCodec[T] {
	if !DecodesProtobuf[T]() {
		return nil
	}
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Pointer {
		return nil
	}
	c := &protoCodec[T]{elem: t.Elem(), deep: nestsWithoutBound(t.Elem())}
	if !noIntern {
		c.intern = planOf(t.Elem())
	}
	if !c.deep {
		if p := protodec.For(c.elem); p != nil && p.Table() {
			c.table = p
		}
	}
	return c
}

// tableDecode decodes the message raw into a fresh T from T's field table,
// its strings pointing into raw, which must never change. It reports
// false when T has no table, or raw is malformed or holds what the table
// leaves to the generated code: decode then decides.
func (c *protoCodec[T]) tableDecode(raw []byte) (T, bool) {
	if c.table == nil {
		var zero T
		return zero, false
	}
	obj := reflect.New(c.elem)
	if c.table.Decode(raw, obj.UnsafePointer(), true) != nil {
		var zero T
		return zero, false
	}
	return obj.Interface().(T), true
}

// protoAccept is the Accept header for c's lists and watches of T:
// protobuf first when T can decode it and the client does not insist on
// JSON.
func protoAccept[T Object](c *kube.Client) (string, *protoCodec[T]) {
	if c.ContentType() == kube.ContentTypeJSON {
		return acceptJSON, nil
	}
	codec := newProtoCodec[T](!c.InternProtobuf())
	if codec == nil {
		return acceptJSON, nil
	}
	return acceptProtobuf, codec
}

// decode unmarshals one object message into a fresh T. The generated
// Unmarshal copies what it keeps, so raw may be reused afterwards.
func (c *protoCodec[T]) decode(raw []byte) (obj T, err error) {
	defer func() {
		// Generated code fed hostile input must end the stream, not the process.
		if p := recover(); p != nil {
			var zero T
			obj, err = zero, fmt.Errorf("protobuf decoder panicked: %v", p)
		}
	}()
	if c.deep {
		if err := checkProtoNesting(raw); err != nil {
			var zero T
			return zero, err
		}
	}
	obj = reflect.New(c.elem).Interface().(T)
	if err := any(obj).(ProtobufObject).Unmarshal(raw); err != nil {
		var zero T
		return zero, fmt.Errorf("object does not decode into %T: %w", obj, err)
	}
	if c.intern != nil {
		c.intern(*(*unsafe.Pointer)(unsafe.Pointer(&obj))) // T is a pointer type
	}
	return obj, nil
}

// decodeProtoEvent decodes one length-delimited watch frame: a WatchEvent
// whose object is an enveloped T, or an enveloped Status for ERROR.
func decodeProtoEvent[T Object](c *protoCodec[T], frame []byte, off int64) (Event[T], error) {
	typ, raw, err := readWatchEvent(frame)
	what := "watch event"
	if typ.Valid() {
		what = string(typ) + " event"
	}
	if err != nil {
		return Event[T]{}, &DecodeError{Offset: off, What: what, Err: err}
	}
	env, err := pbwire.Unwrap(raw)
	if err != nil {
		return Event[T]{}, &DecodeError{Offset: off, What: what, Err: err}
	}
	if typ == Error {
		return Event[T]{}, statusFromProtoEvent(env)
	}
	obj, err := c.decode(env.Raw)
	if err != nil {
		return Event[T]{}, &DecodeError{Offset: off, What: what, Err: err}
	}
	return Event[T]{Type: typ, Object: obj}, nil
}

// statusFromProtoEvent is the StatusError of a protobuf ERROR event.
func statusFromProtoEvent(env pbwire.Envelope) *kube.StatusError {
	if env.Kind != "Status" {
		return &kube.StatusError{Code: http.StatusInternalServerError, Reason: "InternalError",
			Message: fmt.Sprintf("ERROR event with an undecodable object: object of kind %q", pbwire.Clip(env.Kind))}
	}
	return kube.EventStatus(env.Raw, true)
}

// errWrongEncoding is returned when the server answers protobuf to a
// client that did not ask for it.
var errWrongEncoding = errors.New("the server answered protobuf, which was not asked for")

// listKindOK reports whether an envelope's kind can be a list.
func listKindOK(kind string) bool { return kind == "" || strings.HasSuffix(kind, "List") }
