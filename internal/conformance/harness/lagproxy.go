package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/kwatch/kwatch/kube"
)

// LagProxy is an HTTP proxy in front of an API server that can hold the
// watch responses of a resource for a delay: the lag fault of the
// simulator (sim.Server.SetWatchLag), for the real kube-apiserver. The TCP
// Proxy cannot do it: TLS passes through it, and a watch's bytes share an
// HTTP/2 connection with everything else. LagProxy terminates HTTP
// instead: clients speak plain HTTP/1.1 to it (a watch comes back chunked)
// and it forwards every request with the upstream client's credentials.
//
// A watch of a lagged resource passes its response body on chunk by chunk,
// each chunk (events and bookmarks alike) D after it arrived from the
// server, in order; its headers and every other request, lists included,
// pass at once. The chunks in flight are bounded (lagChunks): a watch
// that outruns the delay line waits on the server's connection, as a slow
// network would.
//
// Build one with NewLagProxy, run Serve, and cancel its context to stop
// it. Safe for concurrent use.
type LagProxy struct {
	URL string // the base URL clients use, "http://127.0.0.1:port"
	up  *kube.Client
	ln  net.Listener

	mu        sync.Mutex
	lags      map[string]time.Duration // resource ("pods", "deployments.apps") -> delay
	refuse    func(*http.Request) bool // answered 500 without reaching the server; guarded by mu
	forwarded func(*http.Request, int) // told of each request the server answered; guarded by mu
	// relag is closed (and replaced) by SetLag: the chunks held look at
	// their resource's lag again. Guarded by mu.
	relag chan struct{}
	// ended maps a resource to a channel Drop closes (and forgets): the
	// watches open until then end. Guarded by mu.
	ended map[string]chan struct{}
}

// Drop ends every watch of resource that is open now, and discards what
// its delay line holds: the client sees the response end, as when the
// server closes a watch, without the events it was yet to pass on.
// Watches made afterwards pass as before.
func (p *LagProxy) Drop(resource string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.ended[resource]; ok {
		close(c)
		delete(p.ended, resource)
	}
}

// endedOf is the channel Drop closes to end the watches of resource
// open now.
func (p *LagProxy) endedOf(resource string) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.ended[resource]
	if !ok {
		c = make(chan struct{})
		p.ended[resource] = c
	}
	return c
}

// Refuse answers 500 (a Status, reason InternalError) to the requests
// match picks, which never reach the server: a leader's Lease writes,
// say. Nil lets every request through again.
func (p *LagProxy) Refuse(match func(*http.Request) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refuse = match
}

// OnForwarded has f told of every request the proxy forwarded, with the
// status the server answered, once the answer's headers are back: a
// test's record of what reached the server through this proxy. Nil
// stops it. f must not block.
func (p *LagProxy) OnForwarded(f func(r *http.Request, code int)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.forwarded = f
}

func (p *LagProxy) hooks() (refuse func(*http.Request) bool, forwarded func(*http.Request, int)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refuse, p.forwarded
}

// lagChunks bounds the chunks one lagged watch holds.
const lagChunks = 1024

// NewLagProxy listens on a free loopback port for the server upstream
// points at, whose credentials it uses. It starts nothing.
func NewLagProxy(upstream *kube.Config) (*LagProxy, error) {
	up, err := kube.NewClient(upstream)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	return &LagProxy{URL: "http://" + ln.Addr().String(), up: up, ln: ln, lags: map[string]time.Duration{},
		ended: map[string]chan struct{}{}, relag: make(chan struct{})}, nil
}

// SetLag holds the chunks of resource's watches for d after they
// arrived, those held now included; 0 ends the lag and passes on what is
// held. Negative d is an error.
func (p *LagProxy) SetLag(resource string, d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("harness: lag of %s must be >= 0, got %v", resource, d)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if d == 0 {
		delete(p.lags, resource)
	} else {
		p.lags[resource] = d
	}
	close(p.relag)
	p.relag = make(chan struct{})
	return nil
}

// lagOf is resource's lag, and the channel closed when it may change.
func (p *LagProxy) lagOf(resource string) (time.Duration, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lags[resource], p.relag
}

