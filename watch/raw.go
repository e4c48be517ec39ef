package watch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kwatch/kwatch/internal/pbwire"
)

// Raw is one object kept as the server encoded it, for the informer's
// compact store: the object's own bytes (its protobuf message as received,
// or its JSON), and beside them the few metadata fields that keys, indexes,
// selectors and the list/watch protocol need, read once when it arrived.
//
// A Raw holds one pointer-free allocation (the bytes) and an interned
// namespace, so the garbage collector marks it without scanning it: a
// store of a hundred thousand Raws costs the collector a few hundred
// thousand pointers where typed pods cost tens of millions. Decode turns
// it into the caller's type when a reader asks (see RawCodec).
//
// A Raw is immutable once decoded; every method is safe for concurrent use.
// Strings it returns share its bytes (they are never modified), so keeping
// one keeps the whole record alive.
type Raw struct {
	ns   string // interned
	data []byte // protobuf: the body; JSON: name | resourceVersion | uid | labels | body
	body uint32 // where the body starts in data
	// Where the metadata fields are in data. A protobuf message holds
	// them as they are, so they are read in place; JSON strings may need
	// unescaping, so a JSON Raw keeps copies before its body.
	name, rv, uid span
	// lbls is, in protobuf, the metadata message, whose field-11 entries
	// are the labels; in JSON, uvarint-prefixed key, value pairs.
	lbls  span
	gen   int64
	proto bool // the body is the object's protobuf message, not JSON
}

// span is a range of a Raw's data.
type span struct{ from, to uint32 }

// Errors of Raw decoding.
var (
	// ErrRawNotObject is returned for a body that is not an object.
	ErrRawNotObject = errors.New("not an object")
	// ErrRawEncoding is returned by RawCodec.Decode for a protobuf Raw
	// and a type that decodes JSON only.
	ErrRawEncoding = errors.New("the object was received in protobuf, which the type cannot decode")
)

// rawMeta is what a scan of an object's metadata collects. The slices
// alias the scanned body, or hold unescaped copies.
type rawMeta struct {
	ns, name, rv, uid []byte
	meta              []byte // protobuf: the metadata message
	gen               int64
	labels            [][]byte // key, value, key, value...
	labelBytes        int
	buf               [16][]byte // labels' first backing array
	// index maps each key of labels to its place, once there are more
	// than labelIndexAfter of them; nil before.
	index map[string]int
	// probes counts the key comparisons and index lookups addLabel made,
	// so that a test can check the work grows linearly with the labels.
	probes int
}

// labelIndexAfter is how many labels addLabel compares one by one before
// it indexes them: a few comparisons cost less than a map, but a hostile
// object with thousands of labels must not cost a comparison of each with
// every earlier one.
const labelIndexAfter = 8

// addLabel keeps the label k=v; a repeated key keeps its first place and
// takes the last value, as a map does. The work is linear in the labels.
func (m *rawMeta) addLabel(k, v []byte) {
	if m.labels == nil {
		m.labels = m.buf[:0]
	}
	i := m.findLabel(k)
	if i >= 0 {
		m.labelBytes += len(v) - len(m.labels[i+1])
		m.labels[i+1] = v
		return
	}
	m.labels = append(m.labels, k, v)
	m.labelBytes += len(k) + len(v) + 2*binary.MaxVarintLen32
	if m.index != nil {
		m.index[unsafe.String(unsafe.SliceData(k), len(k))] = len(m.labels) - 2
	}
}

// findLabel returns the index in m.labels of the key k, -1 if absent.
func (m *rawMeta) findLabel(k []byte) int {
	if m.index == nil && len(m.labels) < 2*labelIndexAfter {
		for i := 0; i < len(m.labels); i += 2 {
			m.probes++
			if bytes.Equal(m.labels[i], k) {
				return i
			}
		}
		return -1
	}
	if m.index == nil {
		// The keys alias the scanned body (or unescaped copies of it),
		// which nothing modifies while the scan lasts, and the index does
		// not outlive the scan: viewing them as strings copies nothing.
		m.index = make(map[string]int, 2*labelIndexAfter)
		for i := 0; i < len(m.labels); i += 2 {
			m.index[unsafe.String(unsafe.SliceData(m.labels[i]), len(m.labels[i]))] = i
		}
	}
	m.probes++
	if i, ok := m.index[unsafe.String(unsafe.SliceData(k), len(k))]; ok {
		return i
	}
	return -1
}

