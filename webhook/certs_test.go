package webhook

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// testPKI is a CA and a serving pair it signed for 127.0.0.1, in PEM.
type testPKI struct {
	ca               *x509.Certificate
	caPEM, cert, key []byte
}

func newTestPKI(t testing.TB, name string) testPKI {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name + " CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: name},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	return testPKI{ca: ca, caPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		key:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})}
}

// secretVolume writes files as the kubelet updates a mounted Secret: into a
// new directory, then one rename of the ..data symlink, to which tls.crt
// and tls.key link.
type secretVolume struct {
	dir string
	gen int
}

func (v *secretVolume) write(t testing.TB, files map[string][]byte) {
	t.Helper()
	v.gen++
	ts := fmt.Sprintf("..gen%d", v.gen)
	require.NoError(t, os.Mkdir(filepath.Join(v.dir, ts), 0o700))
	for name, b := range files {
		require.NoError(t, os.WriteFile(filepath.Join(v.dir, ts, name), b, 0o600))
	}
	require.NoError(t, os.Symlink(ts, filepath.Join(v.dir, "..data_tmp")))
	require.NoError(t, os.Rename(filepath.Join(v.dir, "..data_tmp"), filepath.Join(v.dir, "..data")))
	for name := range files {
		link := filepath.Join(v.dir, name)
		if _, err := os.Lstat(link); os.IsNotExist(err) {
			require.NoError(t, os.Symlink(filepath.Join("..data", name), link))
		}
	}
	if v.gen > 1 {
		require.NoError(t, os.RemoveAll(filepath.Join(v.dir, fmt.Sprintf("..gen%d", v.gen-1))))
	}
}

// runServer runs s until the test ends and returns its base URL.
func runServer(t *testing.T, s *Server) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	select {
	case <-s.Ready():
	case err := <-done:
		t.Fatalf("Run: %v", err)
	}
	return "https://" + s.Addr().String()
}

// servedIssuer makes a new connection and returns the common name of the
// issuer of the certificate served.
func servedIssuer(t testing.TB, addr string, roots *x509.CertPool) string {
	t.Helper()
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12})
	require.NoError(t, err)
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].Issuer.CommonName
}

// TestCertificateRotation rotates the mounted files while requests are in
// flight, on kept-alive connections and on new ones: none fails, and new
// connections get the new certificate.
func TestCertificateRotation(t *testing.T) {
	dir := t.TempDir()
	vol := &secretVolume{dir: dir}
	first, second := newTestPKI(t, "first"), newTestPKI(t, "second")
	vol.write(t, map[string][]byte{"tls.crt": first.cert, "tls.key": first.key})
	s := newTestServer(t, Options{CertDir: dir, Addr: "127.0.0.1:0"})
	require.NoError(t, s.Admission("/validate", Validating(validateWidget)))
	url := runServer(t, s) + "/validate"
	roots := x509.NewCertPool()
	roots.AddCert(first.ca)
	roots.AddCert(second.ca)
	addr := s.Addr().String()
	require.Equal(t, "first CA", servedIssuer(t, addr, roots))

	body := admissionBody(t, Create, widget{Spec: widgetSpec{Size: 1}}, nil)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var sent, failed atomic.Int64
	for i := range 4 {
		// Half keep their connection, half dial anew for every request.
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, DisableKeepAlives: i%2 == 0}
		t.Cleanup(tr.CloseIdleConnections)
		c := &http.Client{Transport: tr}
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := postOnce(c, url, body); err != nil {
					failed.Add(1)
					t.Errorf("request failed during rotation: %v", err)
					return
				}
				sent.Add(1)
			}
		})
	}
	for sent.Load() < 20 {
		time.Sleep(time.Millisecond) // let requests be in flight; no result depends on this
	}
	vol.write(t, map[string][]byte{"tls.crt": second.cert, "tls.key": second.key})
	require.Equal(t, "second CA", servedIssuer(t, addr, roots), "a new handshake gets the new certificate")
	at := sent.Load()
	for sent.Load() < at+20 {
		time.Sleep(time.Millisecond)
	}
	close(stop)
	wg.Wait()
	require.Zero(t, failed.Load())
}

func postOnce(c *http.Client, url string, body []byte) error {
	resp, err := c.Post(url, "application/json", bytesReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

// TestHalfWrittenPairKeepsTheOld: a certificate that does not match its
// key (written one file at a time) keeps the pair served before; once both
// files are new the new pair is served.
func TestHalfWrittenPairKeepsTheOld(t *testing.T) {
	dir := t.TempDir()
	first, second := newTestPKI(t, "first"), newTestPKI(t, "second")
	crt, key := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	at := time.Now().Add(-time.Hour)
	write := func(path string, b []byte) {
		require.NoError(t, os.WriteFile(path, b, 0o600))
		at = at.Add(time.Second) // a distinct time, whatever the file system's clock granularity
		require.NoError(t, os.Chtimes(path, at, at))
	}
	write(crt, first.cert)
	write(key, first.key)
	f, err := newFileCerts(dir, "tls.crt", "tls.key", quietLogger())
	require.NoError(t, err)
	issuer := func() string {
		c, err := f.getCertificate(nil)
		require.NoError(t, err)
		x, err := x509.ParseCertificate(c.Certificate[0])
		require.NoError(t, err)
		return x.Issuer.CommonName
	}
	require.Equal(t, "first CA", issuer())
	write(crt, second.cert)
	require.Equal(t, "first CA", issuer(), "a mismatched pair is not served")
	require.ErrorContains(t, f.loadErr, "private key does not match")
	write(key, second.key)
	require.Equal(t, "second CA", issuer())
	require.NoError(t, f.loadErr)
}

func TestMissingCertificateFailsRun(t *testing.T) {
	s := newTestServer(t, Options{CertDir: t.TempDir(), Addr: "127.0.0.1:0"})
	err := s.Run(context.Background())
	require.ErrorContains(t, err, "serving certificate")
	require.ErrorContains(t, err, "tls.crt")
}

// TestSelfSignedServes: the self-signed mode serves a certificate its CA
// verifies for 127.0.0.1, and Serving follows Run.
func TestSelfSignedServes(t *testing.T) {
	s := newTestServer(t, Options{Addr: "127.0.0.1:0"})
	require.NoError(t, s.Admission("/validate", Validating(validateWidget)))
	require.False(t, s.Serving())
	url := runServer(t, s)
	require.True(t, s.Serving())
	roots := x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM(s.CACertPEM()))
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, ForceAttemptHTTP2: true}}
	require.NoError(t, postOnce(c, url+"/validate", admissionBody(t, Create, widget{Spec: widgetSpec{Size: 1}}, nil)))
}
