package watch

import (
	"encoding/binary"
	"errors"

	"github.com/kwatch/kwatch/internal/pbwire"
)

// protoPod is a test object that decodes the metadata of a real
// core/v1 Pod message (field numbers as k8s.io/api generates them:
// Pod 1 metadata; ObjectMeta 1 name, 3 namespace, 6 resourceVersion,
// 11 labels, 12 annotations, each map entry 1 key 2 value) and keeps the
// rest of the message's size. *protoPod satisfies Object and
// ProtobufObject, as *corev1.Pod does.
type protoPod struct {
	ProtoMeta `json:"metadata"` // so that the JSON fallback decodes too
	Rest      int               `json:"-"` // bytes of fields other than metadata
}

type ProtoMeta struct {
	Name            string            `json:"name"`
	Namespace       string            `json:"namespace"`
	ResourceVersion string            `json:"resourceVersion"`
	Labels          map[string]string `json:"labels"`
	Annotations     map[string]string `json:"annotations"`
}

func (p *protoPod) GetNamespace() string              { return p.Namespace }
func (p *protoPod) GetName() string                   { return p.Name }
func (p *protoPod) GetResourceVersion() string        { return p.ResourceVersion }
func (p *protoPod) GetAnnotations() map[string]string { return p.Annotations }

var errProtoPodPanic = errors.New("protoPod asked to panic")

// Unmarshal decodes the message; a name of "panic" panics, to test that
// the engine survives a generated decoder's panic.
func (p *protoPod) Unmarshal(b []byte) error {
	s := pbwire.NewScanner(b)
	var f pbwire.Field
	for s.Next(&f) {
		if f.Num != 1 || f.Wire != pbwire.Bytes {
			p.Rest += len(f.Data)
			continue
		}
		if err := p.meta(f.Data); err != nil {
			return err
		}
	}
	if p.Name == "panic" {
		panic(errProtoPodPanic)
	}
	return s.Err()
}

func (p *protoPod) meta(b []byte) error {
	s := pbwire.NewScanner(b)
	var f pbwire.Field
	for s.Next(&f) {
		switch f.Num {
		case 1:
			p.Name = string(f.Data)
		case 3:
			p.Namespace = string(f.Data)
		case 6:
			p.ResourceVersion = string(f.Data)
		case 11, 12:
			k, v, err := mapEntry(f.Data)
			if err != nil {
				return err
			}
			m := &p.Labels
			if f.Num == 12 {
				m = &p.Annotations
			}
			if *m == nil {
				*m = map[string]string{}
			}
			(*m)[k] = v
		}
	}
	return s.Err()
}

func mapEntry(b []byte) (k, v string, err error) {
	s := pbwire.NewScanner(b)
	var f pbwire.Field
	for s.Next(&f) {
		switch f.Num {
		case 1:
			k = string(f.Data)
		case 2:
			v = string(f.Data)
		}
	}
	return k, v, s.Err()
}

// pb builds protobuf messages for tests.
type pb []byte

func (b pb) varint(v uint64) pb {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func (b pb) bytes(num int, data []byte) pb {
	b = b.varint(uint64(num<<3 | pbwire.Bytes))
	return append(b.varint(uint64(len(data))), data...)
}

func (b pb) str(num int, s string) pb { return b.bytes(num, []byte(s)) }

func (b pb) num(num int, v uint64) pb { return b.varint(uint64(num<<3 | pbwire.Varint)).varint(v) }

// podMsg is a Pod message with the given metadata and some padding in
// spec, to look like a real pod of a few hundred bytes.
func podMsg(ns, name, rv string, annotations ...string) []byte {
	meta := pb(nil).str(1, name).str(3, ns).str(6, rv)
	for i := 0; i+1 < len(annotations); i += 2 {
		meta = meta.bytes(12, pb(nil).str(1, annotations[i]).str(2, annotations[i+1]))
	}
	spec := pb(nil).str(2, "node-1").str(8, "Always") // a few spec fields, numbers irrelevant
	return pb(nil).bytes(1, meta).bytes(2, spec)
}

// protoBody wraps a message as the server's runtime.Unknown body.
func protoBody(kind string, raw []byte) []byte {
	typeMeta := pb(nil).str(1, "v1").str(2, kind)
	b := append(pb(nil), pbwire.Magic[:]...)
	return b.bytes(1, typeMeta).bytes(2, raw).str(3, "").str(4, "")
}

// watchFrame is one length-prefixed protobuf watch event.
func watchFrame(typ EventType, kind string, raw []byte) []byte {
	ev := pb(nil).str(1, string(typ)).bytes(2, pb(nil).bytes(1, protoBody(kind, raw)))
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(ev))), ev...)
}

// statusMsg is a metav1.Status message.
func statusMsg(code int, reason, message, cont string, retryAfter int) []byte {
	b := pb(nil).bytes(1, pb(nil).str(3, cont)).str(2, "Failure").str(3, message).str(4, reason)
	details := pb(nil).bytes(4, pb(nil).str(1, "FieldValueInvalid").str(2, "bad").str(3, "spec.x"))
	if retryAfter > 0 {
		details = details.num(5, uint64(retryAfter))
	}
	return b.bytes(5, details).num(6, uint64(code))
}

// listMsg is a list message: ListMeta then the items.
func listMsg(rv, cont string, remaining int64, items ...[]byte) []byte {
	meta := pb(nil).str(2, rv).str(3, cont)
	if remaining >= 0 {
		meta = meta.num(4, uint64(remaining))
	}
	b := pb(nil).bytes(1, meta)
	for _, it := range items {
		b = b.bytes(2, it)
	}
	return b
}
