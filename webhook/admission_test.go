package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/jsonpatch"
	"github.com/kwatch/kwatch/metrics"
	"github.com/kwatch/kwatch/metrics/metricstest"
)

func validateWidget(_ context.Context, r *Request[widget]) (Warnings, error) {
	if r.Operation == Delete {
		return nil, nil
	}
	if r.Object.Spec.Size > 10 {
		return Warnings{"big"}, &Denial{Code: http.StatusUnprocessableEntity, Reason: "Invalid", Message: "spec.size must be at most 10"}
	}
	if r.Object.Spec.Size == 0 {
		return nil, errors.New("spec.size is required")
	}
	if r.OldObject != nil && r.OldObject.Spec.Color != r.Object.Spec.Color {
		return Warnings{"color changed by " + r.UserInfo.Username}, nil
	}
	return nil, nil
}

func TestValidating(t *testing.T) {
	s := newTestServer(t, Options{})
	require.NoError(t, s.Admission("/validate", Validating(validateWidget)))
	w := func(size int, color string) widget {
		return widget{APIVersion: "example.com/v2", Kind: "Widget", Metadata: objectMeta{Name: "w"}, Spec: widgetSpec{Size: size, Color: color}}
	}
	tests := []struct {
		name     string
		op       Operation
		obj, old any
		allowed  bool
		code     int32
		message  string
		warnings []string
	}{
		{"allowed", Create, w(3, "red"), nil, true, 0, "", nil},
		{"plain error is 403", Create, w(0, ""), nil, false, 403, "spec.size is required", nil},
		{"denial keeps its code", Create, w(11, ""), nil, false, 422, "spec.size must be at most 10", []string{"big"}},
		{"old object and user", Update, w(3, "blue"), w(3, "red"), true, 0, "", []string{"color changed by alice"}},
		{"delete has no object", Delete, nil, w(3, "red"), true, 0, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := admissionAnswer(t, s, "/validate", admissionBody(t, tt.op, tt.obj, tt.old))
			require.Equal(t, "uid-1", resp.UID)
			require.Equal(t, tt.allowed, resp.Allowed)
			require.Equal(t, tt.warnings, resp.Warnings)
			if !tt.allowed {
				require.Equal(t, tt.code, resp.Result.Code)
				require.Equal(t, tt.message, resp.Result.Message)
			}
			require.Empty(t, resp.Patch)
		})
	}
}

func TestValidatingObjectThatDoesNotDecode(t *testing.T) {
	s := newTestServer(t, Options{})
	require.NoError(t, s.Admission("/validate", Validating(validateWidget)))
	resp := admissionAnswer(t, s, "/validate", admissionBody(t, Create, map[string]any{"spec": map[string]any{"size": "big"}}, nil))
	require.False(t, resp.Allowed)
	require.EqualValues(t, 400, resp.Result.Code)
	require.Contains(t, resp.Result.Message, "request.object does not decode")
}

func defaultWidget(_ context.Context, r *Request[widget], obj *widget) (Warnings, error) {
	if obj.Metadata.Labels == nil {
		obj.Metadata.Labels = map[string]string{}
	}
	obj.Metadata.Labels["example.com/defaulted"] = "true"
	if obj.Spec.Color == "" {
		obj.Spec.Color = "blue"
	}
	if r.Object.Spec.Color != "" && obj.Spec.Color != r.Object.Spec.Color {
		return nil, errors.New("the copy is not a copy")
	}
	return nil, nil
}

