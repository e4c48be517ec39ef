package webhook

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
)

// Serving certificates from files, reloaded when they change.
//
// A mounted Secret (cert-manager's) is updated by the kubelet with an
// atomic symlink swap: tls.crt and tls.key change together. A file written
// in place may show a new certificate beside the old key for a moment.
// The check is made on each TLS handshake, not by a goroutine or a file
// watcher: two stat calls, compared with the files last loaded (modified
// time, size and identity, so a swap to a file of the same time and size
// is seen). A change loads the pair; a pair that does not load (half
// written, mismatched) keeps the certificate last served, is logged, and
// is tried again when the files change again. Connections already open
// keep theirs: only new handshakes get the new certificate, so a rotation
// drops nothing.

// fileCerts serves the key pair in two files. Safe for concurrent use.
type fileCerts struct {
	certPath, keyPath string
	log               *slog.Logger

	mu      sync.Mutex
	cert    *tls.Certificate // the pair served; guarded by mu
	seen    [2]os.FileInfo   // the files' state at the last load attempt; guarded by mu
	loadErr error            // the last attempt's error, nil after a good load; guarded by mu
}

func newFileCerts(dir, certName, keyName string, log *slog.Logger) (*fileCerts, error) {
	f := &fileCerts{certPath: filepath.Join(dir, certName), keyPath: filepath.Join(dir, keyName), log: log}
	st, err := f.stat()
	if err != nil {
		return nil, err
	}
	if err := f.loadLocked(st); err != nil {
		return nil, err
	}
	return f, nil
}

func (f *fileCerts) stat() ([2]os.FileInfo, error) {
	var st [2]os.FileInfo
	for i, p := range []string{f.certPath, f.keyPath} {
		fi, err := os.Stat(p)
		if err != nil {
			return st, fmt.Errorf("webhook: serving certificate: %w", err)
		}
		st[i] = fi
	}
	return st, nil
}

// loadLocked reads the pair and serves it if it loads. The caller holds
// f.mu, or f is not shared yet.
func (f *fileCerts) loadLocked(st [2]os.FileInfo) error {
	f.seen = st
	cert, err := tls.LoadX509KeyPair(f.certPath, f.keyPath)
	if err != nil {
		f.loadErr = fmt.Errorf("webhook: serving certificate %s and key %s: %w", f.certPath, f.keyPath, err)
		return f.loadErr
	}
	f.cert, f.loadErr = &cert, nil
	return nil
}

// getCertificate is tls.Config.GetCertificate: the current pair, reloaded
// first if the files changed since the last attempt.
func (f *fileCerts) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	st, statErr := f.stat()
	f.mu.Lock()
	defer f.mu.Unlock()
	if statErr == nil && (changed(f.seen[0], st[0]) || changed(f.seen[1], st[1])) {
		if err := f.loadLocked(st); err != nil {
			f.log.Warn("webhook certificate not reloaded; serving the previous one", "error", err)
		} else {
			f.log.Info("webhook certificate reloaded", "cert", f.certPath)
		}
	}
	return f.cert, nil
}

func changed(old, cur os.FileInfo) bool {
	return old == nil || !os.SameFile(old, cur) || !old.ModTime().Equal(cur.ModTime()) || old.Size() != cur.Size()
}

// certificates returns the GetCertificate of the configured source: the
// files, loaded once here so that a missing or bad pair fails Run at once,
// or a self-signed pair made (and its CA registered) now.
func (s *Server) certificates(ctx context.Context) (func(*tls.ClientHelloInfo) (*tls.Certificate, error), error) {
	if s.opts.SelfSigned != nil {
		cert, caPEM, err := s.opts.SelfSigned.generate()
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		s.caPEM = caPEM
		s.mu.Unlock()
		if err := s.opts.SelfSigned.inject(ctx, caPEM, s.log); err != nil {
			return nil, err
		}
		return func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return cert, nil }, nil
	}
	f, err := newFileCerts(s.opts.CertDir, s.opts.CertName, s.opts.KeyName, s.log)
	if err != nil {
		return nil, err
	}
	return f.getCertificate, nil
}
