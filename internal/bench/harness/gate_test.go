package harness

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestGateHoldsUntilOpen(t *testing.T) {
	g := newGate()
	srv := httptest.NewServer(g.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})))
	defer srv.Close()

	g.close()
	done := make(chan int64, 1)
	go func() {
		resp, err := http.Get(srv.URL + "/api/v1/pods?watch=1&resourceVersion=5")
		if err == nil {
			resp.Body.Close()
		}
		done <- time.Now().UnixNano()
	}()
	if err := waitFor(t.Context(), 5*time.Second, "held request", func() bool { return g.heldRequests() == 1 }); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
		t.Fatal("request answered while the gate was closed")
	case <-time.After(50 * time.Millisecond):
	}
	opened := g.open()
	if at := <-done; at < opened {
		t.Errorf("request answered at %d, before the gate opened at %d", at, opened)
	}
	if got := g.firstListNS(); got != 0 {
		t.Errorf("a plain watch counted as a list at %d", got)
	}
}

func TestGateNotesFirstList(t *testing.T) {
	g := newGate()
	srv := httptest.NewServer(g.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})))
	defer srv.Close()
	for _, q := range []string{"?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan", "?limit=500"} {
		opened := g.open()
		resp, err := http.Get(srv.URL + "/api/v1/pods" + q)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := g.firstListNS(); got < opened {
			t.Errorf("%s: first list at %d, want at or after %d", q, got, opened)
		}
	}
}
