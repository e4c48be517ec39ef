package client_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/kube"
)

// reviewPod holds what this test reads of a pod.
type reviewPod struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
}

// TestGracefulDeleteWebhookFailureIsUncertain: kube-apiserver deletes an
// object of a graceful-deletion strategy (a pod) whose grace period comes
// to 0 (an unscheduled or finished pod, or gracePeriodSeconds=0) in two
// steps, and calls the validating admission webhooks in both
// (k8s.io/apiserver registry Store.Delete: updateForGracefulDeletionAndFinalizers
// runs deleteValidation and stores deletionTimestamp and
// deletionGracePeriodSeconds=0; then Storage.Delete runs deleteValidation
// again). When the webhook answers the first call and cannot be called for
// the second, the answer is the 500 "Internal error occurred: failed calling
// webhook ..." although the first step was stored: the pod has a new
// resourceVersion and a deletionTimestamp, and the kubelet or the pod GC
// finishes the delete later. So for a DELETE that answer does not say
// nothing was stored: the write is of unknown outcome.
//
// The server here plays kube-apiserver's two steps with such a webhook.
func TestGracefulDeleteWebhookFailureIsUncertain(t *testing.T) {
	var (
		mu    sync.Mutex
		calls int // calls to the webhook: the first is answered, the next not
		pod   = reviewPod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "p", UID: "u1", ResourceVersion: "10"}}
	)
	webhook := func() bool { calls++; return calls == 1 }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.Method {
		case http.MethodGet:
			_ = json.NewEncoder(w).Encode(&pod)
		case http.MethodDelete:
			// Step 1: deleteValidation, then the update that marks the pod deleted.
			if !webhook() {
				t.Error("the first webhook call is answered")
			}
			now := metav1.Now()
			zero := int64(0)
			pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds, pod.ResourceVersion = &now, &zero, "11"
			// Step 2: Storage.Delete's deleteValidation cannot call the webhook.
			if webhook() {
				t.Error("the second webhook call fails")
			}
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(status(http.StatusInternalServerError, "InternalError", webhookDown)))
		default:
			t.Errorf("unexpected %s", r.Method)
		}
	}))
	t.Cleanup(srv.Close)
	base, err := kube.NewClient(&kube.Config{Host: srv.URL, RateLimit: kube.RateLimitConfig{QPS: -1}})
	require.NoError(t, err)
	var told []kube.Written
	c := base.WithWriteRecorder(func(_ context.Context, w kube.Written) { told = append(told, w) })
	pods := client.For(c, kube.Typed[*reviewPod](kube.Pods), client.Options{})

	zero := int64(0)
	err = pods.Delete(bg, "demo", "p", client.DeleteOptions{GracePeriodSeconds: &zero})
	se, ok := kube.AsStatus(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, int32(http.StatusInternalServerError), se.Code)

	got, err := pods.Get(bg, "demo", "p", client.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, "11", got.ResourceVersion, "the server stored the delete's first step")
	require.NotNil(t, got.DeletionTimestamp)

	require.Equal(t, []kube.Written{{Resource: kube.Pods, Namespace: "demo", Name: "p", Deleted: true, Uncertain: true}}, told,
		"a delete answered with the webhook's 500 may have been (partly) done: of unknown outcome")
}
