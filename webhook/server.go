package webhook

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/kwatch/kwatch/metrics"
)

// Defaults of Options.
const (
	DefaultAddr = ":9443"
	// DefaultMaxRequestBytes bounds a review's body: an AdmissionReview
	// of an UPDATE carries the object twice, and etcd's default limit on
	// one object is 1.5 MiB.
	DefaultMaxRequestBytes = 4 << 20
	// DefaultRequestTimeout bounds one request when the API server names
	// no shorter timeout: the default of a webhook's timeoutSeconds.
	DefaultRequestTimeout = 10 * time.Second
	// DefaultShutdownTimeout bounds how long Run lets in-flight requests
	// finish after its context ends.
	DefaultShutdownTimeout = 15 * time.Second
	DefaultCertName        = "tls.crt"
	DefaultKeyName         = "tls.key"
)

// Options configure a Server. Either CertDir or SelfSigned is required.
type Options struct {
	// Addr is the address to listen on; DefaultAddr. "127.0.0.1:0" picks
	// a free port (see Server.Addr).
	Addr string
	// Listener, if set, is served instead of listening on Addr: for a
	// program that must know the port before Run (to register the
	// webhooks' URL), or socket activation. Run closes it.
	Listener net.Listener
	// CertDir holds the serving certificate and key as a mounted
	// kubernetes.io/tls Secret has them (cert-manager writes one):
	// CertName and KeyName, PEM. They are read at Run and re-read when
	// they change (see certs.go), without dropping a connection.
	CertDir string
	// CertName and KeyName are the file names in CertDir; DefaultCertName
	// and DefaultKeyName.
	CertName, KeyName string
	// SelfSigned, for development only, makes Run create a CA and a
	// serving certificate in memory and write the CA into the caBundle of
	// the webhook configurations and CRDs it names. It excludes CertDir.
	SelfSigned *SelfSigned
	// MaxRequestBytes bounds a request body; DefaultMaxRequestBytes. A
	// longer one is answered 413.
	MaxRequestBytes int64
	// RequestTimeout bounds a handler's call; the API server's own
	// ?timeout= when shorter. DefaultRequestTimeout. A handler still
	// running then is answered at once as a denial (a conversion as a
	// failure); Run waits for it to return.
	RequestTimeout time.Duration
	// ShutdownTimeout bounds the in-flight requests, and the handlers
	// still running past their answer, after Run's context ends;
	// DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// Logger receives a line per denied, failed or rejected request and
	// a debug line per answer, with the webhook path and the object;
	// slog.Default().
	Logger *slog.Logger
	// Metrics receives the kwatch_webhook_* series; none by default.
	Metrics metrics.Provider
}

// Server is an HTTPS server of admission and conversion webhooks. Build it
// with New, register paths with Admission and Conversion, then Run (a
// controller.Manager runs it for you: ManagerOptions.Webhook). Its
// constructor starts nothing; it is safe for concurrent use.
type Server struct {
	opts  Options
	log   *slog.Logger
	mux   *http.ServeMux
	ready chan struct{} // closed once Run serves

	mu      sync.Mutex
	paths   map[string]bool // guarded by mu
	running bool            // guarded by mu
	addr    net.Addr        // the listener's, once serving; guarded by mu
	serving bool            // between listening and shutdown; guarded by mu
	caPEM   []byte          // the self-signed CA, once made; guarded by mu

	// calls counts the handlers' goroutines (route.callBounded), which
	// may outlive their request's answer when they ignore its timeout;
	// Run waits for them.
	calls sync.WaitGroup
}

// New returns a Server for opts. It checks the options; it reads no file
// and opens no port.
func New(opts Options) (*Server, error) {
	switch {
	case opts.CertDir == "" && opts.SelfSigned == nil:
		return nil, errors.New("webhook: Options needs CertDir (a mounted certificate) or SelfSigned (development)")
	case opts.CertDir != "" && opts.SelfSigned != nil:
		return nil, errors.New("webhook: Options.CertDir and Options.SelfSigned exclude each other")
	case opts.MaxRequestBytes < 0:
		return nil, fmt.Errorf("webhook: Options.MaxRequestBytes %d is negative", opts.MaxRequestBytes)
	case opts.RequestTimeout < 0:
		return nil, fmt.Errorf("webhook: Options.RequestTimeout %v is negative", opts.RequestTimeout)
	case opts.ShutdownTimeout < 0:
		return nil, fmt.Errorf("webhook: Options.ShutdownTimeout %v is negative", opts.ShutdownTimeout)
	}
	if opts.SelfSigned != nil {
		if err := opts.SelfSigned.validate(); err != nil {
			return nil, err
		}
	}
	opts.Addr = cmp.Or(opts.Addr, DefaultAddr)
	opts.CertName = cmp.Or(opts.CertName, DefaultCertName)
	opts.KeyName = cmp.Or(opts.KeyName, DefaultKeyName)
	opts.MaxRequestBytes = cmp.Or(opts.MaxRequestBytes, DefaultMaxRequestBytes)
	opts.RequestTimeout = cmp.Or(opts.RequestTimeout, DefaultRequestTimeout)
	opts.ShutdownTimeout = cmp.Or(opts.ShutdownTimeout, DefaultShutdownTimeout)
	log := cmp.Or(opts.Logger, slog.Default())
	return &Server{opts: opts, log: log, mux: http.NewServeMux(), ready: make(chan struct{}), paths: map[string]bool{}}, nil
}