// fill makes r a Raw of body with the metadata m, in one allocation: the
// body alone for protobuf, whose metadata is read in place, and the body
// after copies of the metadata for JSON.
func (r *Raw) fill(m *rawMeta, body []byte, proto bool) error {
	if len(body) > maxRawSize {
		return fmt.Errorf("object of %d bytes is over the %d-byte limit", len(body), maxRawSize)
	}
	*r = Raw{gen: m.gen, proto: proto}
	if len(m.ns) > 0 {
		r.ns = interned.intern(m.ns)
	}
	if proto {
		r.data = append(make([]byte, 0, len(body)), body...)
		r.name, r.rv, r.uid = within(body, m.name), within(body, m.rv), within(body, m.uid)
		r.lbls = within(body, m.meta)
		return nil
	}
	size := len(m.name) + len(m.rv) + len(m.uid) + m.labelBytes + len(body)
	data := make([]byte, 0, size)
	add := func(b []byte) span {
		from := uint32(len(data))
		data = append(data, b...)
		return span{from, uint32(len(data))}
	}
	r.name, r.rv, r.uid = add(m.name), add(m.rv), add(m.uid)
	r.lbls.from = uint32(len(data))
	for _, s := range m.labels {
		data = binary.AppendUvarint(data, uint64(len(s)))
		data = append(data, s...)
	}
	r.lbls.to = uint32(len(data))
	r.body = uint32(len(data))
	r.data = append(data, body...)
	return nil
}

// within is the span of sub, a subslice of b (or empty), in b.
func within(b, sub []byte) span {
	if len(sub) == 0 {
		return span{}
	}
	from := uint32(uintptr(unsafe.Pointer(unsafe.SliceData(sub))) - uintptr(unsafe.Pointer(unsafe.SliceData(b))))
	return span{from, from + uint32(len(sub))}
}

// maxRawSize bounds one object; the stream decoders bound frames at 16 MiB
// by default, so this is only a guard for the uint32 offsets.
const maxRawSize = 1 << 30

func (r *Raw) str(sp span) string { return viewString(r.data[sp.from:sp.to]) }

// GetNamespace returns metadata.namespace.
func (r *Raw) GetNamespace() string { return r.ns }

// GetName returns metadata.name.
func (r *Raw) GetName() string { return r.str(r.name) }

// GetResourceVersion returns metadata.resourceVersion.
func (r *Raw) GetResourceVersion() string { return r.str(r.rv) }

// GetUID returns metadata.uid.
func (r *Raw) GetUID() types.UID { return types.UID(r.str(r.uid)) }

// GetGeneration returns metadata.generation.
func (r *Raw) GetGeneration() int64 { return r.gen }

// Protobuf reports whether Body is a protobuf message (else JSON).
func (r *Raw) Protobuf() bool { return r.proto }

// Body returns the object's encoded bytes, shared: read only.
func (r *Raw) Body() []byte { return r.data[r.body:] }

// Size is the number of bytes the record holds.
func (r *Raw) Size() int { return len(r.data) }

// Labels returns the object's labels as a labels.Labels, so that a label
// selector matches a Raw without building a map: sel.Matches(r.Labels()).
func (r *Raw) Labels() RawLabels { return RawLabels{r} }

// RawLabels is a Raw's labels, read in place. It implements labels.Labels.
type RawLabels struct{ r *Raw }

// Lookup returns the value of the label key and whether it is set.
func (l RawLabels) Lookup(key string) (string, bool) {
	found, ok := "", false
	l.r.eachLabel(func(k, v string) bool {
		if k == key {
			found, ok = v, true // a repeated protobuf entry: the last wins, as in a map
		}
		return true
	})
	return found, ok
}

// Has reports whether the label key is set.
func (l RawLabels) Has(key string) bool { _, ok := l.Lookup(key); return ok }

// Get returns the value of the label key, "" when it is not set.
func (l RawLabels) Get(key string) string { v, _ := l.Lookup(key); return v }

// GetLabels returns metadata.labels in a new map (nil when there are none).
func (r *Raw) GetLabels() map[string]string {
	var m map[string]string
	r.eachLabel(func(k, v string) bool {
		if m == nil {
			m = make(map[string]string)
		}
		m[k] = v
		return true
	})
	return m
}

// eachLabel calls fn with each label until it returns false.
func (r *Raw) eachLabel(fn func(k, v string) bool) {
	if r.proto {
		r.eachProtoLabel(fn)
		return
	}
	for i := r.lbls.from; i < r.lbls.to; {
		k, n := r.lenString(i)
		v, m := r.lenString(i + n)
		i += n + m
		if !fn(k, v) {
			return
		}
	}
}

// lenString reads the uvarint-prefixed string at i and its encoded length.
func (r *Raw) lenString(i uint32) (string, uint32) {
	l, n := binary.Uvarint(r.data[i:r.lbls.to])
	start := i + uint32(n)
	return r.str(span{start, start + uint32(l)}), uint32(n) + uint32(l)
}

// eachProtoLabel reads the labels map entries of the metadata message in
// place (their framing was checked when the Raw was made).
func (r *Raw) eachProtoLabel(fn func(k, v string) bool) { r.eachProtoEntry(pbLabels, false, fn) }

