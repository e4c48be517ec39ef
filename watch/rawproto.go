package watch

import (
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/internal/pbwire"
)

// ObjectMeta's field numbers in the API server's protobuf encoding; every
// object's message has its ObjectMeta as field 1.
const (
	pbMetadata    = 1
	pbName        = 1
	pbNamespace   = 3
	pbUID         = 5
	pbRV          = 6
	pbGeneration  = 7
	pbLabels      = 11
	pbAnnotations = 12
)

// scanProtoMeta checks the framing of the object message b and reads the
// metadata fields a Raw keeps.
func scanProtoMeta(b []byte, m *rawMeta) error {
	meta, err := protoMetaField(b)
	if err != nil || meta == nil {
		return err
	}
	m.meta = meta
	s := pbwire.NewScanner(meta)
	var f pbwire.Field
	for s.Next(&f) {
		if err := protoMetaValue(m, &f); err != nil {
			return err
		}
	}
	if err := s.Err(); err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	return nil
}

// protoMetaField returns the content of field 1 (metadata) of b, checking
// the framing of every top-level field. A metadata field that appears more
// than once is refused: a protobuf decoder merges the occurrences, which a
// Raw, reading one of them in place, could not match (the API server
// writes it once).
func protoMetaField(b []byte) ([]byte, error) {
	var meta []byte
	seen := false
	s := pbwire.NewScanner(b)
	var f pbwire.Field
	for s.Next(&f) {
		if f.Num == pbMetadata {
			if f.Wire != pbwire.Bytes {
				return nil, errors.New("metadata is not a message")
			}
			if seen {
				return nil, errors.New("metadata appears more than once")
			}
			meta, seen = f.Data, true
		}
	}
	return meta, s.Err()
}

// protoMetaValue keeps f when it is one of the fields a Raw keeps.
func protoMetaValue(m *rawMeta, f *pbwire.Field) error {
	want := pbwire.Bytes
	if f.Num == pbGeneration {
		want = pbwire.Varint
	}
	switch f.Num {
	case pbName, pbNamespace, pbUID, pbRV, pbGeneration, pbLabels:
		if f.Wire != want {
			return fmt.Errorf("metadata field %d has wire type %d", f.Num, f.Wire)
		}
	default:
		return nil
	}
	switch f.Num {
	case pbName:
		m.name = f.Data
	case pbNamespace:
		m.ns = f.Data
	case pbUID:
		m.uid = f.Data
	case pbRV:
		m.rv = f.Data
	case pbGeneration:
		m.gen = int64(f.Val)
	case pbLabels:
		return protoLabel(f.Data)
	}
	return nil
}

// protoLabel checks one map entry of labels (1 key, 2 value), which a Raw
// reads in place later.
func protoLabel(entry []byte) error {
	s := pbwire.NewScanner(entry)
	var f pbwire.Field
	for s.Next(&f) {
		if (f.Num == 1 || f.Num == 2) && f.Wire != pbwire.Bytes {
			return fmt.Errorf("label field %d has wire type %d", f.Num, f.Wire)
		}
	}
	if err := s.Err(); err != nil {
		return fmt.Errorf("label: %w", err)
	}
	return nil
}

// protoRawMeta decodes the metadata of a protobuf body.
func protoRawMeta(body []byte) (meta *metav1.ObjectMeta, err error) {
	defer func() {
		if p := recover(); p != nil {
			meta, err = nil, fmt.Errorf("metadata decoder panicked: %v", p)
		}
	}()
	b, err := protoMetaField(body)
	if err != nil {
		return nil, err
	}
	meta = new(metav1.ObjectMeta)
	if err := meta.Unmarshal(b); err != nil {
		return nil, fmt.Errorf("metadata does not decode: %w", err)
	}
	return meta, nil
}
