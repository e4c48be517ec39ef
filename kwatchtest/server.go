package kwatchtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/kube"
)

// Options configures a Server. The zero value is a plain-HTTP server with the
// default resources, no authentication and a 10,000-event watch history.
type Options struct {
	// TLS serves TLS with HTTP/2 (negotiated by ALPN) and a self-signed
	// certificate made in memory; Config and Kubeconfig trust it. False means
	// plain HTTP (HTTP/1.1 with chunked watches).
	TLS bool
	// Token, when set, is required as a bearer token on every request but the
	// health checks; Config and Kubeconfig carry it. Empty means no
	// authentication (kubectl then asks for a username over TLS: set one).
	Token string
	// HistorySize is how many events the server keeps for watches that resume;
	// a watch from an older resourceVersion gets 410 Gone. Zero means 10,000.
	HistorySize int
	// BookmarkInterval is the period of watch bookmarks. Zero means 60 s, the
	// real server's.
	BookmarkInterval time.Duration
	// Seed makes generated uids, names and fault randomness reproducible. Zero
	// means 1.
	Seed uint64
	// GarbageCollect does what kube-controller-manager's garbage collector
	// would beside the API server, which alone only stores ownerReferences and
	// adds the foregroundDeletion or orphan finalizer on delete: dependents
	// whose owners (by uid) are all gone are deleted (background), the
	// dependents of an owner deleted with propagationPolicy Foreground are
	// deleted and the owner goes once none with blockOwnerDeletion is left, and
	// those of an owner deleted with Orphan lose their reference to it. False
	// means none of this happens, as on a bare kube-apiserver. The API server's
	// part is checked against a real kube-apiserver by the conformance suite;
	// this part only against this package's tests.
	GarbageCollect bool
}

// Server is a simulated API server serving on 127.0.0.1. It is safe for
// concurrent use. Start one for a test with Start, or elsewhere (an Example,
// a TestMain, a program) with Serve and Close.
type Server struct {
	srv    *sim.Server
	url    string
	token  string
	fatalf func(format string, args ...any) // t.Fatalf, or a panic without a test

	cancel context.CancelFunc
	served chan error // Serve's result, once
	gcDone chan error // CollectGarbage's result, once; nil without GarbageCollect

	mu         sync.Mutex
	dir        string // a temporary directory for the kubeconfig; "" until needed
	kubeconfig string // its path; "" until written
	closed     bool
	closeErr   error // Close's result, for the later calls
}

// Start serves a new simulated API server until the test ends: t.Cleanup stops
// it and waits for every goroutine it started. It fails the test at once if the
// server cannot start, and so do the methods that cannot go on (an invalid
// fault, a kubeconfig that cannot be written).
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	s, err := Serve(context.Background(), opts)
	if err != nil {
		t.Fatalf("kwatchtest: %v", err)
	}
	s.fatalf = t.Fatalf
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("kwatchtest: %v", err)
		}
	})
	return s
}

// Serve starts a server outside a test (an Example, a TestMain, a program):
// it listens on a loopback port before it returns, then serves (and collects
// garbage) in goroutines of its own until ctx ends or Close is called. The
// caller must call Close, which waits for those goroutines. Its methods
// that cannot go on panic.
//
//	srv, err := kwatchtest.Serve(ctx, kwatchtest.Options{})
//	if err != nil { ... }
//	defer srv.Close()
//	c, err := kube.NewClient(srv.Config())
func Serve(ctx context.Context, opts Options) (*Server, error) {
	return serve(ctx, sim.Options{
		TLS:              opts.TLS,
		BearerToken:      opts.Token,
		HistorySize:      opts.HistorySize,
		BookmarkInterval: opts.BookmarkInterval,
		Seed:             opts.Seed,
	}, opts.GarbageCollect)
}

// serve is Serve on any simulator options: kwatch's own tests reach the
// options Options does not offer through it (see internal/rig/simkit).
func serve(ctx context.Context, opts sim.Options, gc bool) (*Server, error) {
	srv, err := sim.New(opts)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &Server{srv: srv, url: "http://" + ln.Addr().String(), token: opts.BearerToken,
		fatalf: func(format string, args ...any) { panic(fmt.Sprintf(format, args...)) },
		cancel: cancel, served: make(chan error, 1)}
	if opts.TLS {
		s.url = "https://" + ln.Addr().String()
	}
	go func() { s.served <- srv.Serve(ctx, ln) }()
	if gc {
		s.gcDone = make(chan error, 1)
		go func() { s.gcDone <- srv.CollectGarbage(ctx) }()
	}
	return s, nil
}

// Close stops the server: every open watch ends, and Close returns once every
// goroutine of the server has. Later calls return the first one's result.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return s.closeErr
	}
	s.closed = true
	s.cancel()
	err := <-s.served
	if s.gcDone != nil {
		if gerr := <-s.gcDone; err == nil {
			err = gerr
		}
	}
	if s.dir != "" {
		if rerr := os.RemoveAll(s.dir); err == nil {
			err = rerr
		}
	}
	s.closeErr = err
	return err
}

// URL is the server's base URL, "http://127.0.0.1:port" or "https://...".
func (s *Server) URL() string { return s.url }

// CACertPEM is the certificate to trust with TLS; nil for plain HTTP.
func (s *Server) CACertPEM() []byte {
	if strings.HasPrefix(s.url, "https:") {
		return s.srv.CACertPEM()
	}
	return nil
}

// Config returns a new connection configuration for kwatch (kube.NewClient),
// trusting the server's certificate and carrying its token.
func (s *Server) Config() *kube.Config {
	return &kube.Config{Host: s.url, Auth: kube.AuthConfig{BearerToken: s.token}, TLS: kube.TLSConfig{CAData: s.CACertPEM()}}
}

// Kubeconfig returns the path of a kubeconfig file for any other client
// (client-go's clientcmd, controller-runtime, kubectl --kubeconfig), written in a
// temporary directory on first use and removed by Close. Its current context's
// namespace is "default".
func (s *Server) Kubeconfig() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.kubeconfig != "" {
		return s.kubeconfig
	}
	dir, err := os.MkdirTemp("", "kwatchtest-")
	if err != nil {
		s.fatalf("kwatchtest: kubeconfig: %v", err)
		return ""
	}
	s.dir = dir
	path := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(path, s.KubeconfigBytes(), 0o600); err != nil {
		s.fatalf("kwatchtest: write kubeconfig: %v", err)
		return ""
	}
	s.kubeconfig = path
	return path
}

// KubeconfigBytes returns the kubeconfig Kubeconfig writes (its CA inline), for
// clients that take one in memory (clientcmd.RESTConfigFromKubeConfig).
func (s *Server) KubeconfigBytes() []byte {
	return sim.KubeconfigBytes(s.url, s.CACertPEM(), s.token)
}

// ResourceVersion returns the newest resourceVersion the server has committed.
func (s *Server) ResourceVersion() string {
	return formatRV(s.srv.ResourceVersion())
}