// eachProtoEntry calls fn with each entry of the map field num of a
// protobuf object's metadata until it returns false; the strings are
// views of r's bytes. Strict, it reports whether the metadata and every
// entry it looked at were in the canonical form (entries of a key and a
// value, both length-delimited), stopping at the first that is not: on
// other bytes the generated decoder's reading may differ from this one's.
// Not strict, it skips what it cannot read and reports true.
func (r *Raw) eachProtoEntry(num int, strict bool, fn func(k, v string) bool) bool {
	meta := r.data[r.lbls.from:r.lbls.to]
	s := pbwire.NewScanner(meta)
	var f pbwire.Field
	for s.Next(&f) {
		if f.Num != num {
			continue
		}
		if f.Wire != pbwire.Bytes {
			if strict {
				return false
			}
			continue
		}
		var k, v string
		e := pbwire.NewScanner(f.Data)
		var kv pbwire.Field
		for e.Next(&kv) {
			if strict && (kv.Wire != pbwire.Bytes || (kv.Num != 1 && kv.Num != 2)) {
				return false
			}
			// A key or value given twice is the last, empty or not.
			switch kv.Num {
			case 1:
				k = viewString(kv.Data)
			case 2:
				v = viewString(kv.Data)
			}
		}
		if strict && e.Err() != nil {
			return false
		}
		if !fn(k, v) {
			return true
		}
	}
	return !strict || s.Err() == nil
}

// viewString is b as a string sharing its bytes; "" when b is empty.
func viewString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// Meta decodes the whole of metadata (annotations, owner references,
// finalizers, managedFields...) from the body. It costs a partial decode
// each call; keys, labels, uid, resourceVersion and generation are free.
func (r *Raw) Meta() (*metav1.ObjectMeta, error) {
	if r.proto {
		return protoRawMeta(r.Body())
	}
	return jsonRawMeta(r.Body())
}

// GetAnnotations returns metadata.annotations, decoded from the body; nil
// when there are none or the metadata does not decode. A protobuf
// object's are read from its metadata in place (the rest of it,
// managedFields included, is skipped) and their strings share r's bytes;
// a JSON object's metadata is decoded (see Meta), as is a protobuf one's
// not in the canonical form.
func (r *Raw) GetAnnotations() map[string]string {
	if r.proto {
		var m map[string]string
		canonical := r.eachProtoEntry(pbAnnotations, true, func(k, v string) bool {
			if m == nil {
				m = make(map[string]string)
			}
			m[k] = v
			return true
		})
		if canonical {
			return m
		}
	}
	m, err := r.Meta()
	if err != nil {
		return nil
	}
	return m.Annotations
}

// GetOwnerReferences returns metadata.ownerReferences, decoded from the
// body (see Meta); nil when the body does not decode.
func (r *Raw) GetOwnerReferences() []metav1.OwnerReference {
	m, err := r.Meta()
	if err != nil {
		return nil
	}
	return m.OwnerReferences
}

// UnmarshalJSON keeps a copy of b, an object's JSON, and reads its metadata.
func (r *Raw) UnmarshalJSON(b []byte) error {
	var m rawMeta
	if err := scanJSONMeta(b, &m); err != nil {
		return err
	}
	return r.fill(&m, b, false)
}

// Unmarshal keeps a copy of b, an object's protobuf message as the API
// server sends it (inside its runtime.Unknown envelope), and reads its
// metadata (field 1).
func (r *Raw) Unmarshal(b []byte) error {
	var m rawMeta
	if err := scanProtoMeta(b, &m); err != nil {
		return err
	}
	return r.fill(&m, b, true)
}

// MarshalJSON returns the body of a JSON Raw, shared with the Raw: read
// only, as Body. A protobuf one is an error.
func (r *Raw) MarshalJSON() ([]byte, error) {
	if r.proto {
		return nil, errors.New("watch: a protobuf Raw has no JSON form")
	}
	return r.Body(), nil
}

// RawCodec decodes Raws into T: a protobuf Raw with T's generated
// Unmarshal (T must decode protobuf; see DecodesProtobuf), a JSON one as a
// list or watch would. Strings of protobuf objects are not interned: a
// decoded object is short-lived or held by a bounded cache.
//
// A protobuf Raw of a type of k8s.io/api decodes from a table of its
// fields (internal/protodec) into the value the generated Unmarshal would
// return, with its strings pointing into the Raw's bytes, which never
// change: a decoded object keeps the Raw it came from in memory, and costs
// a third of the allocations.
type RawCodec[T Object] struct {
	proto *protoCodec[T]
}

// NewRawCodec returns the codec of T.
func NewRawCodec[T Object]() *RawCodec[T] {
	return &RawCodec[T]{proto: newProtoCodec[T](true)}
}

// Decode decodes r into a fresh T. Bad bytes are an error, never a panic.
func (c *RawCodec[T]) Decode(r *Raw) (T, error) {
	if !r.proto {
		return decodeJSONObject[T](r.Body())
	}
	if c.proto == nil {
		var zero T
		return zero, &DecodeError{What: "object", Err: fmt.Errorf("%w (%T)", ErrRawEncoding, zero)}
	}
	if obj, ok := c.proto.tableDecode(r.Body()); ok {
		return obj, nil
	}
	obj, err := c.proto.decode(r.Body())
	if err != nil {
		return obj, &DecodeError{What: "object", Err: err}
	}
	return obj, nil
}
