package harness

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// PKI is the key material one test cluster needs, written as PEM files in Dir.
// The CA signs the serving certificate of every API server of the cluster;
// the service-account key pair signs and verifies service-account tokens.
type PKI struct {
	Dir        string
	CAPEM      []byte // the CA certificate, for clients
	CAFile     string
	ServerCert string // serving certificate for 127.0.0.1 and localhost
	ServerKey  string
	SAKey      string // service-account signing key (private)
	SAPub      string // service-account verification key (public)
}

// NewPKI generates a fresh CA, a serving certificate for loopback and a
// service-account key pair, valid for a day, and writes them to dir.
func NewPKI(dir string) (*PKI, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate CA key: %w", err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kwatch-conformance-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("sign CA certificate: %w", err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	p := &PKI{Dir: dir, CAPEM: pemBlock("CERTIFICATE", caDER)}
	if err := p.writeServing(caCert, caKey, now); err != nil {
		return nil, err
	}
	if err := p.writeServiceAccount(); err != nil {
		return nil, err
	}
	p.CAFile = filepath.Join(dir, "ca.crt")
	return p, os.WriteFile(p.CAFile, p.CAPEM, 0o600)
}

func (p *PKI) writeServing(ca *x509.Certificate, caKey *ecdsa.PrivateKey, now time.Time) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generate serving key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("sign serving certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	p.ServerCert = filepath.Join(p.Dir, "server.crt")
	p.ServerKey = filepath.Join(p.Dir, "server.key")
	if err := os.WriteFile(p.ServerCert, pemBlock("CERTIFICATE", der), 0o600); err != nil {
		return err
	}
	return os.WriteFile(p.ServerKey, pemBlock("PRIVATE KEY", keyDER), 0o600)
}

// writeServiceAccount makes an RSA pair: the API server signs
// service-account tokens with RS256 by default.
func (p *PKI) writeServiceAccount() error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("generate service-account key: %w", err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	p.SAKey = filepath.Join(p.Dir, "sa.key")
	p.SAPub = filepath.Join(p.Dir, "sa.pub")
	if err := os.WriteFile(p.SAKey, pemBlock("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(key)), 0o600); err != nil {
		return err
	}
	return os.WriteFile(p.SAPub, pemBlock("PUBLIC KEY", pubDER), 0o600)
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
