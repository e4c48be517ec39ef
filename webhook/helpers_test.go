package webhook

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// widget is a custom resource of the tests, in its v2 shape (the hub).
type widget struct {
	APIVersion string     `json:"apiVersion,omitempty"`
	Kind       string     `json:"kind,omitempty"`
	Metadata   objectMeta `json:"metadata"`
	Spec       widgetSpec `json:"spec"`
}

type objectMeta struct {
	Name        string            `json:"name,omitempty"`
	Namespace   string            `json:"namespace,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

type widgetSpec struct {
	Size  int    `json:"size"`
	Color string `json:"color,omitempty"`
}

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func newTestServer(t *testing.T, opts Options) *Server {
	t.Helper()
	if opts.CertDir == "" && opts.SelfSigned == nil {
		opts.SelfSigned = &SelfSigned{}
	}
	if opts.Logger == nil {
		opts.Logger = quietLogger()
	}
	s, err := New(opts)
	require.NoError(t, err)
	return s
}

// admissionBody is an AdmissionReview request for obj (and old).
func admissionBody(t testing.TB, op Operation, obj, old any) []byte {
	t.Helper()
	req := &AdmissionRequest{UID: "uid-1", Operation: op, Name: "w", Namespace: "ns",
		Kind:     GroupVersionKind{Group: "example.com", Version: "v2", Kind: "Widget"},
		Resource: GroupVersionResource{Group: "example.com", Version: "v2", Resource: "widgets"},
		UserInfo: UserInfo{Username: "alice", Groups: []string{"dev"}}}
	if obj != nil {
		req.Object = mustJSON(t, obj)
	}
	if old != nil {
		req.OldObject = mustJSON(t, old)
	}
	return mustJSON(t, AdmissionReview{APIVersion: AdmissionAPIVersion, Kind: AdmissionKind, Request: req})
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// post sends body to path on s (no TLS) and returns the status and body.
func post(t testing.TB, s http.Handler, path string, body []byte) (int, []byte) {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	out, _ := io.ReadAll(w.Result().Body)
	return w.Code, out
}

func admissionAnswer(t testing.TB, s http.Handler, path string, body []byte) *AdmissionResponse {
	t.Helper()
	code, out := post(t, s, path, body)
	require.Equal(t, http.StatusOK, code, "%s", out)
	var rv AdmissionReview
	require.NoError(t, json.Unmarshal(out, &rv), "%s", out)
	require.Equal(t, AdmissionAPIVersion, rv.APIVersion)
	require.Equal(t, AdmissionKind, rv.Kind)
	require.NotNil(t, rv.Response, "%s", out)
	return rv.Response
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
