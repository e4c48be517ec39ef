package jsonpatch

import "encoding/json"

// Op is one operation of a JSON patch.
type Op struct {
	Op    string // "add", "remove" or "replace"
	Path  string // a JSON pointer: "/spec/replicas"
	Value any    // for add and replace
}

// MarshalJSON writes the operation as RFC 6902 has it: value present for
// add and replace, even when it is null, and absent for remove.
func (o Op) MarshalJSON() ([]byte, error) {
	if o.Op == "remove" {
		return json.Marshal(struct {
			Op   string `json:"op"`
			Path string `json:"path"`
		}{o.Op, o.Path})
	}
	return json.Marshal(struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}{o.Op, o.Path, o.Value})
}
