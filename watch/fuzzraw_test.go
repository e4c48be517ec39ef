package watch

import (
	"bytes"
	"errors"
	"io"
	"maps"
	"math/rand/v2"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FuzzParseRecord feeds the snapshot record parser anything a damaged or
// planted file could hold: it must never panic, nor may any read of a
// Raw it accepts. A version-2 record it accepts writes back byte for
// byte; a version-1 one (whose metadata is scanned from the object) has
// the metadata a typed decode finds, and reads back from its version-2
// record as the same Raw. A version-2 record's metadata is taken as
// written (the file's checksum finds damage), so it is not compared with
// the object's; FuzzRawProtobuf and FuzzRawJSON check that what
// AppendRecord writes reads back as the Raw it came from.
func FuzzParseRecord(f *testing.F) {
	r := rand.New(rand.NewPCG(11, 12))
	for i := range 4 {
		m := randomMeta(r, i)
		pbBody, _ := m.Marshal()
		var pbRaw Raw
		if pbRaw.Unmarshal(pbBody) == nil {
			f.Add(pbRaw.AppendRecord(nil))
		}
		var jsRaw Raw
		if jsRaw.UnmarshalJSON([]byte(`{"metadata":{"name":"n`+string(rune('a'+i))+`","labels":{"a":"1","a":"2"}}}`)) == nil {
			f.Add(jsRaw.AppendRecord(nil))
		}
	}
	f.Add([]byte{recordV1, 1, 0x0a, 0x7f})
	f.Add([]byte{recordV1, 0, '{'})
	f.Add([]byte{recordV1, 0, '{', '"', 'm', 'e', 't', 'a', 'd', 'a', 't', 'a', '"', ':', '{', '}', '}'})
	f.Add([]byte{2, 0})
	f.Add([]byte{recordV2, 0, 0, 0, 2, 0, 1, 0, 0, 0, 0, 1, 1, 'n', 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		raw, err := ParseRecord(bytes.Clone(b))
		if err != nil {
			return
		}
		readAll(raw)
		if b[0] == recordV2 {
			if back := raw.AppendRecord(nil); !bytes.Equal(back, b) {
				t.Fatalf("record %q written back as %q", b, back)
			}
			return
		}
		requireRecordRoundTrip(t, raw)
		ann := raw.GetAnnotations()
		if meta, err := raw.Meta(); err == nil && raw.Protobuf() && !maps.Equal(meta.Annotations, ann) {
			t.Fatalf("annotations read in place %v, decoded %v", ann, meta.Annotations)
		}
		requireSameName(t, raw)
		typed, err := NewRawCodec[*metav1.PartialObjectMetadata]().Decode(raw)
		if raw.Protobuf() {
			requireGeneratedDecode(t, raw, typed, err) // from the table or not, as the generated code
		}
		if err != nil {
			return // the typed decoder is stricter in places
		}
		requireSameMeta(t, typed, raw)
	})
}

// readAll calls every read of raw's metadata, which must not panic.
func readAll(raw *Raw) {
	_, _, _, _ = raw.GetName(), raw.GetNamespace(), raw.GetResourceVersion(), raw.GetUID()
	_, _ = raw.GetLabels(), raw.Labels().Get("a")
	_ = raw.GetAnnotations()
	_, _ = raw.Meta()
	_, _ = raw.WithoutManagedFields()
	_, _ = NewRawCodec[*metav1.PartialObjectMetadata]().Decode(raw)
	_ = raw.Body()
}

// FuzzProtobufRawWatch decodes protobuf watch streams into Raws, as the
// compact store does: neither may panic or hang, every event carries an
// object whose metadata is what a typed decode of its bytes finds, and the
// result does not depend on chunk boundaries. The seeds include an object
// nested past MaxNestingDepth.
func FuzzProtobufRawWatch(f *testing.F) {
	r := rand.New(rand.NewPCG(13, 14))
	for i := range 3 {
		body, _ := randomMeta(r, i).Marshal()
		f.Add(watchFrame(Modified, "Pod", body), uint64(i))
	}
	f.Add(watchFrame(Added, "Pod", podMsg("ns", "a", "1", "k", "v")), uint64(7))
	f.Add(watchFrame(Error, "Status", statusMsg(410, "Expired", "gone", "", 0)), uint64(8))
	f.Add(watchFrame(Added, "Widget", schemaMsg(MaxNestingDepth+1)), uint64(9))
	f.Add(append(watchFrame(Added, "Pod", podMsg("ns", "b", "2")), 0, 0, 0, 3, 0x0a, 0x01), uint64(10))
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		codec := newProtoCodec[*Raw](false)
		codec2 := NewRawCodec[*metav1.PartialObjectMetadata]()
		decodeAll := func(rd io.Reader) (n int, err error) {
			d := newProtoDecoder(rd, DecoderOptions{MaxFrameSize: 1 << 16, Parallelism: int(seed%3) + 1}, codec)
			defer d.Close()
			for {
				ev, err := d.Next()
				if err != nil {
					return n, err
				}
				if ev.Object == nil {
					t.Fatalf("%s event without an object", ev.Type)
				}
				if typed, err := codec2.Decode(ev.Object); err == nil {
					requireSameMeta(t, typed, ev.Object)
				}
				n++
			}
		}
		n1, err1 := decodeAll(bytes.NewReader(data))
		n2, err2 := decodeAll(newChunkReader(data, seed, 1+int(seed%97)))
		if n1 != n2 || err1.Error() != err2.Error() {
			t.Fatalf("whole: %d events, %v; chunked: %d events, %v", n1, err1, n2, err2)
		}
	})
}

// FuzzDeepNesting decodes anything as an object of a recursive type, in
// protobuf and in JSON: neither may panic or exhaust the stack, and an
// object is refused for its depth exactly when it nests past
// MaxNestingDepth.
func FuzzDeepNesting(f *testing.F) {
	f.Add(schemaMsg(MaxNestingDepth), []byte(schemaJSON(MaxNestingDepth-1)))
	f.Add(schemaMsg(MaxNestingDepth+1), []byte(schemaJSON(MaxNestingDepth)))
	f.Add(append(schemaMsg(MaxNestingDepth+3), 0xff), []byte(schemaJSON(MaxNestingDepth + 5)[:3000]))
	f.Add([]byte{0x12, 0x02, 0x0a, 0x00}, []byte(`{"schema":{"items":{"child":{"items":null}}}}`))
	f.Fuzz(func(t *testing.T, msg, js []byte) {
		codec := newProtoCodec[*schemaObj](false)
		_, err := codec.decode(msg)
		if deep := checkProtoNesting(msg) != nil; deep != errors.Is(err, ErrNestingTooDeep) {
			t.Fatalf("protobuf: the check says too deep %v, the decode says %v", deep, err)
		}
		_, err = decodeJSONObject[*schemaObj](js)
		object := bytes.HasPrefix(bytes.TrimLeft(js, " \t\r\n"), []byte("{"))
		if deep := checkJSONNesting(js) != nil; object && deep && !errors.Is(err, ErrNestingTooDeep) {
			t.Fatalf("JSON: the check refuses it, the decode says %v", err)
		}
	})
}
