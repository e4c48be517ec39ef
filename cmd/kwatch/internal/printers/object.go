package printers

import (
	"bytes"
	"encoding/json"
	"errors"
	"time"

	jsoniter "github.com/json-iterator/go"
)

// fastJSON decodes the objects a watch carries: compatible with
// encoding/json for tags and Unmarshaler types, and faster on large objects.
var fastJSON = jsoniter.ConfigCompatibleWithStandardLibrary

// Meta is the part of metadata kwatch prints. It satisfies watch.Object
// through its pointer methods. The zero value is an object with no name.
type Meta struct {
	Name              string            `json:"name"`
	Namespace         string            `json:"namespace,omitempty"`
	ResourceVersion   string            `json:"resourceVersion,omitempty"`
	CreationTimestamp time.Time         `json:"creationTimestamp"`
	DeletionTimestamp *time.Time        `json:"deletionTimestamp,omitempty"`
	Annotations       map[string]string `json:"annotations,omitempty"`
	// Labels are for -L and --show-labels; the command clears them
	// (ClearLabels) when it prints neither, so a cache does not keep them.
	Labels map[string]string `json:"labels,omitempty"`
}

// ClearLabels drops the labels.
func (m *Meta) ClearLabels() { m.Labels = nil }

// GetNamespace returns the namespace ("" for cluster-scoped objects).
func (m *Meta) GetNamespace() string { return m.Namespace }

// GetName returns the name.
func (m *Meta) GetName() string { return m.Name }

// GetResourceVersion returns the resourceVersion.
func (m *Meta) GetResourceVersion() string { return m.ResourceVersion }

// GetAnnotations returns the annotations. The informer reads them on
// bookmarks (the initial-events-end marker), so they must survive decoding.
func (m *Meta) GetAnnotations() map[string]string { return m.Annotations }

// Object is any resource seen through its metadata only: what the generic
// NAME/AGE table and -o name need. It decodes a full object or a
// PartialObjectMetadata alike.
type Object struct {
	Meta `json:"metadata"`
}

// Raw is any resource with the server's JSON kept whole, for -o json and
// -o yaml. It decodes its metadata for the informer and keeps a private copy
// of the bytes (a decoder may reuse its buffer).
type Raw struct {
	Meta
	JSON []byte
}

// UnmarshalJSON decodes the metadata of b and keeps a copy of b.
func (r *Raw) UnmarshalJSON(b []byte) error {
	var o Object
	if err := fastJSON.Unmarshal(b, &o); err != nil {
		return err
	}
	r.Meta = o.Meta
	r.JSON = append([]byte(nil), b...)
	return nil
}

// errNotObject: the JSON is valid but not an object.
var errNotObject = errors.New("not a JSON object")

// Clean decodes raw into a generic map with metadata.managedFields removed,
// as kubectl shows objects by default. Numbers stay exact.
func Clean(raw []byte) (map[string]any, error) { return decodeObject(raw, true) }

// decodeObject decodes raw into a generic map, numbers exact, without
// metadata.managedFields when dropManaged.
func decodeObject(raw []byte, dropManaged bool) (map[string]any, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errNotObject
	}
	if md, ok := m["metadata"].(map[string]any); ok && dropManaged {
		delete(md, "managedFields")
	}
	return m, nil
}