func TestMutating(t *testing.T) {
	s := newTestServer(t, Options{})
	require.NoError(t, s.Admission("/mutate", Mutating(defaultWidget)))
	sent := map[string]any{"apiVersion": "example.com/v2", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "uid": "u-1"}, "spec": map[string]any{"size": 3}, "status": map[string]any{"x": 1}}
	resp := admissionAnswer(t, s, "/mutate", admissionBody(t, Create, sent, nil))
	require.True(t, resp.Allowed)
	require.Equal(t, "JSONPatch", resp.PatchType)
	var ops []jsonpatch.Op
	require.NoError(t, json.Unmarshal(resp.Patch, &ops))
	got, err := applyOps(normalize(sent), ops)
	require.NoError(t, err, "patch %s", resp.Patch)
	want := normalize(sent).(map[string]any)
	want["metadata"].(map[string]any)["labels"] = map[string]any{"example.com/defaulted": "true"}
	want["spec"].(map[string]any)["color"] = "blue"
	require.Equal(t, want, got, "patch %s: fields the type does not know (uid, status) are kept", resp.Patch)

	// Nothing to change: no patch.
	done := map[string]any{"metadata": map[string]any{"name": "w", "labels": map[string]any{"example.com/defaulted": "true"}},
		"spec": map[string]any{"size": 3, "color": "red"}}
	resp = admissionAnswer(t, s, "/mutate", admissionBody(t, Update, done, done))
	require.True(t, resp.Allowed)
	require.Empty(t, resp.Patch)
	require.Empty(t, resp.PatchType)
}

func TestPanicIsADenial(t *testing.T) {
	reg := metrics.NewSet()
	s := newTestServer(t, Options{Metrics: reg})
	require.NoError(t, s.Admission("/boom", Validating(func(context.Context, *Request[widget]) (Warnings, error) {
		panic("nil map")
	})))
	resp := admissionAnswer(t, s, "/boom", admissionBody(t, Create, widget{}, nil))
	require.False(t, resp.Allowed)
	require.EqualValues(t, 500, resp.Result.Code)
	require.Equal(t, "webhook: the handler panicked: nil map", resp.Result.Message)
	series := metricstest.Scrape(t, reg)
	require.Equal(t, 1.0, series[MetricAnswers+`{answer="denied",webhook="/boom"}`], "%v", series)
	require.Equal(t, 1.0, series[MetricRequests+`{webhook="/boom"}`], "%v", series)
	require.Equal(t, 1.0, series[MetricLatency+`_count{webhook="/boom"}`], "%v", series)
}

// TestTimeoutIsADenial: a handler that ignores its context past the
// request's timeout (the API server's ?timeout=) is answered as a denial
// at the deadline, while it still runs: the answer does not wait for it.
func TestTimeoutIsADenial(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		returned := make(chan struct{})
		s := newTestServer(t, Options{})
		require.NoError(t, s.Admission("/slow", HandlerFunc(func(ctx context.Context, _ *AdmissionRequest) AdmissionResponse {
			defer close(returned)
			<-ctx.Done()
			<-release // outlives its deadline
			return Allowed()
		})))
		start := time.Now()
		resp := admissionAnswer(t, s, "/slow?timeout=3s", admissionBody(t, Create, widget{}, nil))
		require.Equal(t, 3*time.Second, time.Since(start), "answered at the request's timeout")
		require.False(t, resp.Allowed)
		require.Contains(t, resp.Result.Message, "the handler gave no answer in time")
		select {
		case <-returned:
			t.Fatal("the handler returned before it was released")
		default:
		}
		close(release)
		<-returned
	})
}

func TestOptionsValidation(t *testing.T) {
	for _, tt := range []struct {
		opts Options
		want string
	}{
		{Options{}, "needs CertDir"},
		{Options{CertDir: "x", SelfSigned: &SelfSigned{}}, "exclude each other"},
		{Options{CertDir: "x", MaxRequestBytes: -1}, "MaxRequestBytes"},
		{Options{CertDir: "x", RequestTimeout: -1}, "RequestTimeout"},
		{Options{SelfSigned: &SelfSigned{CustomResourceDefinitions: []string{"a"}}}, "no Client"},
	} {
		_, err := New(tt.opts)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%+v) = %v, want an error containing %q", tt.opts, err, tt.want)
		}
	}
	s := newTestServer(t, Options{})
	h := Validating(validateWidget)
	require.NoError(t, s.Admission("/a", h))
	require.ErrorContains(t, s.Admission("/a", h), "already registered")
	require.ErrorContains(t, s.Admission("a", h), "must start with /")
	require.ErrorContains(t, s.Admission("/b", nil), "nil handler")
}
