package watch

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/kwatch/kwatch/internal/pbwire"
	"github.com/kwatch/kwatch/kube"
)

// DecodeObject decodes one object body of the API server into a fresh T:
// JSON, or when contentType names protobuf an enveloped object message
// (T must then decode protobuf: see ProtobufObject). Strings are interned
// as in lists and watches unless the client's
// Config.Encoding.NoProtobufIntern asks otherwise for protobuf. Bad input is a *DecodeError naming what was
// wrong; it never panics. The caller bounds the body's size.
func DecodeObject[T Object](c *kube.Client, body []byte, contentType string) (T, error) {
	return decodeObject[T](c, body, contentType, false)
}

// DecodeObjectAliasing is DecodeObject of a body the caller hands over
// for good, as the write client does with each answer it reads: a
// protobuf object of a type of k8s.io/api decodes from its field table
// (internal/protodec) with its strings pointing into body, uninterned, as
// RawCodec decodes a stored object. That costs a third of the allocations
// of the generated Unmarshal and none of the interning; body must then
// never change, and stays in memory as long as the object does. Other
// objects decode as DecodeObject decodes them.
func DecodeObjectAliasing[T Object](c *kube.Client, body []byte, contentType string) (T, error) {
	return decodeObject[T](c, body, contentType, true)
}

// decodeObject is DecodeObject, and with alias DecodeObjectAliasing.
func decodeObject[T Object](c *kube.Client, body []byte, contentType string, alias bool) (T, error) {
	var zero T
	fail := func(err error) (T, error) { return zero, &DecodeError{What: "object", Err: err} }
	if !kube.IsProtobuf(contentType) {
		return decodeJSONObject[T](body)
	}
	codec := newProtoCodec[T](!c.InternProtobuf())
	if codec == nil {
		return fail(fmt.Errorf("the server answered protobuf, which %T cannot decode", zero))
	}
	env, err := pbwire.Unwrap(body)
	if err != nil {
		return fail(err)
	}
	if env.Kind == "Status" {
		return fail(errors.New("the body is a Status, not an object"))
	}
	if alias {
		if obj, ok := codec.tableDecode(env.Raw); ok {
			return obj, nil
		}
	}
	obj, err := codec.decode(env.Raw)
	if err != nil {
		return fail(err)
	}
	return obj, nil
}

// decodeJSONObject decodes a JSON object body into a fresh T.
func decodeJSONObject[T Object](body []byte) (obj T, err error) {
	fail := func(err error) error { return &DecodeError{What: "object", Err: err} }
	i := 0
	for i < len(body) && isSpace(body[i]) {
		i++
	}
	if i == len(body) || body[i] != '{' {
		var zero T
		return zero, fail(errors.New("the body is not a JSON object"))
	}
	defer func() {
		if p := recover(); p != nil {
			var zero T
			obj, err = zero, fail(fmt.Errorf("JSON decoder panicked: %v", p))
		}
	}()
	if ok, err := decodeRawJSON(&obj, body); ok {
		if err != nil {
			return obj, fail(err)
		}
		return obj, nil
	}
	if nestsWithoutBound(reflect.TypeFor[T]()) {
		// DecodeObject and RawCodec both come here; a Raw's body has
		// passed its scanner's count already, and counting again is cheap.
		if err := checkJSONNesting(body); err != nil {
			var zero T
			return zero, fail(err)
		}
	}
	iter := json.BorrowIterator(body)
	defer json.ReturnIterator(iter)
	iter.ReadVal(&obj)
	if iter.Error != nil {
		var zero T
		return zero, fail(fmt.Errorf("does not decode into %T: %w", obj, iter.Error))
	}
	return obj, nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
