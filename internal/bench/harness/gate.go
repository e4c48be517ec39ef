package harness

import (
	"net/http"
	"sync"
	"time"
)

// gate sits in front of a server's handler. Closed, it holds every request
// (before any response header) until it opens again: the harness closes it,
// drops the engines' watches, writes while they cannot read, and opens it
// to release them at a known instant. It also notes when the first list
// (or streaming list) arrives after each opening.
type gate struct {
	mu        sync.Mutex
	closed    bool          // guarded by mu
	opened    chan struct{} // closed when the gate opens; guarded by mu
	held      int           // requests waiting; guarded by mu
	firstList int64         // Unix ns of the first list since the last open; guarded by mu
}

func newGate() *gate {
	g := &gate{opened: make(chan struct{})}
	close(g.opened)
	return g
}

func (g *gate) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		wait, opened := g.closed, g.opened
		if wait {
			g.held++
		}
		g.mu.Unlock()
		if wait {
			select {
			case <-opened:
			case <-r.Context().Done():
			}
			g.mu.Lock()
			g.held--
			g.mu.Unlock()
			if r.Context().Err() != nil {
				return
			}
		}
		if isList(r) {
			g.noteList(time.Now().UnixNano())
		}
		h.ServeHTTP(w, r)
	})
}

// isList reports a list or a streaming list (a watch with initial events).
func isList(r *http.Request) bool {
	q := r.URL.Query()
	w := q.Get("watch")
	return (w != "1" && w != "true") || q.Get("sendInitialEvents") == "true"
}

func (g *gate) noteList(at int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.firstList == 0 {
		g.firstList = at
	}
}

func (g *gate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.closed {
		g.closed, g.opened = true, make(chan struct{})
	}
}

// open releases held requests and returns the Unix ns it did so.
func (g *gate) open() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := time.Now().UnixNano()
	g.firstList = 0
	if g.closed {
		g.closed = false
		close(g.opened)
	}
	return now
}

func (g *gate) heldRequests() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.held
}

func (g *gate) firstListNS() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.firstList
}
