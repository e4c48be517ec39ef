package webhooks

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	crwebhookserver "sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/kwatch/kwatch/metrics"
	"github.com/kwatch/kwatch/webhook"
)

// The HTTPS rows: the same handlers behind each project's own server
// (kwatch's webhook.Server.Run, controller-runtime's webhook.NewServer
// Start, each with its metrics on and its certificate from one CertDir),
// called over TLS on loopback by one HTTP/2 client as the API server calls
// them. The CPU per request is the whole process's: client, TLS and the
// server, so it includes work that is the same for both.

// certDir writes a serving certificate for 127.0.0.1, signed by a CA it
// returns, as tls.crt and tls.key.
func certDir(b *testing.B) (string, *x509.CertPool) {
	dir := b.TempDir()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "bench CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		b.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		b.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	write := func(name, typ string, der []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	write("tls.crt", "CERTIFICATE", der)
	write("tls.key", "EC PRIVATE KEY", keyDER)
	roots := x509.NewCertPool()
	roots.AddCert(caCert)
	return dir, roots
}

// serveHTTPS runs kwatch's and controller-runtime's servers until the
// benchmark ends and returns their base URLs.
func serveHTTPS(b *testing.B, dir string, roots *x509.CertPool) (kwatchURL, crURL string) {
	ctx, cancel := context.WithCancel(context.Background())
	s := kwatchServer(b, webhook.Options{Addr: "127.0.0.1:0", CertDir: dir, Metrics: metrics.NewSet()})
	kdone := make(chan error, 1)
	go func() { kdone <- s.Run(ctx) }()

	port := freePort(b)
	cr := crwebhookserver.NewServer(crwebhookserver.Options{Host: "127.0.0.1", Port: port, CertDir: dir})
	cv, cm := crHandlers(b)
	cr.Register("/validate", cv)
	cr.Register("/mutate", cm)
	crdone := make(chan error, 1)
	go func() { crdone <- cr.Start(ctx) }()
	b.Cleanup(func() {
		cancel()
		if err := errors.Join(<-kdone, <-crdone); err != nil {
			b.Error(err)
		}
	})
	select {
	case <-s.Ready():
	case err := <-kdone:
		b.Fatalf("kwatch's server: %v", err)
	}
	crAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if c, err := tls.Dial("tcp", crAddr, &tls.Config{RootCAs: roots}); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("controller-runtime's server did not listen")
		}
	}
	return "https://" + s.Addr().String(), "https://" + crAddr
}

func freePort(b *testing.B) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// serveOverHTTPS posts body to url b.N times from parallel goroutines on
// one HTTP/2 client and reports the process CPU per request.
func serveOverHTTPS(b *testing.B, c *http.Client, url string, body []byte) {
	post := func() error {
		req, _ := http.NewRequest(http.MethodPost, url+"?timeout=10s", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || resp.ProtoMajor != 2 {
			return errors.New(resp.Proto + " " + resp.Status + ": " + string(out))
		}
		return nil
	}
	if err := post(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := post(); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// BenchmarkAdmissionHTTPS: the rows of BenchmarkAdmission through each
// project's HTTPS server.
func BenchmarkAdmissionHTTPS(b *testing.B) {
	dir, roots := certDir(b)
	kurl, crurl := serveHTTPS(b, dir, roots)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, ForceAttemptHTTP2: true}
	b.Cleanup(tr.CloseIdleConnections)
	c := &http.Client{Transport: tr}
	body := review(b)
	b.Run("validate/kwatch", func(b *testing.B) { serveOverHTTPS(b, c, kurl+"/validate", body) })
	b.Run("validate/controller-runtime", func(b *testing.B) { serveOverHTTPS(b, c, crurl+"/validate", body) })
	b.Run("mutate/kwatch", func(b *testing.B) { serveOverHTTPS(b, c, kurl+"/mutate", body) })
	b.Run("mutate/controller-runtime", func(b *testing.B) { serveOverHTTPS(b, c, crurl+"/mutate", body) })
}
