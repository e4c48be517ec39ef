package suite

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/kube"
)

// proxied503 is the answer a proxy between the client and the server (a
// load balancer, the aggregator in front of an extension server) gives
// when its upstream connection broke after it had forwarded the request.
const proxied503 = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"upstream connection reset","reason":"ServiceUnavailable","code":503}`

// testRetriedAfter503IsUncertain: a guarded update reaches the server,
// and a proxy replaces the server's answer with a 503 and a Retry-After.
// The client sends it again, and the server refuses the retry with a 409:
// the first attempt changed the version. The update is done on the
// server, and the client tells its WriteRecorder the write's outcome is
// unknown, not that it failed; the error says both attempts were made.
func testRetriedAfter503IsUncertain(t T, e *Env) {
	cms := client.For(e.Admin, kube.Typed[*corev1.ConfigMap](configMapsRes), client.Options{})
	created, err := cms.Create(e.Ctx, newConfigMap(e.NS, "retried", map[string]string{"k": "1"}), client.CreateOptions{})
	require.NoError(t, err)

	var mu sync.Mutex
	var puts int
	var told []kube.Written
	proxied := e.Admin.WithWriteInterceptor(func(req *http.Request, send func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		resp, err := send(req)
		mu.Lock()
		puts++
		first := puts == 1
		mu.Unlock()
		if err != nil || !first {
			return resp, err
		}
		_, _ = io.Copy(io.Discard, resp.Body) // the server's answer, lost on the way back
		resp.Body.Close()
		return &http.Response{StatusCode: http.StatusServiceUnavailable, Status: "503 Service Unavailable", Proto: "HTTP/1.1",
			ProtoMajor: 1, ProtoMinor: 1, Header: http.Header{"Content-Type": {"application/json"}, "Retry-After": {"1"}},
			Body: io.NopCloser(strings.NewReader(proxied503)), ContentLength: int64(len(proxied503)), Request: req}, nil
	}).WithWriteRecorder(func(_ context.Context, w kube.Written) {
		mu.Lock()
		defer mu.Unlock()
		told = append(told, w)
	})

	created.Data["k"] = "2"
	_, err = client.For(proxied, kube.Typed[*corev1.ConfigMap](configMapsRes), client.Options{}).Update(e.Ctx, created, client.UpdateOptions{})
	require.True(t, kube.IsConflict(err), "the retry meets the version the first attempt wrote: %v", err)
	se, _ := kube.AsStatus(err)
	require.Equal(t, 2, se.Attempts, "%v", err)
	require.True(t, se.EarlierOutcomeUnknown, "%v", err)

	got, err := cms.Get(e.Ctx, e.NS, "retried", client.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, "2", got.Data["k"], "the first attempt was done")
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, 2, puts)
	require.Len(t, told, 1)
	require.True(t, told[0].Uncertain, "told: %+v", told)
	require.Equal(t, []string{e.NS, "retried"}, []string{told[0].Namespace, told[0].Name})
}
