package webhook

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDecodeBadReviews(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"empty", ``, "the body is empty"},
		{"not JSON", `{"apiVersion":`, "not JSON"},
		{"syntax offset", `{"a" 1}`, "offset 6"},
		{"trailing data", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","operation":"CREATE"}} {}`, "data after the review"},
		{"wrong kind", `{"apiVersion":"admission.k8s.io/v1","kind":"ConversionReview"}`, `kind "ConversionReview", want "AdmissionReview"`},
		{"v1beta1", `{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview"}`, `apiVersion "admission.k8s.io/v1beta1" is not served`},
		{"no request", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`, "has no request"},
		{"no uid", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"operation":"CREATE"}}`, "uid is empty"},
		{"no operation", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u"}}`, "operation is empty"},
		{"wrong type", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":5}}`, "uid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeAdmissionReview([]byte(tt.body))
			require.ErrorIs(t, err, ErrBadReview)
			require.ErrorContains(t, err, tt.want)
		})
	}
	for _, tt := range []struct{ body, want string }{
		{`{"apiVersion":"apiextensions.k8s.io/v1beta1","kind":"ConversionReview"}`, "is not served"},
		{`{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"u"}}`, "desiredAPIVersion is empty"},
		{`{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"u","desiredAPIVersion":"a/v1","objects":{}}}`, "objects"},
	} {
		_, err := DecodeConversionReview([]byte(tt.body))
		require.ErrorIs(t, err, ErrBadReview)
		require.ErrorContains(t, err, tt.want)
	}
}

// TestBadRequestsAreAnswered: what is no review gets a status and a body
// naming the problem, and the server keeps serving.
func TestBadRequestsAreAnswered(t *testing.T) {
	s := newTestServer(t, Options{MaxRequestBytes: 1 << 10})
	require.NoError(t, s.Admission("/validate", Validating(validateWidget)))
	require.NoError(t, s.Conversion("/convert", testConverter(t)))
	big := admissionBody(t, Create, widget{Spec: widgetSpec{Color: strings.Repeat("x", 2<<10)}}, nil)
	tests := []struct {
		name, method, path, ct string
		body                   []byte
		code                   int
		want                   string
	}{
		{"malformed", http.MethodPost, "/validate", "application/json", []byte(`{{`), 400, "not JSON"},
		{"oversized", http.MethodPost, "/validate", "application/json", big, 413, "over the limit of 1024 bytes"},
		{"v1beta1", http.MethodPost, "/validate", "application/json",
			[]byte(`{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"u","operation":"CREATE"}}`), 400, "v1beta1"},
		{"a ConversionReview to an admission path", http.MethodPost, "/validate", "application/json",
			conversionBody(t, "example.com/v2"), 400, `kind "ConversionReview"`},
		{"an AdmissionReview to a conversion path", http.MethodPost, "/convert", "application/json",
			admissionBody(t, Create, widget{}, nil), 400, `kind "AdmissionReview"`},
		{"GET", http.MethodGet, "/validate", "", nil, 405, "GET is not served"},
		{"yaml", http.MethodPost, "/validate", "application/yaml", []byte("a: 1"), 415, "only application/json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, tt.path, bytes.NewReader(tt.body))
			if tt.ct != "" {
				r.Header.Set("Content-Type", tt.ct)
			}
			w := httptest.NewRecorder()
			s.ServeHTTP(w, r)
			require.Equal(t, tt.code, w.Code, w.Body.String())
			require.Contains(t, w.Body.String(), tt.want)
		})
	}
	resp := admissionAnswer(t, s, "/validate", admissionBody(t, Create, widget{Spec: widgetSpec{Size: 1}}, nil))
	require.True(t, resp.Allowed, "still serving")
}

// TestRawHandler: the raw path sees the request as sent.
func TestRawHandler(t *testing.T) {
	s := newTestServer(t, Options{})
	var seen *AdmissionRequest
	require.NoError(t, s.Admission("/raw", HandlerFunc(func(_ context.Context, r *AdmissionRequest) AdmissionResponse {
		seen = r
		if !r.IsDryRun() {
			return DeniedErr(errors.New("only dry runs"))
		}
		return Allowed()
	})))
	body := admissionBody(t, Update, widget{}, widget{})
	resp := admissionAnswer(t, s, "/raw", body)
	require.False(t, resp.Allowed)
	require.Equal(t, "only dry runs", resp.Result.Message)
	require.Equal(t, "alice", seen.UserInfo.Username)
	require.Equal(t, Update, seen.Operation)
	require.NotEmpty(t, seen.OldObject)
}

// TestDecodeRealCaptures decodes the reviews kube-apiserver v1.37.2 sent
// (internal/testdata/real-apiserver) and answers them.
func TestDecodeRealCaptures(t *testing.T) {
	body, err := os.ReadFile("../internal/testdata/real-apiserver/webhook-admission-review-create.json")
	require.NoError(t, err)
	rv, err := DecodeAdmissionReview(body)
	require.NoError(t, err)
	r := rv.Request
	require.Equal(t, Create, r.Operation)
	require.Equal(t, GroupVersionResource{Version: "v1", Resource: "configmaps"}, r.Resource)
	require.Equal(t, "by-kubectl", r.Name)
	require.Equal(t, "kwatch-admin", r.UserInfo.Username)
	require.Contains(t, r.UserInfo.Groups, "system:masters")
	require.False(t, r.IsDryRun())
	require.True(t, len(r.OldObject) == 0 || string(r.OldObject) == "null", "a create's oldObject is null: %s", r.OldObject)
	type cm struct {
		Data map[string]string `json:"data"`
	}
	var seen *Request[cm]
	s := newTestServer(t, Options{})
	require.NoError(t, s.Admission("/v", Validating(func(_ context.Context, req *Request[cm]) (Warnings, error) {
		seen = req
		return nil, nil
	})))
	resp := admissionAnswer(t, s, "/v", body)
	require.True(t, resp.Allowed)
	require.Equal(t, r.UID, resp.UID)
	require.Nil(t, seen.OldObject, "null decodes as no old object")
	require.Equal(t, map[string]string{"a": "1"}, seen.Object.Data)

	body, err = os.ReadFile("../internal/testdata/real-apiserver/webhook-conversion-review.json")
	require.NoError(t, err)
	crv, err := DecodeConversionReview(body)
	require.NoError(t, err)
	require.Equal(t, "webhook.example.com/v2", crv.Request.DesiredAPIVersion)
	require.Len(t, crv.Request.Objects, 1)
	head := decodeJSON(t, crv.Request.Objects[0]).(map[string]any)
	require.Equal(t, "webhook.example.com/v1", head["apiVersion"])
}
