package chaosnet

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// Proxy forwards connections from its listener to a target address. Build
// it with New and run it with Serve; it is safe for concurrent use.
type Proxy struct {
	target string

	mu          sync.Mutex
	conns       map[*pair]struct{} // open connections; guarded by mu
	refuseUntil time.Time          // new connections are closed at once until then
}

type pair struct {
	client, server net.Conn
	frozen         chan struct{} // closed when the pair is frozen
	once           sync.Once
}

func (p *pair) freeze() { p.once.Do(func() { close(p.frozen) }) }

func (p *pair) close() {
	p.client.Close()
	p.server.Close()
}

// New returns a proxy to target ("127.0.0.1:8080"). It starts nothing.
func New(target string) *Proxy {
	return &Proxy{target: target, conns: map[*pair]struct{}{}}
}

// Serve accepts on ln until ctx is done, then closes every connection and
// returns after all its goroutines have exited.
func (p *Proxy) Serve(ctx context.Context, ln net.Listener) error {
	var wg sync.WaitGroup
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	for {
		c, err := ln.Accept()
		if err != nil {
			p.CutAll()
			wg.Wait()
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.handle(ctx, c)
		}()
	}
}

func (p *Proxy) handle(ctx context.Context, c net.Conn) {
	p.mu.Lock()
	refuse := time.Now().Before(p.refuseUntil)
	p.mu.Unlock()
	if refuse {
		c.Close()
		return
	}
	var d net.Dialer
	s, err := d.DialContext(ctx, "tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	pr := &pair{client: c, server: s, frozen: make(chan struct{})}
	p.mu.Lock()
	p.conns[pr] = struct{}{}
	p.mu.Unlock()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); pump(pr, s, c) }()
	go func() { defer wg.Done(); pump(pr, c, s) }()
	wg.Wait()
	p.mu.Lock()
	delete(p.conns, pr)
	p.mu.Unlock()
}

// pump copies src to dst until either side fails; once the pair is frozen
// it stops copying and holds the connection open until it is closed.
func pump(pr *pair, dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		select {
		case <-pr.frozen:
			// Swallow what arrives; never answer. The peer sees a
			// connection that is open and silent.
			if err != nil {
				pr.close()
				return
			}
			continue
		default:
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				pr.close()
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				pr.close()
				return
			}
			// Half-close: pass the FIN on.
			if tc, ok := dst.(*net.TCPConn); ok {
				tc.CloseWrite()
			}
			return
		}
	}
}

// Freeze stops all traffic on every open connection without closing any:
// both peers see a silent, open connection. New connections are unaffected.
func (p *Proxy) Freeze() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for pr := range p.conns {
		pr.freeze()
	}
	return len(p.conns)
}

// CutAll closes every open connection at once, as a server restart does.
func (p *Proxy) CutAll() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for pr := range p.conns {
		pr.close()
	}
	return len(p.conns)
}

// Refuse closes new connections as soon as they are accepted, for d.
func (p *Proxy) Refuse(d time.Duration) {
	p.mu.Lock()
	p.refuseUntil = time.Now().Add(d)
	p.mu.Unlock()
}

// Open is the number of open connections.
func (p *Proxy) Open() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}
