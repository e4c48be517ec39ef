package jsonpatch_test

import (
	"encoding/json"
	"fmt"

	"github.com/kwatch/kwatch/internal/jsonpatch"
)

// The patch between two versions of an object, and applied to the first.
func Example() {
	var before, after any
	_ = json.Unmarshal([]byte(`{"metadata":{"labels":{"app":"web"}},"spec":{"replicas":3}}`), &before)
	_ = json.Unmarshal([]byte(`{"metadata":{"labels":{"app":"web","tier/front":"yes"}},"spec":{"replicas":5}}`), &after)
	ops := jsonpatch.Diff(before, after)
	patch, _ := json.Marshal(ops)
	fmt.Println(string(patch))

	got, err := jsonpatch.Apply(before, ops)
	fmt.Println(err, jsonpatch.Equal(got, after))
	// Output:
	// [{"op":"add","path":"/metadata/labels/tier~1front","value":"yes"},{"op":"replace","path":"/spec/replicas","value":5}]
	// <nil> true
}
