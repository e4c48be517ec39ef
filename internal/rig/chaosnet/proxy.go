package chaosnet

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Fault names a way the proxy breaks connections.
type Fault string

// The proxy's faults, as Fired counts them.
const (
	// FaultFreeze: an open connection stopped passing bytes (Freeze).
	FaultFreeze Fault = "freeze"
	// FaultCut: an open connection closed (CutAll).
	FaultCut Fault = "cut"
	// FaultRefuse: a new connection closed as soon as it was accepted (Refuse).
	FaultRefuse Fault = "refuse"
)

// Proxy forwards connections from its listener to a target address. Build
// it with New and run it with Serve; it is safe for concurrent use.
type Proxy struct {
	target string

	mu          sync.Mutex
	conns       map[*pair]struct{} // open connections; guarded by mu
	refuseUntil time.Time          // new connections are closed at once until then
	fired       map[Fault]int64    // connections each fault was applied to; guarded by mu
}

type pair struct {
	client, server net.Conn
	frozen         chan struct{} // closed when the pair is frozen
	once           sync.Once
	closed         atomic.Bool // close has run
}

// freeze stops the pair; true if it was not frozen before.
func (p *pair) freeze() bool {
	done := false
	p.once.Do(func() { close(p.frozen); done = true })
	return done
}

// close closes both ends; true if the pair was open before.
func (p *pair) close() bool {
	first := !p.closed.Swap(true)
	p.client.Close()
	p.server.Close()
	return first
}

// New returns a proxy to target ("127.0.0.1:8080"). It starts nothing.
func New(target string) *Proxy {
	return &Proxy{target: target, conns: map[*pair]struct{}{}, fired: map[Fault]int64{}}
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
			p.closeAll() // shutting down: not a fault
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
	if refuse {
		p.fired[FaultRefuse]++
	}
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
// It returns the number of open connections; Fired counts those it froze
// (a connection already frozen counts once).
func (p *Proxy) Freeze() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for pr := range p.conns {
		if pr.freeze() {
			p.fired[FaultFreeze]++
		}
	}
	return len(p.conns)
}

// CutAll closes every open connection at once, as a server restart does,
// and returns how many it closed (Fired counts them too).
func (p *Proxy) CutAll() int {
	n := p.closeAll()
	p.mu.Lock()
	p.fired[FaultCut] += int64(n)
	p.mu.Unlock()
	return n
}

// closeAll closes every open connection and returns how many were open.
func (p *Proxy) closeAll() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for pr := range p.conns {
		if pr.close() {
			n++
		}
	}
	return n
}

// Fired returns how many connections each fault was applied to since New:
// frozen by Freeze, closed by CutAll, refused while Refuse was in force. A
// Refuse during which nobody connected, or a Freeze or CutAll with no
// connection open, fired nothing. Faults that never fired are absent.
func (p *Proxy) Fired() map[Fault]int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[Fault]int64, len(p.fired))
	for f, n := range p.fired {
		if n > 0 {
			out[f] = n
		}
	}
	return out
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