// Admission serves h at path (for example "/validate-widgets"): the
// clientConfig path of a ValidatingWebhookConfiguration's or
// MutatingWebhookConfiguration's webhook. Register paths before Run.
func (s *Server) Admission(path string, h Handler) error {
	if h == nil {
		return fmt.Errorf("webhook: Admission %q: nil handler", path)
	}
	return s.handle(path, &admissionEndpoint{h: h})
}

// Conversion serves c at path: the conversion webhook of a CRD whose
// versions c converts between.
func (s *Server) Conversion(path string, c *Converter) error {
	if c == nil {
		return fmt.Errorf("webhook: Conversion %q: nil converter", path)
	}
	return s.handle(path, &conversionEndpoint{c: c})
}

func (s *Server) handle(path string, e endpoint) error {
	if !strings.HasPrefix(path, "/") {
		return fmt.Errorf("webhook: path %q must start with /", path)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running {
		return fmt.Errorf("webhook: path %q registered after Run", path)
	}
	if s.paths[path] {
		return fmt.Errorf("webhook: path %q is already registered", path)
	}
	s.paths[path] = true
	s.mux.Handle(path, &route{s: s, path: path, e: e, m: newPathMetrics(s.opts.Metrics, path)})
	return nil
}

// ServeHTTP serves the registered paths, without TLS: for tests and for a
// program that runs its own server. Run serves the same over TLS.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Ready is closed once Run serves: Addr is then known.
func (s *Server) Ready() <-chan struct{} { return s.ready }

// Serving reports whether Run is serving (for a readiness probe): from the
// moment it listens until its context ends.
func (s *Server) Serving() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.serving
}

// CACertPEM is the self-signed CA (Options.SelfSigned) once Ready, for a
// client that calls the server directly; nil otherwise.
func (s *Server) CACertPEM() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caPEM
}

// Addr is the address Run listens on; nil before Ready.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// Run loads the certificate (or makes and registers the self-signed one),
// listens on Addr and serves HTTPS until ctx ends; then it stops accepting,
// lets in-flight requests, and handlers answered at their timeout that are
// still running, finish within ShutdownTimeout and returns. It returns
// after every goroutine it started has ended, except a handler that
// ignores its context past ShutdownTimeout, which it cannot stop: then it
// returns an error saying so. A Server runs once.
func (s *Server) Run(ctx context.Context) error {
	s.mu.Lock()
	if s.running {
		s.mu.Unlock()
		return errors.New("webhook: Server.Run called twice")
	}
	s.running = true
	s.mu.Unlock()

	ln := s.opts.Listener
	if ln == nil {
		var lc net.ListenConfig
		var err error
		if ln, err = lc.Listen(ctx, "tcp", s.opts.Addr); err != nil {
			return fmt.Errorf("webhook: listen on %s: %w", s.opts.Addr, err)
		}
	}
	getCert, err := s.certificates(ctx)
	if err != nil {
		_ = ln.Close()
		return err
	}
	srv := &http.Server{
		Handler:           s.mux,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: getCert},
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	s.mu.Lock()
	s.addr, s.serving = ln.Addr(), true
	s.mu.Unlock()
	close(s.ready)
	s.log.Info("webhook server serving", "addr", ln.Addr().String())

	served := make(chan error, 1) // buffered: Serve's goroutine never blocks on it
	go func() { served <- srv.ServeTLS(ln, "", "") }()
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-served:
	}
	s.mu.Lock()
	s.serving = false
	s.mu.Unlock()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.ShutdownTimeout)
	defer cancel()
	shutErr := srv.Shutdown(sctx)
	if shutErr == nil {
		shutErr = s.waitCalls(sctx)
	}
	if serveErr == nil {
		serveErr = <-served
	}
	if errors.Is(serveErr, http.ErrServerClosed) {
		serveErr = nil
	}
	if shutErr != nil {
		shutErr = fmt.Errorf("webhook: shutdown: %w", shutErr)
		_ = srv.Close()
	}
	return errors.Join(serveErr, shutErr)
}

// waitCalls waits for the handlers' goroutines (the calls answered at
// their timeout that are still running) until ctx ends.
func (s *Server) waitCalls(ctx context.Context) error {
	done := make(chan struct{})
	go func() { // ends with the last handler: Run cannot end a handler that ignores its context
		s.calls.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return errors.New("a handler answered at its timeout is still running after ShutdownTimeout (it ignores its context)")
	}
}