// Serve proxies until ctx ends, then returns once every request it was
// serving has ended.
func (p *LagProxy) Serve(ctx context.Context) error {
	srv := &http.Server{Handler: http.HandlerFunc(p.serveHTTP), BaseContext: func(net.Listener) context.Context { return ctx }}
	stop := context.AfterFunc(ctx, func() { srv.Close() })
	defer stop()
	err := srv.Serve(p.ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

func (p *LagProxy) serveHTTP(w http.ResponseWriter, r *http.Request) {
	refuse, forwarded := p.hooks()
	if refuse != nil && refuse(r) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","code":500,"reason":"InternalError","message":"refused by the conformance proxy"}`)
		return
	}
	out, err := http.NewRequestWithContext(r.Context(), r.Method, r.URL.RequestURI(), r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	out.Header = r.Header.Clone()
	out.Header.Del("Authorization") // the upstream client's credentials apply
	out.ContentLength = r.ContentLength
	resp, err := p.up.Do(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	if forwarded != nil {
		forwarded(r, resp.StatusCode)
	}
	// A watch counts as open for Drop once its client can have its
	// headers.
	res, watching := resourceOf(r)
	var ended <-chan struct{}
	if watching {
		ended = p.endedOf(res)
	}
	maps.Copy(w.Header(), resp.Header)
	w.Header().Del("Content-Length") // the body may come back chunked
	w.WriteHeader(resp.StatusCode)
	// The headers go out at once: a watch client waits for them before it
	// does anything else, and the server sends them before any event.
	_ = http.NewResponseController(w).Flush()
	if !watching {
		copyFlushing(w, resp.Body)
		return
	}
	p.relay(r.Context(), w, resp.Body, res, ended)
}

// copyFlushing copies body to w, flushing after every read so that a
// stream is not held in the proxy's buffer.
func copyFlushing(w http.ResponseWriter, body io.Reader) {
	rc := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	for {
		n, err := body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			_ = rc.Flush()
		}
		if err != nil {
			return
		}
	}
}

type lagChunk struct {
	b  []byte
	at time.Time
}

// relay passes a watch's body on, each chunk held until it arrived plus
// the resource's current lag, until ended is closed (Drop). The reader goroutine ends when the body
// does; relay waits for it.
func (p *LagProxy) relay(ctx context.Context, w http.ResponseWriter, body io.ReadCloser, res string, ended <-chan struct{}) {
	chunks := make(chan lagChunk, lagChunks) // buffered: the delay line itself
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(chunks)
		for {
			buf := make([]byte, 32<<10)
			n, err := body.Read(buf)
			if n > 0 {
				select {
				case chunks <- lagChunk{b: buf[:n], at: time.Now()}:
				case <-ctx.Done():
					return
				case <-ended:
					return
				}
			}
			if err != nil {
				return
			}
		}
	})
	defer wg.Wait()
	defer body.Close() // unblocks the reader if the client left first
	rc := http.NewResponseController(w)
	for c := range chunks {
		select {
		case <-ended:
			return
		default:
		}
		if !p.hold(ctx, c.at, res, ended) {
			return
		}
		if _, err := w.Write(c.b); err != nil {
			return
		}
		_ = rc.Flush()
	}
}

// hold waits until a chunk that arrived at at is due under res's lag,
// looking again whenever SetLag runs; false when ctx ends or ended is
// closed first.
func (p *LagProxy) hold(ctx context.Context, at time.Time, res string, ended <-chan struct{}) bool {
	for {
		lag, relag := p.lagOf(res)
		wait := time.Until(at.Add(lag))
		if wait <= 0 {
			return true
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
			return true
		case <-relag:
			t.Stop()
		case <-ctx.Done():
			t.Stop()
			return false
		case <-ended:
			t.Stop()
			return false
		}
	}
}

// resourceOf is the resource a request addresses ("pods",
// "deployments.apps") and whether it is a watch.
func resourceOf(r *http.Request) (string, bool) {
	q := r.URL.Query()
	v, ok := q["watch"]
	watching := ok && len(v) > 0 && !strings.EqualFold(v[0], "false") && v[0] != "0"
	segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	var group string
	switch {
	case len(segs) >= 3 && segs[0] == "api":
		segs = segs[2:]
	case len(segs) >= 4 && segs[0] == "apis":
		group, segs = segs[1], segs[3:]
	default:
		return "", false
	}
	if len(segs) > 0 && segs[0] == "watch" { // the deprecated /watch/ path
		watching, segs = true, segs[1:]
	}
	if len(segs) >= 3 && segs[0] == "namespaces" {
		segs = segs[2:]
	}
	if len(segs) == 0 {
		return "", false
	}
	if group != "" {
		return segs[0] + "." + group, watching
	}
	return segs[0], watching
}
