package watch

import (
	"bytes"
	stdjson "encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

// randomMeta is an object's metadata with every field a Raw reads, and
// some it does not.
func randomMeta(r *rand.Rand, i int) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}}
	m.Name = fmt.Sprintf("pod-%d", i)
	if r.IntN(3) > 0 {
		m.Namespace = fmt.Sprintf("ns-%d", r.IntN(5))
	}
	m.UID = types.UID(fmt.Sprintf("uid-%d", r.Int64()))
	m.ResourceVersion = fmt.Sprint(r.IntN(1 << 30))
	m.Generation = r.Int64N(1000)
	for j := range r.IntN(5) {
		if m.Labels == nil {
			m.Labels = map[string]string{}
		}
		m.Labels[fmt.Sprintf("k%d", j)] = fmt.Sprintf("v \"%d\" é", r.IntN(10))
	}
	if r.IntN(2) == 0 {
		m.Annotations = map[string]string{"a": "b\n<c>"}
		m.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "u1"}}
	}
	return m
}

func checkRawMeta(t *testing.T, want *metav1.PartialObjectMetadata, r *Raw) {
	t.Helper()
	assert.Equal(t, want.Name, r.GetName())
	assert.Equal(t, want.Namespace, r.GetNamespace())
	assert.Equal(t, want.UID, r.GetUID())
	assert.Equal(t, want.ResourceVersion, r.GetResourceVersion())
	assert.Equal(t, want.Generation, r.GetGeneration())
	assert.Equal(t, want.Labels, r.GetLabels())
	assert.Equal(t, want.Annotations, r.GetAnnotations())
	assert.Equal(t, want.OwnerReferences, r.GetOwnerReferences())
	for k, v := range want.Labels {
		assert.True(t, r.Labels().Has(k))
		assert.Equal(t, v, r.Labels().Get(k))
	}
	assert.False(t, r.Labels().Has("absent"))
	if len(want.Labels) > 0 {
		sel := labels.SelectorFromSet(labels.Set(want.Labels))
		assert.True(t, sel.Matches(r.Labels()), "a selector of the object's own labels matches it")
	}
}

func TestRawReadsMetadataOfBothEncodings(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	codec := NewRawCodec[*metav1.PartialObjectMetadata]()
	for i := range 200 {
		want := randomMeta(r, i)
		js, err := stdjson.Marshal(want)
		require.NoError(t, err)
		pb, err := want.Marshal()
		require.NoError(t, err)
		for _, enc := range []string{"json", "protobuf"} {
			raw := new(Raw)
			if enc == "json" {
				require.NoError(t, raw.UnmarshalJSON(js))
			} else {
				require.NoError(t, raw.Unmarshal(pb))
			}
			checkRawMeta(t, want, raw)
			assert.Equal(t, enc == "protobuf", raw.Protobuf())
			got, err := codec.Decode(raw)
			require.NoError(t, err, enc)
			if enc == "protobuf" {
				got.TypeMeta = want.TypeMeta // the protobuf message has no type meta; its envelope has
			}
			assert.Equal(t, want, got, enc)

			back, err := ParseRecord(raw.AppendRecord(nil))
			require.NoError(t, err)
			assert.Equal(t, raw.Body(), back.Body(), "a record reads back as the same Raw")
			assert.Equal(t, raw.Protobuf(), back.Protobuf())
			checkRawMeta(t, want, back)
		}
	}
}

func TestRawOfRealServerPods(t *testing.T) {
	body, err := os.ReadFile("../internal/testdata/real-apiserver/list-pods-rv0.json")
	require.NoError(t, err)
	var list struct {
		Items []stdjson.RawMessage `json:"items"`
	}
	require.NoError(t, stdjson.Unmarshal(body, &list))
	require.NotEmpty(t, list.Items)
	for _, item := range list.Items {
		var want metav1.PartialObjectMetadata
		require.NoError(t, stdjson.Unmarshal(item, &want))
		raw := new(Raw)
		require.NoError(t, raw.UnmarshalJSON(item))
		checkRawMeta(t, &want, raw)
		assert.Equal(t, []byte(item), raw.Body(), "the body is kept as sent")
	}
}

