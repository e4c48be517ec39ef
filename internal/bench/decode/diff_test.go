package decode

import (
	"bytes"
	"math/rand"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/randfill"

	"github.com/kwatch/kwatch/internal/protodec"
)

// kinds are the objects the differential test fills at random.
var kinds = []any{
	&corev1.Pod{}, &corev1.Node{}, &corev1.Service{}, &corev1.ConfigMap{}, &corev1.Secret{},
	&corev1.Namespace{}, &corev1.PersistentVolume{}, &corev1.PersistentVolumeClaim{},
	&corev1.Endpoints{}, &corev1.Event{}, &corev1.ServiceAccount{}, &corev1.ReplicationController{},
	&appsv1.Deployment{}, &appsv1.ReplicaSet{}, &appsv1.StatefulSet{}, &appsv1.DaemonSet{},
	&batchv1.Job{}, &batchv1.CronJob{}, &networkingv1.Ingress{}, &networkingv1.NetworkPolicy{},
	&rbacv1.Role{}, &rbacv1.ClusterRoleBinding{}, &coordinationv1.Lease{}, &discoveryv1.EndpointSlice{},
	&policyv1.PodDisruptionBudget{}, &storagev1.StorageClass{}, &eventsv1.Event{},
	&autoscalingv2.HorizontalPodAutoscaler{},
}

type message interface {
	Marshal() ([]byte, error)
	Unmarshal([]byte) error
}

// filler fills objects at random, with the hand-written types given
// values their Marshal can encode.
func filler(seed uint64) *randfill.Filler {
	return randfill.New().RandSource(rand.NewSource(int64(seed))).NilChance(0.3).NumElements(0, 3).MaxDepth(12).Funcs(
		func(q *resource.Quantity, c randfill.Continue) {
			*q = *resource.NewMilliQuantity(c.Int63n(1<<40), []resource.Format{resource.DecimalSI, resource.BinarySI, resource.DecimalExponent}[c.Intn(3)])
		},
		func(t *metav1.Time, c randfill.Continue) { *t = metav1.Unix(c.Int63n(4e9), c.Int63n(1e9)) },
		func(t *metav1.MicroTime, c randfill.Continue) {
			*t = metav1.NewMicroTime(metav1.Unix(c.Int63n(4e9), 0).Time)
		},
		func(f *metav1.FieldsV1, c randfill.Continue) { f.Raw = []byte(`{"f:a":{}}`)[:c.Intn(11)] },
		func(r *runtime.RawExtension, c randfill.Continue) { c.Fill(&r.Raw) },
	)
}

// TestTableDecodesAsTheGeneratedCode encodes random objects of many kinds
// with their generated Marshal and requires the table to decode each,
// copying and aliasing strings, into what the generated Unmarshal
// decodes.
func TestTableDecodesAsTheGeneratedCode(t *testing.T) {
	for _, k := range kinds {
		typ := reflect.TypeOf(k).Elem()
		plan := protodec.For(typ)
		require.NotNil(t, plan, "%v", typ)
		require.True(t, plan.Table(), "%v decodes with its own Unmarshal: %v", typ, plan.Own())
		f := filler(uint64(len(typ.String())))
		for i := range 60 {
			obj := reflect.New(typ)
			f.Fill(obj.Interface())
			b, err := obj.Interface().(message).Marshal()
			require.NoError(t, err, "%v #%d", typ, i)
			requireSameDecode(t, typ, plan, b, true)
		}
	}
}

// requireSameDecode decodes b both ways; accept says the table must take
// b rather than leave it to the generated code.
func requireSameDecode(t testing.TB, typ reflect.Type, plan *protodec.Plan, b []byte, accept bool) {
	t.Helper()
	want := reflect.New(typ)
	wantErr := want.Interface().(message).Unmarshal(b)
	for _, alias := range []bool{false, true} {
		got := reflect.New(typ)
		err := plan.Decode(b, got.UnsafePointer(), alias)
		if err != nil {
			require.False(t, accept, "%v: the table refused a generated encoding: %v", typ, err)
			continue
		}
		require.NoError(t, wantErr, "%v: the table decoded what the generated code refuses: %x", typ, b)
		if !reflect.DeepEqual(got.Interface(), want.Interface()) {
			t.Fatalf("%v (alias %v): the table decoded\n%#v\nthe generated code\n%#v", typ, alias, got.Interface(), want.Interface())
		}
	}
}

// TestHarnessPodsDecodeFromTheTable checks the benchmark's own pods.
func TestHarnessPodsDecodeFromTheTable(t *testing.T) {
	plan := protodec.For(reflect.TypeFor[corev1.Pod]())
	for _, b := range harnessPods(t, 50) {
		requireSameDecode(t, reflect.TypeFor[corev1.Pod](), plan, b, true)
	}
}

