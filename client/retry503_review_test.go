package client_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/kube"
)

// TestRetriedWriteAfterA503ThenFencedIsUncertain: a guarded update whose
// first attempt reached the server and was answered 503 with a
// Retry-After (which the server may have done all the same) and whose
// retry a write interceptor then refused before it was sent (a
// *kube.FencedError: package controller's fence once the term ended
// during the Retry-After pause) is of unknown outcome: the first attempt
// was sent. The error is both the answer and the refusal. (Found by a
// second reader: Send returned the FencedError alone, which the client
// took for a write never sent.)
func TestRetriedWriteAfterA503ThenFencedIsUncertain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var sent int
		rt := roundTripper(func(r *http.Request) (*http.Response, error) {
			sent++
			h := http.Header{"Content-Type": {"application/json"}, "Retry-After": {"1"}}
			body := status(http.StatusServiceUnavailable, "ServiceUnavailable", "try again")
			return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: h, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
		})
		base, err := kube.NewClient(&kube.Config{Host: "http://api", HTTP: kube.HTTPConfig{Transport: rt}, RateLimit: kube.RateLimitConfig{QPS: -1}})
		require.NoError(t, err)
		var attempts int
		fenced := base.WithWriteInterceptor(func(req *http.Request, send func(*http.Request) (*http.Response, error)) (*http.Response, error) {
			attempts++
			if attempts > 1 { // the term ended during the Retry-After pause
				return nil, &kube.FencedError{Method: req.Method, Path: req.URL.Path, Reason: "the term ended"}
			}
			return send(req)
		})
		var told []kube.Written
		c := fenced.WithWriteRecorder(func(_ context.Context, w kube.Written) { told = append(told, w) })
		cms := client.For(c, kube.Typed[*ConfigMap](configMaps), client.Options{})
		obj := cm("a", nil)
		obj.ResourceVersion = "5"
		_, err = cms.Update(context.Background(), obj, client.UpdateOptions{})
		require.True(t, kube.IsFenced(err), "%v", err)
		require.Equal(t, 1, sent, "the first attempt reached the server")
		require.Equal(t, []kube.Written{{Resource: configMaps, Namespace: "demo", Name: "a", Uncertain: true}}, told,
			"the 503'd first attempt may have been done: %v", err)
	})
}
