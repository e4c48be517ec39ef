package protofront

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
)

func testPod(ns, name, rv string) []byte {
	b, _ := json.Marshal(corev1.Pod{
		TypeMeta:   metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv, Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{Name: "app", Image: "registry.local/web:1"}}},
	})
	return b
}

func newTestFront(t *testing.T) (*Front, *httptest.Server) {
	t.Helper()
	f := New(100)
	err := f.Load(7, map[string][]byte{"ns/b": testPod("ns", "b", "5"), "ns/a": testPod("ns", "a", "4"), "ns/c": testPod("ns", "c", "7")})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(f.Handler())
	t.Cleanup(srv.Close)
	return f, srv
}

func get(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil && len(b) == 0 {
		t.Fatal(err)
	}
	return b
}

// decodeEnveloped decodes a body the way client-go does.
func decodeEnveloped(t *testing.T, b []byte) runtime.Object {
	t.Helper()
	s := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	obj, _, err := s.Decode(b, nil, nil)
	if err != nil {
		t.Fatalf("decode %d bytes: %v", len(b), err)
	}
	return obj
}

func TestListPages(t *testing.T) {
	_, srv := newTestFront(t)
	tests := []struct {
		query     string
		wantNames []string
		wantCont  string
	}{
		{"?resourceVersion=0&limit=1", []string{"a", "b", "c"}, ""},
		{"?limit=2", []string{"a", "b"}, "ns/b"},
		{"?limit=2&continue=ns/b", []string{"c"}, ""},
	}
	for _, tt := range tests {
		list, ok := decodeEnveloped(t, get(t, srv.URL+podsPath+tt.query)).(*corev1.PodList)
		if !ok {
			t.Fatalf("%s: not a PodList", tt.query)
		}
		var names []string
		for _, p := range list.Items {
			names = append(names, p.Name)
		}
		if got, want := names, tt.wantNames; !equal(got, want) {
			t.Errorf("%s: names = %v, want %v", tt.query, got, want)
		}
		if got := list.Continue; got != tt.wantCont {
			t.Errorf("%s: continue = %q, want %q", tt.query, got, tt.wantCont)
		}
		if got := list.ResourceVersion; got != "7" {
			t.Errorf("%s: resourceVersion = %q, want 7", tt.query, got)
		}
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// frames splits a watch body into its WatchEvents and decoded objects.
func frames(t *testing.T, b []byte) (types []string, objs []runtime.Object) {
	t.Helper()
	raw := protobuf.NewRawSerializer(scheme.Scheme, scheme.Scheme)
	for len(b) > 0 {
		n := int(binary.BigEndian.Uint32(b))
		var ev metav1.WatchEvent
		if _, _, err := raw.Decode(b[4:4+n], nil, &ev); err != nil {
			t.Fatalf("watch event: %v", err)
		}
		types = append(types, ev.Type)
		objs = append(objs, decodeEnveloped(t, ev.Object.Raw))
		b = b[4+n:]
	}
	return types, objs
}

func TestWatch(t *testing.T) {
	f, srv := newTestFront(t)
	if _, err := f.Update("ns/a", func(p *corev1.Pod) { p.Annotations = map[string]string{"k": "v"} }); err != nil {
		t.Fatal(err)
	}
	// timeoutSeconds ends the stream once the history is sent.
	types, objs := frames(t, get(t, srv.URL+podsPath+"?watch=1&resourceVersion=7&timeoutSeconds=1"))
	if len(types) != 1 || types[0] != "MODIFIED" {
		t.Fatalf("types = %v, want [MODIFIED]", types)
	}
	if p := objs[0].(*corev1.Pod); p.Annotations["k"] != "v" || p.ResourceVersion != "8" || p.Spec.NodeName != "node-1" {
		t.Errorf("modified pod = %+v", p.ObjectMeta)
	}

	types, objs = frames(t, get(t, srv.URL+podsPath+"?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1"))
	if want := []string{"ADDED", "ADDED", "ADDED", "BOOKMARK"}; !equal(types, want) {
		t.Fatalf("streaming list types = %v, want %v", types, want)
	}
	if bm := objs[3].(*corev1.Pod); bm.Annotations[metav1.InitialEventsAnnotationKey] != "true" || bm.ResourceVersion != "8" {
		t.Errorf("bookmark = %+v", bm.ObjectMeta)
	}

	f.DropWatches(true)
	types, objs = frames(t, get(t, srv.URL+podsPath+"?watch=1&resourceVersion=7"))
	if len(types) != 1 || types[0] != "ERROR" {
		t.Fatalf("after losing history: types = %v, want [ERROR]", types)
	}
	if st := objs[0].(*metav1.Status); st.Code != 410 || st.Reason != metav1.StatusReasonExpired {
		t.Errorf("status = %+v", st)
	}
}

func TestFrameMatchesApimachinery(t *testing.T) {
	pod := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "y", ResourceVersion: "3"}}
	msg, err := pod.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	pod.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
	if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(&pod, &want); err != nil {
		t.Fatal(err)
	}
	got := appendEnvelopeHeader(nil, "Pod", len(msg))
	got = appendEnvelopeTail(append(got, msg...))
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("envelope differs from apimachinery's:\n got %x\nwant %x", got, want.Bytes())
	}
}
