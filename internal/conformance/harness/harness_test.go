package harness

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPKIServesLoopback(t *testing.T) {
	p, err := NewPKI(t.TempDir())
	require.NoError(t, err)
	cert, err := tls.LoadX509KeyPair(p.ServerCert, p.ServerKey)
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(p.CAPEM))
	for _, host := range []string{"127.0.0.1", "localhost", "::1"} {
		_, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: host})
		require.NoError(t, err, "serving certificate for %s", host)
	}
	for _, f := range []string{p.SAKey, p.SAPub, p.CAFile} {
		require.FileExists(t, f)
	}
}

// TestBuildVersionsMatchModules keeps the cache key honest: the versions
// naming the cache directory are the ones the build modules pin.
func TestBuildVersionsMatchModules(t *testing.T) {
	tests := []struct{ mod, want string }{
		{"apiserver", "k8s.io/kubernetes " + KubernetesVersion},
		{"etcd", "go.etcd.io/etcd/server/v3 " + EtcdVersion},
	}
	for _, tt := range tests {
		b, err := os.ReadFile(filepath.Join("..", "build", tt.mod, "go.mod"))
		require.NoError(t, err)
		require.Contains(t, string(b), "require "+tt.want, "build/%s/go.mod", tt.mod)
	}
}

func TestLockFileExcludes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "build.lock")
	unlock, err := lockFile(t.Context(), path)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err = lockFile(ctx, path)
	require.ErrorIs(t, err, context.DeadlineExceeded, "second lock while the first is held")
	unlock()
	unlock2, err := lockFile(t.Context(), path)
	require.NoError(t, err, "lock after release")
	unlock2()
}

func TestCachedBinariesNeedBoth(t *testing.T) {
	opts := BuildOptions{CacheDir: t.TempDir()}
	_, ok := CachedBinaries(opts)
	require.False(t, ok, "empty cache")
	dir, err := opts.dir()
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "etcd"), []byte("#!/bin/sh\n"), 0o755))
	_, ok = CachedBinaries(opts)
	require.False(t, ok, "only etcd")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "kube-apiserver"), []byte("#!/bin/sh\n"), 0o755))
	bin, ok := CachedBinaries(opts)
	require.True(t, ok)
	require.Equal(t, filepath.Join(dir, "kube-apiserver"), bin.APIServer)
}

// TestProcessStopKillsGroup: Stop ends the leader and what it started.
func TestProcessStopKillsGroup(t *testing.T) {
	dir := t.TempDir()
	p, err := StartProcess(ProcSpec{Name: "sh", Path: "/bin/sh",
		Args:    []string{"-c", "trap '' TERM; sleep 300 & echo started; wait"},
		LogPath: filepath.Join(dir, "log")})
	require.NoError(t, err)
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(p.Tail(100), "started") {
		require.True(t, time.Now().Before(deadline), "child never started")
		time.Sleep(20 * time.Millisecond)
	}
	p.Stop()
	done, _ := p.Exited()
	require.True(t, done)
	groups.mu.Lock()
	defer groups.mu.Unlock()
	require.Empty(t, groups.pids, "live groups after Stop")
}

func TestProxyCutAndHeal(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var echo sync.WaitGroup
	echo.Go(func() { echoServer(ln) })
	defer echo.Wait() // after ln.Close, deferred below
	defer ln.Close()
	p, err := NewProxy(ln.Addr().String())
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1) // buffered: Serve's result is read after cancel
	go func() { served <- p.Serve(ctx) }()

	c := dialEcho(t, p.Addr)
	require.Equal(t, 1, p.Cut(), "one client connection severed")
	_, err = io.ReadAll(c) // the cut closes the connection
	require.NoError(t, err)
	c2, err := net.Dial("tcp", p.Addr)
	require.NoError(t, err)
	_, err = c2.Read(make([]byte, 1))
	require.ErrorIs(t, err, io.EOF, "a new connection while cut is closed at once")
	p.Heal()
	dialEcho(t, p.Addr).Close()

	cancel()
	require.NoError(t, <-served)
}

func dialEcho(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	_, err = c.Write([]byte("ping"))
	require.NoError(t, err)
	buf := make([]byte, 4)
	_, err = io.ReadFull(c, buf)
	require.NoError(t, err)
	require.Equal(t, "ping", string(buf))
	return c
}

// echoServer echoes each connection until ln closes, then waits for the
// connections it accepted to end.
func echoServer(ln net.Listener) {
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		wg.Go(func() { _, _ = io.Copy(c, c); c.Close() })
	}
}
