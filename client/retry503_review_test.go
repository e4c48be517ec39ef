package client_test

import (
	"net/http"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

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
		rt := &scriptedAnswers{codes: []int{http.StatusServiceUnavailable}}
		var attempts int
		told, err := guardedUpdate(t, rt, func(req *http.Request, send func(*http.Request) (*http.Response, error)) (*http.Response, error) {
			attempts++
			if attempts > 1 { // the term ended during the Retry-After pause
				return nil, &kube.FencedError{Method: req.Method, Path: req.URL.Path, Reason: "the term ended"}
			}
			return send(req)
		})
		require.True(t, kube.IsFenced(err), "%v", err)
		require.Equal(t, 1, rt.sent, "the first attempt reached the server")
		require.Equal(t, []kube.Written{{Resource: configMaps, Namespace: "demo", Name: "a", Uncertain: true}}, told,
			"the 503'd first attempt may have been done: %v", err)
	})
}
