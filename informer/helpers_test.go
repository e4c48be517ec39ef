package informer

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

const (
	waitLong = 60 * time.Second // generous: the machine is shared and loaded
	tick     = 5 * time.Millisecond
)

// testPod is a slim pod: what a controller that reads a few fields decodes into.
type testPod struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		NodeName string `json:"nodeName,omitempty"`
	} `json:"spec"`
	Status struct {
		Phase string `json:"phase,omitempty"`
	} `json:"status"`
}

func podJSON(name, rv string) string {
	return fmt.Sprintf(`{"kind":"Pod","apiVersion":"v1","metadata":{"name":%q,"namespace":"ns","resourceVersion":%q,"uid":"u-%s"},"spec":{"nodeName":"n1"},"status":{"phase":"Running"}}`, name, rv, name)
}

func listJSON(rv, cont string, pods ...string) string {
	return fmt.Sprintf(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":%q,"continue":%q},"items":[%s]}`,
		rv, cont, strings.Join(pods, ","))
}

func eventJSON(typ, object string) string { return fmt.Sprintf(`{"type":%q,"object":%s}`, typ, object) }

func bookmarkJSON(rv string, initialEnd bool) string {
	ann := ""
	if initialEnd {
		ann = `,"annotations":{"k8s.io/initial-events-end":"true"}`
	}
	return eventJSON("BOOKMARK", fmt.Sprintf(`{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":%q%s}}`, rv, ann))
}

func statusJSON(code int, reason string) string {
	return fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"scripted %s","reason":%q,"code":%d}`, reason, reason, code)
}

// step answers one request of a scripted server.
type step func(w http.ResponseWriter, r *http.Request)

// scripted is an API server that answers requests in order from a script
// and records their query strings. Once the script is used up it holds
// every further request open, silent, until the client goes away.
type scripted struct {
	srv   *httptest.Server // nil when served on a MemNet
	mu    sync.Mutex
	steps []step
	seen  []url.Values
	times []time.Time // when each request arrived
}

func newScripted(t *testing.T, steps ...step) *scripted {
	s := &scripted{steps: steps}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *scripted) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.seen = append(s.seen, r.URL.Query())
	s.times = append(s.times, time.Now())
	var st step
	if len(s.steps) > 0 {
		st, s.steps = s.steps[0], s.steps[1:]
	}
	s.mu.Unlock()
	if st == nil {
		<-r.Context().Done()
		return
	}
	st(w, r)
}

// requests returns the query strings seen so far.
func (s *scripted) requests() []url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]url.Values(nil), s.seen...)
}

// arrivals returns when each request so far arrived.
func (s *scripted) arrivals() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.times...)
}

func (s *scripted) waitRequests(t *testing.T, n int) []url.Values {
	t.Helper()
	require.Eventually(t, func() bool { return len(s.requests()) >= n }, waitLong, tick, "waiting for %d requests", n)
	return s.requests()
}

// when holds a step back until cond holds (the handler has caught up, say),
// so tests can tell coalesced deliveries from separate ones.
func when(cond func() bool, st step) step {
	return func(w http.ResponseWriter, r *http.Request) {
		deadline := time.Now().Add(waitLong)
		for !cond() && time.Now().Before(deadline) {
			time.Sleep(tick)
		}
		st(w, r)
	}
}

func answer(code int, body string) step {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if code == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "1")
		}
		w.WriteHeader(code)
		fmt.Fprint(w, body)
	}
}

// confirmed answers the check that the server has reached rv: a one-item
// list (empty here) at rv.
func confirmed(rv string) step { return answer(200, listJSON(rv, "")) }

// requireConfirm checks that q is the informer's confirmation of rv.
func requireConfirm(t *testing.T, q url.Values, rv string) {
	t.Helper()
	require.Empty(t, q.Get("watch"), "a confirmation is a list")
	require.Equal(t, rv, q.Get("resourceVersion"))
	require.Equal(t, watch.MatchNotOlderThan, q.Get("resourceVersionMatch"))
	require.Equal(t, "1", q.Get("limit"))
}

// stream answers a watch with events, flushed one by one; end=true ends
// the stream cleanly afterwards, otherwise it stays open until the client leaves.
func stream(end bool, events ...string) step {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		for _, ev := range events {
			fmt.Fprint(w, ev)
			w.(http.Flusher).Flush()
		}
		if !end {
			<-r.Context().Done()
		}
	}
}

func newClient(t *testing.T, host string) *kube.Client {
	c, err := kube.NewClient(&kube.Config{Host: host})
	require.NoError(t, err)
	return c
}

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// start runs inf until the test ends and checks that Run returned.
func start[T watch.Object](t *testing.T, inf *Informer[T]) context.CancelFunc {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- inf.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(waitLong):
			t.Errorf("Run did not return after its context was cancelled")
		}
	})
	return cancel
}

func storeRVs[T watch.Object](inf *Informer[T]) map[string]string {
	out := map[string]string{}
	for k, o := range inf.Store().Snapshot() {
		out[k] = o.GetResourceVersion()
	}
	return out
}

// recorderT records handler calls on testPods as strings.
type recorderT struct {
	mu    sync.Mutex
	calls []string
}

func key(p *testPod) string { return p.Namespace + "/" + p.Name }

func (r *recorderT) OnAdd(p *testPod, initial bool) {
	s := "add " + key(p) + "@" + p.ResourceVersion
	if initial {
		s += " initial"
	}
	r.log(s)
}

// OnUpdate writes an old object of nil (HandlerOptions.NoOld) as "_".
func (r *recorderT) OnUpdate(old, new *testPod) {
	from := "_"
	if old != nil {
		from = old.ResourceVersion
	}
	r.log("update " + key(new) + "@" + from + "->" + new.ResourceVersion)
}
func (r *recorderT) OnDelete(p *testPod, unknown bool) {
	s := "delete " + key(p) + "@" + p.ResourceVersion
	if unknown {
		s += " unknown"
	}
	r.log(s)
}
func (r *recorderT) log(s string) {
	r.mu.Lock()
	r.calls = append(r.calls, s)
	r.mu.Unlock()
}
func (r *recorderT) count(n int) func() bool {
	return func() bool { return len(r.get()) >= n }
}

func (r *recorderT) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...)
}