func TestRawJSONEdgeCases(t *testing.T) {
	for name, tc := range map[string]struct {
		in      string
		wantErr bool
		name    string
		labels  map[string]string
	}{
		"escaped name":                        {in: `{"metadata":{"name":"a\u0062c"}}`, name: "abc"},
		"invalid utf-8 is U+FFFD":             {in: "{\"metadata\":{\"name\":\"a\xffb\"}}", name: "a\ufffdb"},
		"null metadata":                       {in: `{"metadata":null,"spec":{}}`},
		"null labels":                         {in: `{"metadata":{"labels":null}}`},
		"repeated label":                      {in: `{"metadata":{"labels":{"a":"1","a":"2"}}}`, labels: map[string]string{"a": "2"}},
		"escaped field name is not the field": {in: `{"metadata":{"n\u0061me":"x"}}`},
		"whitespace":                          {in: " {\n \"metadata\" : { \"name\" : \"x\" } } \n", name: "x"},
		"array":                               {in: `[]`, wantErr: true},
		"truncated":                           {in: `{"metadata":{"name":"x"}`, wantErr: true},
		"trailing data":                       {in: `{} {}`, wantErr: true},
		"bad generation":                      {in: `{"metadata":{"generation":1.5}}`, wantErr: true},
		"control character":                   {in: "{\"metadata\":{\"name\":\"a\x01\"}}", wantErr: true},
		"deep":                                {in: deepJSON(5000), wantErr: true},
		"label not a string":                  {in: `{"metadata":{"labels":{"a":1}}}`, wantErr: true},
	} {
		t.Run(name, func(t *testing.T) {
			raw := new(Raw)
			err := raw.UnmarshalJSON([]byte(tc.in))
			if tc.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.name, raw.GetName())
			assert.Equal(t, tc.labels, raw.GetLabels())
		})
	}
}

func deepJSON(n int) string {
	s := `{"spec":`
	for range n {
		s += "["
	}
	for range n {
		s += "]"
	}
	return s + "}"
}

func TestRawCodecRefusesProtobufForAJSONType(t *testing.T) {
	pb, err := randomMeta(rand.New(rand.NewPCG(3, 4)), 1).Marshal()
	require.NoError(t, err)
	raw := new(Raw)
	require.NoError(t, raw.Unmarshal(pb))
	_, err = NewRawCodec[*slimJSONObject]().Decode(raw)
	require.ErrorIs(t, err, ErrRawEncoding)
}

// slimJSONObject is a type without a protobuf decoder.
type slimJSONObject struct {
	metav1.ObjectMeta `json:"metadata"`
}

func TestParseRecordRefusesDamage(t *testing.T) {
	raw := new(Raw)
	require.NoError(t, raw.UnmarshalJSON([]byte(`{"metadata":{"name":"x"}}`)))
	rec := raw.AppendRecord(nil)
	for i := range len(rec) {
		_, _ = ParseRecord(rec[:i]) // never panics
	}
	_, err := ParseRecord(append([]byte{9}, rec[1:]...))
	require.Error(t, err)
}

// TestProtobufMetadataTwiceIsRefused: a message whose metadata field
// appears twice (generation 48, then empty) decodes, by protobuf's merge,
// to generation 48, while a Raw reading the last occurrence in place would
// say 0; FuzzParseRecord found it. Both ways in refuse it.
func TestProtobufMetadataTwiceIsRefused(t *testing.T) {
	body := []byte{0x0a, 0x02, 0x38, 48, 0x0a, 0x00}
	_, err := ParseRecord(append([]byte{recordV1, 1}, body...))
	require.ErrorContains(t, err, "metadata appears more than once")
	require.ErrorContains(t, new(Raw).Unmarshal(body), "metadata appears more than once")
}

func FuzzRawJSON(f *testing.F) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 5 {
		b, _ := stdjson.Marshal(randomMeta(r, i))
		f.Add(b)
	}
	f.Add([]byte(`{"metadata":{"name":"a\u0062c","labels":{"a":"1","a":"2"}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		raw := new(Raw)
		if raw.UnmarshalJSON(b) != nil {
			return
		}
		requireRecordRoundTrip(t, raw)
		var want metav1.PartialObjectMetadata
		if stdjson.Unmarshal(b, &want) != nil {
			return
		}
		requireSameName(t, raw)
		typed, err := NewRawCodec[*metav1.PartialObjectMetadata]().Decode(raw)
		if err != nil {
			return // the kwatch decoder is stricter than encoding/json in places
		}
		requireSameMeta(t, typed, raw)
	})
}

// requireSameMeta fails unless the metadata a Raw read is the decoded
// object's.
func requireSameMeta(t *testing.T, typed *metav1.PartialObjectMetadata, raw *Raw) {
	if typed.Name != raw.GetName() || typed.Namespace != raw.GetNamespace() ||
		typed.ResourceVersion != raw.GetResourceVersion() || typed.UID != raw.GetUID() ||
		typed.Generation != raw.GetGeneration() || !maps.Equal(typed.Labels, raw.GetLabels()) {
		t.Fatalf("raw metadata %q/%q rv %q uid %q gen %d labels %v; decoded %q/%q rv %q uid %q gen %d labels %v",
			raw.GetNamespace(), raw.GetName(), raw.GetResourceVersion(), raw.GetUID(), raw.GetGeneration(), raw.GetLabels(),
			typed.Namespace, typed.Name, typed.ResourceVersion, typed.UID, typed.Generation, typed.Labels)
	}
}

// requireRecordRoundTrip fails unless raw's snapshot record reads back as
// the same Raw, field for field, and writes back byte for byte.
func requireRecordRoundTrip(t *testing.T, raw *Raw) {
	t.Helper()
	rec := raw.AppendRecord(nil)
	back, err := ParseRecord(bytes.Clone(rec))
	if err != nil {
		t.Fatalf("the record of a Raw does not read back: %v", err)
	}
	if !reflect.DeepEqual(back, raw) {
		t.Fatalf("the record of %#v reads back as %#v", raw, back)
	}
	if again := back.AppendRecord(nil); !bytes.Equal(again, rec) {
		t.Fatalf("record %q written back as %q", rec, again)
	}
}

// requireSameName fails if dropping managedFields changes a Raw's name.
func requireSameName(t *testing.T, raw *Raw) {
	if out, err := raw.WithoutManagedFields(); err == nil && out.GetName() != raw.GetName() {
		t.Fatalf("dropping managedFields changed the name: %q to %q", raw.GetName(), out.GetName())
	}
}

func FuzzRawProtobuf(f *testing.F) {
	r := rand.New(rand.NewPCG(7, 8))
	for i := range 5 {
		b, _ := randomMeta(r, i).Marshal()
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		raw := new(Raw)
		if raw.Unmarshal(b) != nil {
			return
		}
		_, _ = raw.Meta()
		requireRecordRoundTrip(t, raw)
		requireSameName(t, raw)
		typed, err := NewRawCodec[*metav1.PartialObjectMetadata]().Decode(raw)
		if err != nil {
			return
		}
		requireSameMeta(t, typed, raw)
	})
}

func TestRawWithoutManagedFields(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	codec := NewRawCodec[*metav1.PartialObjectMetadata]()
	for i := range 100 {
		want := randomMeta(r, i)
		if i%3 != 0 {
			want.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply,
				APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{}}`)}}}
		}
		js, err := stdjson.Marshal(want)
		require.NoError(t, err)
		pb, err := want.Marshal()
		require.NoError(t, err)
		for _, enc := range []string{"json", "protobuf"} {
			raw := new(Raw)
			if enc == "json" {
				require.NoError(t, raw.UnmarshalJSON(js))
			} else {
				require.NoError(t, raw.Unmarshal(pb))
			}
			out, err := raw.WithoutManagedFields()
			require.NoError(t, err)
			if want.ManagedFields == nil {
				require.Same(t, raw, out, "nothing to drop: the same Raw")
			} else {
				require.Less(t, out.Size(), raw.Size())
			}
			got, err := codec.Decode(out)
			require.NoError(t, err)
			exp := want.DeepCopy()
			exp.ManagedFields = nil
			if enc == "protobuf" {
				got.TypeMeta = exp.TypeMeta
			}
			require.Equal(t, exp, got, enc)
			checkRawMeta(t, exp, out)
		}
	}
	// managedFields first, last and alone in metadata.
	for in, want := range map[string]string{
		`{"metadata":{"managedFields":[{"a":1}],"name":"x"}}`:   `{"metadata":{"name":"x"}}`,
		`{"metadata":{"name":"x", "managedFields" : [] }}`:      `{"metadata":{"name":"x" }}`,
		`{"metadata":{"managedFields":null},"spec":{}}`:         `{"metadata":{},"spec":{}}`,
		`{"spec":{"managedFields":[]},"metadata":{"name":"x"}}`: `{"spec":{"managedFields":[]},"metadata":{"name":"x"}}`,
	} {
		raw := new(Raw)
		require.NoError(t, raw.UnmarshalJSON([]byte(in)))
		out, err := raw.WithoutManagedFields()
		require.NoError(t, err)
		require.Equal(t, want, string(out.Body()), in)
	}
}
