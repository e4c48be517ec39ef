package client_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/kube"
)

// TestWritesOfUnknownOutcomeAreRecorded: a write the server may have done
// although it said no success (no answer; 500, 502, 503 or 504, which a
// proxy in between may answer after it forwarded the write) is told to the
// WriteRecorder as Uncertain; one the server refused is not told at all.
func TestWritesOfUnknownOutcomeAreRecorded(t *testing.T) {
	tests := []struct {
		name   string
		answer func(w http.ResponseWriter)
		want   bool // told, as Uncertain
		// createRefused: the create is refused for certain, the delete
		// still of unknown outcome (kube.AnswerOutcomeUnknown).
		createRefused bool
	}{
		{"connection closed", func(w http.ResponseWriter) { panic(http.ErrAbortHandler) }, true, false},
		{"500", answer(http.StatusInternalServerError, "InternalError"), true, false},
		{"504", answer(http.StatusGatewayTimeout, "Timeout"), true, false},
		{"409", answer(http.StatusConflict, "AlreadyExists"), false, false},
		{"422", answer(http.StatusUnprocessableEntity, "Invalid"), false, false},
		{"502", answer(http.StatusBadGateway, "InternalError"), true, false},
		{"503", answer(http.StatusServiceUnavailable, "ServiceUnavailable"), true, false},
		{"429", answer(http.StatusTooManyRequests, "TooManyRequests"), false, false},
		// kube-apiserver's answer when an admission webhook with
		// failurePolicy Fail cannot be called: a create refused before
		// storage; a delete may have stored its first step.
		{"500 admission webhook not called", answerMsg(http.StatusInternalServerError, "InternalError", webhookDown), true, true},
		{"500 other internal error", answerMsg(http.StatusInternalServerError, "InternalError", "Internal error occurred: etcdserver: request timed out"), true, false},
		{"503 with the webhook's words", answerMsg(http.StatusServiceUnavailable, "ServiceUnavailable", webhookDown), true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cms, told := recordingConfigMaps(t, func(w http.ResponseWriter, _ *http.Request) { tt.answer(w) })

			_, err := cms.Create(bg, cm("a", nil), client.CreateOptions{})
			require.Error(t, err)
			err = cms.Delete(bg, "demo", "a", client.DeleteOptions{})
			require.Error(t, err)
			_, err = cms.Create(bg, cm("a", nil), client.CreateOptions{WriteOptions: client.WriteOptions{DryRun: true}})
			require.Error(t, err)
			if !tt.want {
				require.Empty(t, *told)
				return
			}
			want := []kube.Written{
				{Resource: configMaps, Namespace: "demo", Uncertain: true},
				{Resource: configMaps, Namespace: "demo", Name: "a", Deleted: true, Uncertain: true},
			}
			if tt.createRefused {
				want = want[1:]
			}
			require.Equal(t, want, *told, "the create (unless refused) and the delete, not the dry run")
		})
	}
}

func answer(code int, reason string) func(http.ResponseWriter) { return answerMsg(code, reason, "no") }

func answerMsg(code int, reason, msg string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = w.Write([]byte(status(code, reason, msg)))
	}
}

// webhookDown is the message of kube-apiserver's 500 for a validating
// webhook it cannot reach (as the conformance suite's testWebhookDown
// checks it on a real server), JSON-escaped.
const webhookDown = `Internal error occurred: failed calling webhook \"fail.example.com\": failed to call webhook: Post \"https://127.0.0.1:1/hook?timeout=5s\": dial tcp 127.0.0.1:1: connect: connection refused`

// TestRecordedWriteIsACopy: what the WriteRecorder is told of a write
// holds its own labels, so changing the object the write returned leaves
// it as the server answered.
func TestRecordedWriteIsACopy(t *testing.T) {
	cms, told := recordingConfigMaps(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"demo","name":"a","uid":"u1","resourceVersion":"7","labels":{"app":"web"}}}`))
	})

	got, err := cms.Create(bg, cm("a", nil), client.CreateOptions{})
	require.NoError(t, err)
	got.Labels["app"] = "changed"
	got.Labels["new"] = "x"
	require.Equal(t, []kube.Written{{Resource: configMaps, Namespace: "demo", Name: "a", UID: "u1",
		ResourceVersion: "7", Labels: map[string]string{"app": "web"}}}, *told)
}

// recordingConfigMaps is a ConfigMap client of a server answering with
// handler, and what its WriteRecorder is told.
func recordingConfigMaps(t *testing.T, handler http.HandlerFunc) (*client.Client[*ConfigMap], *[]kube.Written) {
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	base, err := kube.NewClient(&kube.Config{Host: srv.URL, RateLimit: kube.RateLimitConfig{QPS: -1}})
	require.NoError(t, err)
	told := new([]kube.Written)
	c := base.WithWriteRecorder(func(_ context.Context, w kube.Written) { *told = append(*told, w) })
	return client.For(c, kube.Typed[*ConfigMap](configMaps), client.Options{}), told
}

// TestRetriedWriteAfterA503IsUncertain: a guarded update the server
// answered 503 (which it may have done all the same), which the client
// sent again after the Retry-After and which the server then refused
// with a 409 (as it would refuse it once the first attempt had changed
// the version), is of unknown outcome; after a 429 (not processed) the
// refusal is the outcome.
func TestRetriedWriteAfterA503IsUncertain(t *testing.T) {
	for _, first := range []int{http.StatusServiceUnavailable, http.StatusTooManyRequests} {
		t.Run(strconv.Itoa(first), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rt := &scriptedAnswers{codes: []int{first, http.StatusConflict}}
				told, err := guardedUpdate(t, rt, nil)
				require.True(t, kube.IsConflict(err), "%v", err)
				require.Equal(t, 2, rt.sent, "the first answer was retried")
				if first == http.StatusTooManyRequests {
					require.Empty(t, told)
					return
				}
				require.Equal(t, []kube.Written{{Resource: configMaps, Namespace: "demo", Name: "a", Uncertain: true}}, told)
			})
		})
	}
}

// scriptedAnswers answers the requests sent through it with a Status of
// each code in turn, the last one again once they run out, each with a
// Retry-After of one second; sent counts the requests.
type scriptedAnswers struct {
	codes []int
	sent  int
}

func (s *scriptedAnswers) RoundTrip(r *http.Request) (*http.Response, error) {
	code := s.codes[min(s.sent, len(s.codes)-1)]
	s.sent++
	body := status(code, http.StatusText(code), "scripted")
	h := http.Header{"Content-Type": {"application/json"}, "Retry-After": {"1"}}
	return &http.Response{StatusCode: code, Header: h, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
}

// guardedUpdate sends an update of ConfigMap demo/a at resourceVersion 5
// through rt, and through wi when it is not nil, and returns what the
// client's WriteRecorder was told and the update's error.
func guardedUpdate(t *testing.T, rt http.RoundTripper, wi kube.WriteInterceptor) ([]kube.Written, error) {
	base, err := kube.NewClient(&kube.Config{Host: "http://api", HTTP: kube.HTTPConfig{Transport: rt}, RateLimit: kube.RateLimitConfig{QPS: -1}})
	require.NoError(t, err)
	if wi != nil {
		base = base.WithWriteInterceptor(wi)
	}
	var told []kube.Written
	c := base.WithWriteRecorder(func(_ context.Context, w kube.Written) { told = append(told, w) })
	obj := cm("a", nil)
	obj.ResourceVersion = "5"
	_, err = client.For(c, kube.Typed[*ConfigMap](configMaps), client.Options{}).Update(t.Context(), obj, client.UpdateOptions{})
	return told, err
}
