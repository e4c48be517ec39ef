package testutil

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// MemNet is an in-memory network for tests under testing/synctest: a
// client dials a listener by address and gets one end of a net.Pipe whose
// other end the listener accepts. Every blocking operation on it is a
// channel operation, so synctest's fake clock advances while a test's
// client and server wait on each other, and a test can assert a schedule
// (backoff, idle deadlines, timeouts) exactly.
//
// Connections can be frozen (bytes stop both ways, nothing is closed: a
// peer that vanished) and cut (closed under both ends). The zero value is
// ready to use; it is safe for concurrent use.
type MemNet struct {
	mu        sync.Mutex
	listeners map[string]*MemListener
	conns     map[*memConn]struct{}
	dials     int
}

// Listen returns a listener for addr ("sim:80", say). Listening twice on
// an address that is still open is an error.
func (n *MemNet) Listen(addr string) (*MemListener, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.listeners[addr]; ok {
		return nil, fmt.Errorf("memnet: %s already in use", addr)
	}
	if n.listeners == nil {
		n.listeners = map[string]*MemListener{}
	}
	l := &MemListener{net: n, addr: addr, conns: make(chan net.Conn), done: make(chan struct{})}
	n.listeners[addr] = l
	return l, nil
}

// DialContext connects to the listener at addr; with none there it fails
// at once with a "connection refused" error, as a stopped server would.
func (n *MemNet) DialContext(ctx context.Context, _, addr string) (net.Conn, error) {
	n.mu.Lock()
	l := n.listeners[addr]
	n.dials++
	n.mu.Unlock()
	if l == nil {
		return nil, &net.OpError{Op: "dial", Net: "mem", Err: errors.New("connection refused")}
	}
	client, server := net.Pipe()
	cc, sc := n.track(client), n.track(server)
	cc.peer, sc.peer = sc, cc
	select {
	case l.conns <- sc:
		return cc, nil
	case <-l.done:
	case <-ctx.Done():
	}
	cc.Close()
	sc.Close()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return nil, &net.OpError{Op: "dial", Net: "mem", Err: errors.New("connection refused")}
}

// Dials counts the connections attempted so far.
func (n *MemNet) Dials() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.dials
}

// Transport returns an HTTP/1.1 transport that dials on n.
func (n *MemNet) Transport() *http.Transport {
	return &http.Transport{DialContext: n.DialContext, MaxIdleConnsPerHost: 16, IdleConnTimeout: time.Minute}
}

// Freeze stops every open connection: reads and writes block until the
// connection is closed (or its deadline passes), as on a network that went
// silent. It returns how many connections it froze. New connections are
// not frozen.
func (n *MemNet) Freeze() int {
	count := 0
	for _, c := range n.open() {
		if c.freeze() {
			count++
		}
	}
	return count / 2 // both ends of each pipe
}

// CutAll closes every open connection, both ends.
func (n *MemNet) CutAll() int {
	conns := n.open()
	for _, c := range conns {
		c.Close()
	}
	return len(conns) / 2
}

func (n *MemNet) open() []*memConn {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]*memConn, 0, len(n.conns))
	for c := range n.conns {
		out = append(out, c)
	}
	return out
}

func (n *MemNet) track(c net.Conn) *memConn {
	mc := &memConn{Conn: c, net: n, closed: make(chan struct{})}
	n.mu.Lock()
	if n.conns == nil {
		n.conns = map[*memConn]struct{}{}
	}
	n.conns[mc] = struct{}{}
	n.mu.Unlock()
	return mc
}

func (n *MemNet) forget(c *memConn) {
	n.mu.Lock()
	delete(n.conns, c)
	n.mu.Unlock()
}

func (n *MemNet) unlisten(l *MemListener) {
	n.mu.Lock()
	if n.listeners[l.addr] == l {
		delete(n.listeners, l.addr)
	}
	n.mu.Unlock()
}

// MemListener is a MemNet listener.
type MemListener struct {
	net   *MemNet
	addr  string
	conns chan net.Conn
	once  sync.Once
	done  chan struct{}
}

// Accept waits for the next connection.
func (l *MemListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close stops accepting; open connections stay open. The address is free
// again at once, so a test can "restart" a server on it.
func (l *MemListener) Close() error {
	l.once.Do(func() {
		close(l.done)
		l.net.unlisten(l)
	})
	return nil
}

// Addr returns the listener's address.
func (l *MemListener) Addr() net.Addr { return memAddr(l.addr) }

type memAddr string

func (a memAddr) Network() string { return "mem" }
func (a memAddr) String() string  { return string(a) }

// memConn is one end of a pipe that can be frozen.
type memConn struct {
	net.Conn
	net  *MemNet
	peer *memConn

	mu         sync.Mutex
	isFrozen   bool
	closeOnce  sync.Once
	closed     chan struct{}
	readUntil  time.Time
	writeUntil time.Time
}

func (c *memConn) freeze() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.isFrozen {
		return false
	}
	c.isFrozen = true
	return true
}

// frozenUntil reports whether the connection is frozen and, if so, the
// deadline of the read (or write) that must hang.
func (c *memConn) frozenUntil(read bool) (bool, time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if read {
		return c.isFrozen, c.readUntil
	}
	return c.isFrozen, c.writeUntil
}

// hang blocks a frozen connection's read or write until it is closed or
// its deadline passes.
func (c *memConn) hang(deadline time.Time) error {
	var timeout <-chan time.Time
	if !deadline.IsZero() {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-c.closed:
		return net.ErrClosed
	case <-timeout:
		return &timeoutError{}
	}
}

func (c *memConn) Read(p []byte) (int, error) {
	if frozen, d := c.frozenUntil(true); frozen {
		return 0, c.hang(d)
	}
	return c.Conn.Read(p)
}

func (c *memConn) Write(p []byte) (int, error) {
	if frozen, d := c.frozenUntil(false); frozen {
		return 0, c.hang(d)
	}
	return c.Conn.Write(p)
}

func (c *memConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	c.readUntil, c.writeUntil = t, t
	c.mu.Unlock()
	return c.Conn.SetDeadline(t)
}

func (c *memConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	c.readUntil = t
	c.mu.Unlock()
	return c.Conn.SetReadDeadline(t)
}

func (c *memConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	c.writeUntil = t
	c.mu.Unlock()
	return c.Conn.SetWriteDeadline(t)
}

func (c *memConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.net.forget(c)
	})
	return c.Conn.Close()
}

type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }
