// Package memcluster runs one simulated API server that several clients
// reach, each over a network of its own (testutil.MemNet), so that a test
// can cut one client off while the others go on talking to the server.
// It works inside a testing/synctest bubble: nothing in it reads the wall
// clock or listens on a real port. The leader and shard tests share it.
//
//	c := memcluster.New(t)
//	kc, link := c.Connect("replica-a")   // a kube.Client on its own link
//	link.Partition(false)                 // refuse new connections, close the open ones
//	link.Heal()
package memcluster

import (
	"net/http"
	"sync"
	"testing"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/testutil"
	"github.com/kwatch/kwatch/kube"
)

// Cluster is the simulated server the clients share. Its fields are
// read-only.
type Cluster struct {
	t testing.TB
	// Server is the simulator, for in-process reads and writes.
	Server *sim.Server
}

// New builds a simulator with the default options; it serves only on the
// links Connect makes.
func New(t testing.TB) *Cluster {
	t.Helper()
	srv, err := sim.New(sim.Options{})
	if err != nil {
		t.Fatalf("memcluster: %v", err)
	}
	return &Cluster{t: t, Server: srv}
}

// Link is one client's network path to the server. Its methods are safe
// for concurrent use.
type Link struct {
	t    testing.TB
	net  *testutil.MemNet
	addr string
	h    http.Handler

	mu        sync.Mutex
	ln        *testutil.MemListener // the current listener; guarded by mu
	intercept Intercept             // guarded by mu; nil serves every request as is
}

// Intercept handles a request on a link in place of the server: it calls
// next to have the server handle it (or not, or with another writer).
type Intercept func(w http.ResponseWriter, r *http.Request, next http.Handler)

// Connect serves the cluster on a new link named name and returns a client
// on it; the link serves until the test ends.
func (c *Cluster) Connect(name string) (*kube.Client, *Link) {
	c.t.Helper()
	l := &Link{t: c.t, net: &testutil.MemNet{}, addr: name + ":80", h: c.Server.Handler()}
	l.serve()
	tr := l.net.Transport()
	kc, err := kube.NewClient(&kube.Config{Host: "http://" + l.addr, HTTP: kube.HTTPConfig{Transport: tr}})
	if err != nil {
		c.t.Fatalf("memcluster: %v", err)
	}
	c.t.Cleanup(tr.CloseIdleConnections)
	return kc, l
}

// serve listens on the link's address and serves the cluster there until
// the test ends.
func (l *Link) serve() {
	ln, err := l.net.Listen(l.addr)
	if err != nil {
		l.t.Fatalf("memcluster: listen on %s: %v", l.addr, err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		f := l.intercept
		l.mu.Unlock()
		if f != nil {
			f(w, r, l.h)
			return
		}
		l.h.ServeHTTP(w, r)
	})}
	done := make(chan struct{})
	go func() { _ = hs.Serve(ln); close(done) }()
	l.mu.Lock()
	l.ln = ln
	l.mu.Unlock()
	l.t.Cleanup(func() {
		_ = hs.Close()
		<-done
	})
}

// SetIntercept routes every later request on the link through f; nil
// ends it.
func (l *Link) SetIntercept(f Intercept) {
	l.mu.Lock()
	l.intercept = f
	l.mu.Unlock()
}

// Partition cuts the client off: new connections are refused, and the open
// ones go silent (freeze: the client notices only by its own deadlines) or
// are closed.
func (l *Link) Partition(freeze bool) {
	l.mu.Lock()
	ln := l.ln
	l.mu.Unlock()
	_ = ln.Close()
	if freeze {
		l.net.Freeze()
	} else {
		l.net.CutAll()
	}
}

// Heal ends a partition: frozen connections are closed, and new ones reach
// the server again.
func (l *Link) Heal() {
	l.net.CutAll()
	l.serve()
}
