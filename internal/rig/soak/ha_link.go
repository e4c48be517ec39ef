package soak

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kwatch/kwatch/internal/rig/chaosnet"
	"github.com/kwatch/kwatch/internal/rig/testutil"
)

// haLink is one replica process's path to the server: its client dials
// a chaosnet proxy of its own (the soak's network faults), which
// forwards to the link's handler, which records what reaches the server
// (haRecord) and serves it in process. The handler can answer the
// process's Lease writes 500, and holds its Lease requests while the
// process is frozen.
type haLink struct {
	proc  string
	run   *haMode
	proxy *chaosnet.Proxy
	addr  string // the proxy's, for the client
	pause *testutil.Freeze

	mu        sync.Mutex
	failUntil time.Time // Lease writes are answered 500 until then; guarded by mu

	refused atomic.Int64 // Lease writes answered 500
	held    atomic.Int64 // Lease requests held while frozen
}

// serveLink starts the link of process proc; it runs until ctx ends.
func (r *haMode) serveLink(ctx context.Context, proc string, p *testutil.Freeze) (*haLink, error) {
	hln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	pln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		hln.Close()
		return nil, err
	}
	l := &haLink{proc: proc, run: r, proxy: chaosnet.New(hln.Addr().String()), addr: pln.Addr().String(), pause: p}
	hs := &http.Server{Handler: l}
	r.wg.Add(3)
	go func() { defer r.wg.Done(); _ = hs.Serve(hln) }()
	go func() { defer r.wg.Done(); _ = l.proxy.Serve(ctx, pln) }()
	go func() { defer r.wg.Done(); <-ctx.Done(); _ = hs.Close() }()
	return l, nil
}

// failLeasesFor answers the process's Lease writes 500 for d.
func (l *haLink) failLeasesFor(d time.Duration) {
	l.mu.Lock()
	l.failUntil = time.Now().Add(d)
	l.mu.Unlock()
}

func (l *haLink) failing() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return time.Now().Before(l.failUntil)
}

func (l *haLink) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	write := req.Method != http.MethodGet && req.Method != http.MethodHead
	lease := strings.Contains(req.URL.Path, "/leases")
	if lease {
		// A frozen process sends no Lease request: what it had sent is
		// held until it thaws, and dropped if the client gave up meanwhile.
		if held, ok := l.pause.Hold(req.Context()); held {
			l.held.Add(1)
			if !ok {
				return
			}
		}
		if write && l.failing() {
			l.refused.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","code":500,"reason":"InternalError","message":"injected by the HA soak"}`))
			return
		}
	}
	if write && !lease {
		if key, ok := configMapKey(req.URL.Path); ok {
			l.run.rec.wrote(l.proc, key, req.URL.Query().Get("fieldManager") == "kwatch-shard")
		}
	}
	sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
	l.run.srv.Handler().ServeHTTP(sw, req)
	if lease && write && sw.code/100 == 2 {
		l.run.recordHolders()
	}
}

// configMapKey is the "namespace/name" of a ConfigMap write's path.
func configMapKey(path string) (string, bool) {
	parts := strings.Split(strings.TrimPrefix(path, "/api/v1/"), "/") // namespaces, ns, configmaps, name
	if len(parts) < 4 || parts[0] != "namespaces" || parts[2] != "configmaps" {
		return "", false
	}
	return parts[1] + "/" + parts[3], true
}

// recordHolders records the holder every Lease shows now (a deleted
// one shows ""). It runs after each Lease write the server applied, so
// the record follows the holders in the order the server applied them.
func (r *haMode) recordHolders() {
	r.leaseMu.Lock()
	defer r.leaseMu.Unlock()
	_, objs, err := r.srv.Snapshot("leases.coordination.k8s.io")
	if err != nil {
		return
	}
	seen := map[string]bool{}
	for _, o := range objs {
		var l struct {
			Spec struct {
				HolderIdentity string `json:"holderIdentity"`
			} `json:"spec"`
		}
		if json.Unmarshal(o.JSON, &l) != nil {
			continue
		}
		name := o.Namespace + "/" + o.Name
		seen[name] = true
		r.leaseNames[name] = true
		r.rec.held(name, l.Spec.HolderIdentity)
	}
	for name := range r.leaseNames {
		if !seen[name] {
			r.rec.held(name, "")
		}
	}
}

// statusWriter keeps the status the server answered.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	w.code = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
