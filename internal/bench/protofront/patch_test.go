package protofront

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

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
