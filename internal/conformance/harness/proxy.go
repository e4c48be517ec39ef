package harness

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
)

// Proxy forwards TCP connections from a loopback port to a target address
// and can cut them all at once: a network partition between a client and
// its server, with TLS passing through untouched. Build one with NewProxy,
// run Serve, and cancel its context to stop it. Safe for concurrent use.
type Proxy struct {
	Addr   string // host:port clients dial
	target string
	ln     net.Listener

	mu    sync.Mutex
	conns map[net.Conn]bool // every open connection, both sides; true for a client's side
	cut   bool              // while true, new connections are closed at once
}

// NewProxy listens on a free loopback port for target. It starts nothing.
func NewProxy(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	return &Proxy{Addr: ln.Addr().String(), target: target, ln: ln, conns: map[net.Conn]bool{}}, nil
}

// Serve accepts and forwards connections until ctx ends, then closes every
// connection and returns once all its goroutines have exited.
func (p *Proxy) Serve(ctx context.Context) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	stop := context.AfterFunc(ctx, func() { p.ln.Close(); p.Cut() })
	defer stop()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		wg.Go(func() { p.forward(c) })
	}
}

func (p *Proxy) forward(client net.Conn) {
	if !p.track(client, true) {
		client.Close()
		return
	}
	defer p.untrackClose(client)
	server, err := net.Dial("tcp", p.target)
	if err != nil || !p.track(server, false) {
		if server != nil {
			server.Close()
		}
		return
	}
	defer p.untrackClose(server)
	var wg sync.WaitGroup
	// Each direction closes both ends when it ends, so the other unblocks.
	wg.Go(func() { _, _ = io.Copy(server, client); server.Close(); client.Close() })
	wg.Go(func() { _, _ = io.Copy(client, server); server.Close(); client.Close() })
	wg.Wait()
}

// track records c, a client's side or a server's, unless the proxy is cut.
func (p *Proxy) track(c net.Conn, client bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		return false
	}
	p.conns[c] = client
	return true
}

func (p *Proxy) untrackClose(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

// Cut closes every open connection and refuses new ones until Heal. It
// returns how many client connections were open (both sides of each are
// closed), so a caller can tell a cut that severed something
// from one that found nothing to sever.
func (p *Proxy) Cut() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	n := 0
	for c, client := range p.conns {
		c.Close()
		if client {
			n++
		}
	}
	return n
}

// Heal lets new connections through again.
func (p *Proxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
}
