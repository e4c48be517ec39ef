package sim

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Server is the simulated API server. Create it with New (the zero value is not
// usable); serve it with Serve, or mount Handler in any http.Server. All methods are
// safe for concurrent use.
type Server struct {
	opts   Options
	store  *store
	faults faultState
	tls    *tlsMaterial // nil unless Options.TLS
	lags   watchLags    // lag.go
	// lagWakeC is closed (and replaced) when a watch lag changes; guarded
	// by lagWake.
	lagWake  sync.Mutex
	lagWakeC chan struct{}

	watchers   atomic.Int64  // open watch streams
	terminated atomic.Uint64 // watchers ended for falling behind
	discovery  atomic.Uint64 // discovery requests
	other      atomic.Uint64 // requests that match no resource

	webhooks webhookClients // admission and conversion calls (admitcall.go)
	crds     crdRegistry    // the CRDs written, for their versions (crd.go)

	stopOnce sync.Once
	stop     chan struct{} // closed when Serve's context ends: every stream ends

	// watchTookFaults, set only by this package's tests before serving, runs
	// when a watch has taken its faults and not started yet.
	watchTookFaults func()
}

// New builds a server with the default resources plus Options.Resources, and the
// "default" and "kube-system" namespaces. It starts no goroutine.
func New(opts Options) (*Server, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Server{opts: o, store: newStore(&o), stop: make(chan struct{})}
	s.faults.init(o.Seed)
	for _, ri := range append(defaultResources(), o.Resources...) {
		if err := s.store.register(ri); err != nil {
			return nil, err
		}
	}
	if o.TLS {
		if s.tls, err = newTLSMaterial(o.TLSHosts, o.Clock()); err != nil {
			return nil, err
		}
	}
	for _, ns := range []string{"default", "kube-system"} {
		if err := s.EnsureNamespace(ns); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// RegisterResource adds a resource type at runtime. Its objects are stored as JSON.
func (s *Server) RegisterResource(ri ResourceInfo) error { return s.store.register(ri) }

// Handler returns the HTTP handler serving the API and the /sim/ admin endpoints.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serveHTTP) }

// Serve serves on ln (TLS with HTTP/2 when Options.TLS) until ctx ends, then ends
// every open stream, shuts the listener and connections down and returns once every
// handler has returned. It returns nil after a clean shutdown. A Server serves once:
// after Serve returns, its streams end at once on any listener.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	var active inflight
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			active.add()
			defer active.done()
			s.serveHTTP(w, r)
		}),
		ReadHeaderTimeout: 30 * time.Second,
		HTTP2:             &http.HTTP2Config{MaxConcurrentStreams: s.opts.MaxStreamsPerConnection},
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	if s.tls != nil {
		srv.TLSConfig = &tls.Config{
			Certificates: []tls.Certificate{s.tls.cert},
			NextProtos:   []string{"h2", "http/1.1"},
			MinVersion:   tls.VersionTLS12,
		}
	}
	errc := make(chan error, 1)
	go func() {
		var err error
		if s.tls != nil {
			err = srv.ServeTLS(ln, "", "")
		} else {
			err = srv.Serve(ln)
		}
		errc <- err
	}()
	var serveErr error
	select {
	case serveErr = <-errc:
	case <-ctx.Done():
	}
	s.stopOnce.Do(func() { close(s.stop) })
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil {
		_ = srv.Close()
	}
	if serveErr == nil {
		serveErr = <-errc
	}
	active.wait()
	s.webhooks.closeIdle()
	if errors.Is(serveErr, http.ErrServerClosed) {
		return nil
	}
	return fmt.Errorf("sim: serve: %w", serveErr)
}

// inflight counts running handlers so Serve can wait for them.
type inflight struct {
	mu   sync.Mutex
	n    int
	cond *sync.Cond
}

func (a *inflight) add() {
	a.mu.Lock()
	a.n++
	a.mu.Unlock()
}

func (a *inflight) done() {
	a.mu.Lock()
	a.n--
	if a.n == 0 && a.cond != nil {
		a.cond.Broadcast()
	}
	a.mu.Unlock()
}

func (a *inflight) wait() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cond == nil {
		a.cond = sync.NewCond(&a.mu)
	}
	for a.n > 0 {
		a.cond.Wait()
	}
}

// stopped is closed when the server is shutting down.
func (s *Server) stopped() <-chan struct{} { return s.stop }

// isStopped reports whether the server is shutting down.
func (s *Server) isStopped() bool {
	select {
	case <-s.stop:
		return true
	default:
		return false
	}
}

// ResourceVersion returns the newest committed resourceVersion.
func (s *Server) ResourceVersion() uint64 {
	s.store.mu.RLock()
	defer s.store.mu.RUnlock()
	return s.store.rv
}

// CACertPEM returns the PEM certificate clients should trust, or nil without TLS.
func (s *Server) CACertPEM() []byte {
	if s.tls == nil {
		return nil
	}
	return append([]byte(nil), s.tls.certPEM...)
}
