package chaosnet

import (
	"bufio"
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func echoServer(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				s := bufio.NewScanner(c)
				for s.Scan() {
					c.Write(append(s.Bytes(), '\n'))
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func startProxy(t *testing.T) (*Proxy, string) {
	p := New(echoServer(t))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); require.NoError(t, <-done) })
	return p, ln.Addr().String()
}

func roundTrip(c net.Conn, r *bufio.Reader, msg string, wait time.Duration) (string, error) {
	c.SetDeadline(time.Now().Add(wait))
	if _, err := c.Write([]byte(msg + "\n")); err != nil {
		return "", err
	}
	return r.ReadString('\n')
}

func TestProxyForwardsFreezesAndCuts(t *testing.T) {
	p, addr := startProxy(t)
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	r := bufio.NewReader(c)
	got, err := roundTrip(c, r, "hello", 30*time.Second)
	require.NoError(t, err)
	require.Equal(t, "hello\n", got)

	require.Empty(t, p.Fired(), "nothing fired yet")
	require.Equal(t, 1, p.Freeze())
	require.Equal(t, map[Fault]int64{FaultFreeze: 1}, p.Fired())
	_, err = roundTrip(c, r, "anyone?", 200*time.Millisecond)
	var ne net.Error
	require.ErrorAs(t, err, &ne)
	require.True(t, ne.Timeout(), "a frozen connection is silent, not closed: %v", err)

	// A new connection still works, and CutAll closes it.
	c2, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c2.Close()
	r2 := bufio.NewReader(c2)
	got, err = roundTrip(c2, r2, "again", 30*time.Second)
	require.NoError(t, err)
	require.Equal(t, "again\n", got)
	require.Equal(t, 2, p.Freeze(), "two open: the frozen connection and the new one")
	require.Equal(t, map[Fault]int64{FaultFreeze: 2}, p.Fired(), "a connection frozen twice counts once")
	require.Equal(t, 2, p.CutAll(), "both connections")
	require.Equal(t, 0, p.CutAll(), "already closed: nothing to cut")
	require.Equal(t, map[Fault]int64{FaultFreeze: 2, FaultCut: 2}, p.Fired())
	c2.SetDeadline(time.Now().Add(30 * time.Second))
	_, err = r2.ReadString('\n')
	require.Error(t, err, "cut connections are closed")
}

func TestProxyRefuses(t *testing.T) {
	p, addr := startProxy(t)
	p.Refuse(time.Minute)
	require.Empty(t, p.Fired(), "refusing, but nobody has connected")
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	_, err = bufio.NewReader(c).ReadString('\n')
	require.Error(t, err)
	require.Equal(t, map[Fault]int64{FaultRefuse: 1}, p.Fired(), "counted before the connection was closed")
}

func TestProxyShutdownIsNotACut(t *testing.T) {
	p := New(echoServer(t))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx, ln) }()
	c, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	got, err := roundTrip(c, bufio.NewReader(c), "hello", 30*time.Second)
	require.NoError(t, err)
	require.Equal(t, "hello\n", got)
	cancel()
	require.NoError(t, <-done)
	require.Zero(t, p.Open())
	require.Empty(t, p.Fired(), "closing connections on shutdown is no fault")
}
