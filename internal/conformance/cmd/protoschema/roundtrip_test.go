package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/randfill"

	"github.com/kwatch/kwatch/internal/rig/sim"
)

// protoObject is a k8s.io/api type with its generated protobuf methods.
type protoObject interface {
	Marshal() ([]byte, error)
	Unmarshal([]byte) error
}

// body is the protobuf request body a client sends for obj: the magic, then a
// runtime.Unknown carrying the object's message.
func body(t *testing.T, apiVersion, kind string, obj protoObject) []byte {
	t.Helper()
	raw, err := obj.Marshal()
	require.NoError(t, err)
	u := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: apiVersion, Kind: kind}, Raw: raw}
	env, err := u.Marshal()
	require.NoError(t, err)
	return append([]byte("k8s\x00"), env...)
}

// serverJSON is what the real server writes for obj sent in protobuf: the typed
// object its generated Unmarshal decodes, encoded by encoding/json, with kind and
// apiVersion.
func serverJSON(t *testing.T, apiVersion, kind string, obj protoObject) map[string]any {
	t.Helper()
	raw, err := obj.Marshal()
	require.NoError(t, err)
	typed := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(protoObject)
	require.NoError(t, typed.Unmarshal(raw))
	b, err := json.Marshal(typed)
	require.NoError(t, err)
	m := decodeJSON(t, b)
	m["apiVersion"], m["kind"] = apiVersion, kind
	return m
}

// decodeJSON decodes a JSON object keeping numbers exact.
func decodeJSON(t *testing.T, b []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	require.NoError(t, dec.Decode(&m), "invalid JSON:\n%s", b)
	require.False(t, dec.More(), "more than one JSON value:\n%s", b)
	return m
}

// requireRoundTrip decodes obj's protobuf body with the simulator and compares the
// result with serverJSON.
func requireRoundTrip(t *testing.T, apiVersion, kind string, obj protoObject) {
	t.Helper()
	b := body(t, apiVersion, kind, obj)
	got, err := sim.ProtobufToJSON(b)
	require.NoError(t, err)
	gotMap := decodeJSON(t, got)
	want := serverJSON(t, apiVersion, kind, obj)
	if !reflect.DeepEqual(want, gotMap) {
		wantJSON, _ := json.Marshal(want)
		require.JSONEq(t, string(wantJSON), string(got), "%s %s: the simulator's JSON differs from the typed object's", apiVersion, kind)
	}
}

// kinds are the roots with a fresh object of each, for the random and zero cases.
func kinds() []struct {
	apiVersion, kind string
	newObj           func() protoObject
} {
	var out []struct {
		apiVersion, kind string
		newObj           func() protoObject
	}
	for _, r := range roots {
		typ := r.typ
		out = append(out, struct {
			apiVersion, kind string
			newObj           func() protoObject
		}{r.apiVersion, typ.Name(), func() protoObject { return reflect.New(typ).Interface().(protoObject) }})
	}
	return out
}

// TestRoundTripPopulated: hand-filled objects with a field of every kind (times,
// micro times, quantities, int-or-strings, maps, bytes, lists of messages,
// pointers to zero values) decode to the JSON the real server writes for them.
func TestRoundTripPopulated(t *testing.T) {
	for _, tc := range populated() {
		t.Run(tc.kind+"/"+tc.name, func(t *testing.T) {
			requireRoundTrip(t, tc.apiVersion, tc.kind, tc.obj)
			direct, err := json.Marshal(tc.obj)
			require.NoError(t, err)
			m := decodeJSON(t, direct)
			m["apiVersion"], m["kind"] = tc.apiVersion, tc.kind
			require.Equal(t, serverJSON(t, tc.apiVersion, tc.kind, tc.obj), m,
				"the test object should survive protobuf unchanged (no empty lists, whole-second times)")
		})
	}
}

// TestRoundTripZero: an object with nothing set gets the fields encoding/json writes
// for zero values ("spec":{"containers":null}).
func TestRoundTripZero(t *testing.T) {
	for _, k := range kinds() {
		t.Run(k.kind, func(t *testing.T) { requireRoundTrip(t, k.apiVersion, k.kind, k.newObj()) })
	}
}

// TestRoundTripRandom fills every kind at random, many times, and compares.
func TestRoundTripRandom(t *testing.T) {
	n := 40
	if testing.Short() {
		n = 5
	}
	for _, k := range kinds() {
		t.Run(k.kind, func(t *testing.T) {
			for seed := range int64(n) {
				obj := k.newObj()
				randomFiller(seed).Fill(obj)
				t.Run(fmt.Sprint(seed), func(t *testing.T) { requireRoundTrip(t, k.apiVersion, k.kind, obj) })
			}
		})
	}
}

// randomFiller fills objects at random, with valid values for the special types.
func randomFiller(seed int64) *randfill.Filler {
	return randfill.New().RandSource(rand.NewSource(seed)).NilChance(0.3).NumElements(0, 2).MaxDepth(14).Funcs(
		func(q *resource.Quantity, c randfill.Continue) {
			formats := []resource.Format{resource.DecimalSI, resource.BinarySI, resource.DecimalExponent}
			*q = *resource.NewMilliQuantity(c.Int63n(1<<40)-1<<20, formats[c.Intn(len(formats))])
		},
		func(tm *metav1.Time, c randfill.Continue) {
			if c.Intn(5) == 0 {
				*tm = metav1.Time{}
				return
			}
			*tm = metav1.Unix(c.Int63n(4e9), 0)
		},
		func(tm *metav1.MicroTime, c randfill.Continue) {
			if c.Intn(5) == 0 {
				*tm = metav1.MicroTime{}
				return
			}
			*tm = metav1.NewMicroTime(time.Unix(c.Int63n(4e9), c.Int63n(1e9)))
		},
		func(v *intstr.IntOrString, c randfill.Continue) {
			if c.Bool() {
				*v = intstr.FromInt32(c.Int31() - 1<<30)
			} else {
				*v = intstr.FromString(c.String(8))
			}
		},
		func(f *metav1.FieldsV1, c randfill.Continue) {
			f.Raw = []byte(fmt.Sprintf(`{"f:metadata":{"f:labels":{"f:%d":{}}}}`, c.Intn(100)))
		},
	)
}
