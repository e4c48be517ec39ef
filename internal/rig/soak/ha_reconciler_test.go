package soak

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/internal/rig/testutil"
	"github.com/kwatch/kwatch/kube"
)

// answerAll answers every request 200 with one ConfigMap, in process:
// the reconciler's writes need an answer, not a server.
type answerAll struct{}

func (answerAll) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	body := `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"namespace":"demo","name":"cm-08","resourceVersion":"2"}}`
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
}

// TestHAReconcileHeldByAFreezeStartsWhenItWasCalled: a reconcile the
// gate let in just before its process froze is held at its start; its
// context is cancelled during the freeze (the renew deadline), and the
// key's next owner starts on it. The record must date the held
// reconcile from its call, so its span ends at the cancel, before the
// other's start: dated from the thaw it is a zero-length span inside
// the other's, an overlap that never was, and the other's writes
// after it look like writes after a loss (as a 30-minute soak reported).
func TestHAReconcileHeldByAFreezeStartsWhenItWasCalled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		kc, err := kube.NewClient(&kube.Config{Host: "http://soak.invalid", HTTP: kube.HTTPConfig{Transport: answerAll{}}})
		if err != nil {
			t.Fatal(err)
		}
		r := &haMode{rec: newHARecord()}
		r.rec.held("demo/b", "b")
		p := &testutil.Freeze{}
		reconcile := r.reconciler("a", p, &lockedRand{rng: rand.New(rand.NewPCG(1, 5))},
			client.For(kc, haConfigMaps, client.Options{}))
		key := controller.Key{Namespace: "demo", Name: "cm-08"}

		ctx, cancel := context.WithCancel(context.Background())
		p.Freeze()
		done := make(chan struct{})
		go func() { defer close(done); _, _ = reconcile(ctx, key) }()
		synctest.Wait() // a's reconcile is held at its start
		time.Sleep(10 * time.Second)
		cancel() // a's renew deadline passed during the freeze
		time.Sleep(5 * time.Second)
		endB := r.rec.begin(context.Background(), "b", key.String()) // the next owner
		time.Sleep(5 * time.Second)
		p.Thaw()
		synctest.Wait()
		r.rec.wrote("b", key.String(), false) // b writes after the thaw
		<-done
		endB()

		if got := r.rec.overlaps(); len(got) != 0 {
			t.Errorf("overlaps %q, want none: a's span ended at its cancel, before b started", got)
		}
		if got := r.rec.postLoss(func(string) string { return "demo/b" }); len(got) != 0 {
			t.Errorf("post-loss writes %q, want none after b started the key", got)
		}
	})
}
