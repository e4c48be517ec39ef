package protofront

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	corev1 "k8s.io/api/core/v1"
)

func patch(t *testing.T, url, accept, ctype, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPatch, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("Accept", accept)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func TestPatch(t *testing.T) {
	f, _ := newTestFront(t)
	srv := httptest.NewServer(f.PatchHandler())
	t.Cleanup(srv.Close)
	const merge = "application/merge-patch+json"
	url := srv.URL + "/api/v1/namespaces/ns/pods/a"

	resp, b := patch(t, url, "application/json", merge, `{"metadata":{"annotations":{"k":"1"}}}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("JSON patch: %d %s", resp.StatusCode, b)
	}
	var got corev1.Pod
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Annotations["k"] != "1" || got.ResourceVersion != "8" || got.Labels["app"] != "web" || got.Kind != "Pod" {
		t.Errorf("JSON answer: annotations %v, rv %q, labels %v, kind %q; want k=1, 8, app=web kept, Pod",
			got.Annotations, got.ResourceVersion, got.Labels, got.Kind)
	}

	resp, b = patch(t, url, contentType+", application/json", merge, `{"metadata":{"annotations":{"k":null,"j":"2"}}}`)
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || ct != contentType {
		t.Fatalf("protobuf patch: %d %q %s", resp.StatusCode, ct, b)
	}
	pod, ok := decodeEnveloped(t, b).(*corev1.Pod)
	if !ok || pod.Annotations["j"] != "2" || pod.Annotations["k"] != "" || pod.ResourceVersion != "9" {
		t.Errorf("protobuf answer: %#v; want j=2, k removed, rv 9", pod)
	}
	stored, err := f.Pod("ns/a")
	if err != nil || stored.Annotations["j"] != "2" || stored.ResourceVersion != "9" {
		t.Errorf("stored pod: %v, %v; want j=2 at rv 9", stored, err)
	}
	if f.ResourceVersion() != 9 {
		t.Errorf("front rv = %d, want 9 (one event per patch)", f.ResourceVersion())
	}

	for _, c := range []struct {
		name, url, ctype, body string
		want                   int
	}{
		{"strategic merge patch", url, "application/strategic-merge-patch+json", `{}`, http.StatusUnsupportedMediaType},
		{"not JSON", url, merge, `{`, http.StatusBadRequest},
		{"missing pod", srv.URL + "/api/v1/namespaces/ns/pods/zz", merge, `{}`, http.StatusNotFound},
		{"not a pod path", srv.URL + "/api/v1/namespaces/ns/configmaps/a", merge, `{}`, http.StatusMethodNotAllowed},
	} {
		if resp, b := patch(t, c.url, "application/json", c.ctype, c.body); resp.StatusCode != c.want {
			t.Errorf("%s: got %d %s, want %d", c.name, resp.StatusCode, b, c.want)
		}
	}
}

// TestAnnotationsPatchIsTheJSONPatch: a patch of annotations alone,
// applied to the decoded pod, gives what the merge patch of the pod's JSON
// gives; any other patch is not taken for one.
func TestAnnotationsPatchIsTheJSONPatch(t *testing.T) {
	base := &corev1.Pod{}
	base.Name, base.Namespace = "p", "ns"
	withAnn := base.DeepCopy()
	withAnn.Annotations = map[string]string{"a": "1", "b": "2"}
	for _, tc := range []struct {
		pod   *corev1.Pod
		patch string
	}{
		{base, `{"metadata":{"annotations":{"x":"1","y":"2"}}}`},
		{withAnn, `{"metadata":{"annotations":{"a":"9","c":"3"}}}`},
		{withAnn, `{"metadata":{"annotations":{"a":null}}}`},
		{withAnn, `{"metadata":{"annotations":{"a":null,"b":null}}}`},
		{base, `{"metadata":{"annotations":{"a":null}}}`},
		{withAnn, `{"metadata":{"annotations":{}}}`},
	} {
		if _, ok := annotationsOnly([]byte(tc.patch)); !ok {
			t.Fatalf("%s: not taken for an annotations patch", tc.patch)
		}
		fast, err := mergePatch(tc.pod, []byte(tc.patch))
		if err != nil {
			t.Fatal(err)
		}
		viaJSON, err := jsonPatched(tc.pod, tc.patch)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := json.Marshal(fast)
		b, _ := json.Marshal(viaJSON)
		if string(a) != string(b) {
			t.Errorf("%s: annotations path gives\n%s\nJSON path\n%s", tc.patch, a, b)
		}
	}
	for _, other := range []string{
		`{"metadata":{"annotations":null}}`, `{"metadata":{"annotations":{"a":1}}}`,
		`{"metadata":{"annotations":{"a":"1"},"labels":{"b":"2"}}}`, `{"spec":{"nodeName":"n"}}`,
		`{"metadata":{"annotations":{"a":"1"}},"status":{}}`, `[]`, `null`,
	} {
		if _, ok := annotationsOnly([]byte(other)); ok {
			t.Errorf("%s taken for an annotations patch", other)
		}
	}
}

// jsonPatched is the merge patch of p's JSON, the path every patch took
// before the annotations path.
func jsonPatched(p *corev1.Pod, patch string) (*corev1.Pod, error) {
	doc, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	doc, err = jsonpatch.MergePatch(doc, []byte(patch))
	if err != nil {
		return nil, err
	}
	var out corev1.Pod
	return &out, json.Unmarshal(doc, &out)
}