// FuzzPodDecode mutates pods' encodings: whenever the table accepts the
// bytes, it must decode what the generated Unmarshal decodes.
func FuzzPodDecode(f *testing.F) {
	for _, b := range harnessPods(f, 3) {
		f.Add(b)
	}
	fill := filler(7)
	for range 3 {
		var p corev1.Pod
		fill.Fill(&p)
		b, err := p.Marshal()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(podOverheadTwice()) // a value that does not decode, then one that does
	plan := protodec.For(reflect.TypeFor[corev1.Pod]())
	f.Fuzz(func(t *testing.T, b []byte) {
		requireSameDecode(t, reflect.TypeFor[corev1.Pod](), plan, b, false)
	})
}

// TestMutatedPodsDecodeAsTheGeneratedCode is FuzzPodDecode's check over
// many more inputs than the fuzzer's coverage bookkeeping of k8s.io/api's
// generated code allows per second: the harness's pods and random pods
// with a few bytes overwritten, inserted or cut.
func TestMutatedPodsDecodeAsTheGeneratedCode(t *testing.T) {
	seeds := harnessPods(t, 4)
	fill := filler(11)
	for range 4 {
		var p corev1.Pod
		fill.Fill(&p)
		b, err := p.Marshal()
		require.NoError(t, err)
		seeds = append(seeds, b)
	}
	plan := protodec.For(reflect.TypeFor[corev1.Pod]())
	r := rand.New(rand.NewSource(5))
	n := 20000
	if testing.Short() {
		n = 5000 // under -race
	}
	accepted := 0
	for i := range n {
		b := mutate(r, seeds[i%len(seeds)])
		requireSameDecode(t, reflect.TypeFor[corev1.Pod](), plan, b, false)
		if plan.Decode(b, reflect.New(reflect.TypeFor[corev1.Pod]()).UnsafePointer(), true) == nil {
			accepted++
		}
	}
	require.Greater(t, accepted, n/20, "the table accepts many of the mutated pods, so the comparison means something")
}

// mutate returns a copy of b with one to four bytes overwritten, inserted
// or cut.
func mutate(r *rand.Rand, b []byte) []byte {
	b = append([]byte(nil), b...)
	for range 1 + r.Intn(4) {
		i := r.Intn(len(b))
		switch r.Intn(3) {
		case 0:
			b[i] = byte(r.Intn(256))
		case 1:
			b = append(b[:i], append([]byte{byte(r.Intn(256))}, b[i:]...)...)
		default:
			b = append(b[:i], b[i+1:]...)
		}
	}
	return b
}

// field encodes the length-delimited field num (below 16) holding parts.
func field(num byte, parts ...[]byte) []byte {
	content := bytes.Join(parts, nil)
	return append([]byte{num<<3 | 2, byte(len(content))}, content...)
}

// podOverheadTwice is a pod whose spec.overhead entry "cpu" holds two
// values: a quantity that does not parse, then one that does.
func podOverheadTwice() []byte {
	entry := field(1, []byte("cpu")) // the key
	entry = append(entry, field(2, field(1, []byte("x")))...)
	entry = append(entry, field(2, field(1, []byte("1")))...)
	spec := append([]byte{0x82, 0x02, byte(len(entry))}, entry...) // PodSpec field 32, overhead
	return field(2, spec)                                          // Pod field 2, spec
}

// TestMapEntryWithAValueTwice: the generated code decodes each value of
// a map entry given twice, so one that does not decode is an error even
// when another follows (a resource list's quantity, a message of a map of
// messages); the table must not accept the entry by the last value alone.
func TestMapEntryWithAValueTwice(t *testing.T) {
	b := podOverheadTwice()
	require.Error(t, new(corev1.Pod).Unmarshal(b), "the generated code refuses the first value")
	requireSameDecode(t, reflect.TypeFor[corev1.Pod](), protodec.For(reflect.TypeFor[corev1.Pod]()), b, false)

	// A ResourceSlice's devices' capacity is a map of DeviceCapacity
	// messages (1 value, a quantity).
	capacity := func(q string) []byte { return field(2, field(1, field(1, []byte(q)))) }
	entry := field(3, field(1, []byte("c")), capacity("x"), capacity("1"))
	b = field(2, field(6, field(1, []byte("d")), entry)) // spec, devices, name and capacity
	require.Error(t, new(resourcev1.ResourceSlice).Unmarshal(b))
	requireSameDecode(t, reflect.TypeFor[resourcev1.ResourceSlice](), protodec.For(reflect.TypeFor[resourcev1.ResourceSlice]()), b, false)
}
