package webhook

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/kube"
)

// SelfSigned is the development mode of a Server: at Run it makes a CA and
// a serving certificate signed by it (ECDSA P-256, valid a year, kept in
// memory only) and writes the CA, through Client, into the caBundle of
// every webhook of the named configurations and into the conversion
// webhook of the named CRDs, so that the API server trusts the server
// without cert-manager. Each Run makes a new CA. Not for production: the
// key lives in the process and nothing rotates it.
type SelfSigned struct {
	// Hosts are the serving certificate's DNS names and IP addresses (the
	// host of the webhooks' clientConfig.url, or the Service's DNS name);
	// "localhost" and "127.0.0.1" when empty.
	Hosts []string
	// Client writes the caBundles; required when anything is named below.
	Client *kube.Client
	// ValidatingWebhookConfigurations, MutatingWebhookConfigurations and
	// CustomResourceDefinitions name the objects whose caBundle is set;
	// they must exist when Run starts.
	ValidatingWebhookConfigurations []string
	MutatingWebhookConfigurations   []string
	CustomResourceDefinitions       []string
}

// The resources whose caBundle SelfSigned writes.
var (
	validatingConfigs = kube.Resource{Group: "admissionregistration.k8s.io", Version: "v1",
		Resource: "validatingwebhookconfigurations", Kind: "ValidatingWebhookConfiguration"}
	mutatingConfigs = kube.Resource{Group: "admissionregistration.k8s.io", Version: "v1",
		Resource: "mutatingwebhookconfigurations", Kind: "MutatingWebhookConfiguration"}
	crds = kube.Resource{Group: "apiextensions.k8s.io", Version: "v1",
		Resource: "customresourcedefinitions", Kind: "CustomResourceDefinition"}
)

func (ss *SelfSigned) validate() error {
	named := len(ss.ValidatingWebhookConfigurations) + len(ss.MutatingWebhookConfigurations) + len(ss.CustomResourceDefinitions)
	if named > 0 && ss.Client == nil {
		return errors.New("webhook: SelfSigned names objects to write the CA into but has no Client")
	}
	return nil
}

// generate makes the CA and the serving pair; it returns the pair and the
// CA's PEM.
func (ss *SelfSigned) generate() (*tls.Certificate, []byte, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("webhook: self-signed CA key: %w", err)
	}
	now := time.Now()
	ca := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: "kwatch webhook development CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(1, 0, 0), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("webhook: self-signed CA: %w", err)
	}
	ca, _ = x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("webhook: self-signed serving key: %w", err)
	}
	leaf := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: "kwatch webhook"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(1, 0, 0),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	hosts := ss.Hosts
	if len(hosts) == 0 {
		hosts = []string{"localhost", "127.0.0.1"}
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			leaf.IPAddresses = append(leaf.IPAddresses, ip)
		} else {
			leaf.DNSNames = append(leaf.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("webhook: self-signed serving certificate: %w", err)
	}
	cert := &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	return cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}

// inject writes caPEM into the named objects' caBundles, each an update
// with its resourceVersion as the precondition, retried on conflicts.
func (ss *SelfSigned) inject(ctx context.Context, caPEM []byte, log *slog.Logger) error {
	bundle := base64.StdEncoding.EncodeToString(caPEM)
	setWebhooks := func(u *unstructured.Unstructured) error {
		hooks, _, _ := unstructured.NestedSlice(u.Object, "webhooks")
		for i, h := range hooks {
			m, ok := h.(map[string]any)
			if !ok {
				return fmt.Errorf("webhooks[%d] is not an object", i)
			}
			if err := unstructured.SetNestedField(m, bundle, "clientConfig", "caBundle"); err != nil {
				return err
			}
		}
		return unstructured.SetNestedSlice(u.Object, hooks, "webhooks")
	}
	setConversion := func(u *unstructured.Unstructured) error {
		if _, ok, _ := unstructured.NestedMap(u.Object, "spec", "conversion", "webhook"); !ok {
			return errors.New("has no spec.conversion.webhook")
		}
		return unstructured.SetNestedField(u.Object, bundle, "spec", "conversion", "webhook", "clientConfig", "caBundle")
	}
	jobs := []struct {
		res    kube.Resource
		names  []string
		change func(*unstructured.Unstructured) error
	}{
		{validatingConfigs, ss.ValidatingWebhookConfigurations, setWebhooks},
		{mutatingConfigs, ss.MutatingWebhookConfigurations, setWebhooks},
		{crds, ss.CustomResourceDefinitions, setConversion},
	}
	for _, j := range jobs {
		if len(j.names) == 0 {
			continue
		}
		r := client.For(ss.Client, kube.Typed[*unstructured.Unstructured](j.res), client.Options{FieldManager: "kwatch-webhook"})
		for _, name := range j.names {
			if _, err := r.Modify(ctx, "", name, j.change, client.UpdateOptions{}); err != nil {
				return fmt.Errorf("webhook: write the self-signed CA into %s %s: %w", j.res.Kind, name, err)
			}
			log.Info("webhook CA written", "kind", j.res.Kind, "name", name)
		}
	}
	return nil
}
