package harness

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"time"
)

// freePort asks the kernel for a loopback port that is free right now.
// Another process may take it before the server binds it; callers retry a
// start that fails.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// readiness polls url until it answers 200 with a body check, the process
// exits, or timeout passes.
type readiness struct {
	url     string
	token   string   // sent as a bearer token when not empty
	ca      []byte   // PEM CA for https URLs
	proc    *Process // stop waiting if it exits
	timeout time.Duration
}

func (r readiness) wait(ctx context.Context) error {
	client := &http.Client{Timeout: 5 * time.Second}
	if r.ca != nil {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(r.ca)
		client.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	}
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var last string
	for {
		if done, err := r.proc.Exited(); done {
			return fmt.Errorf("%w: %s before it was ready (%v); log tail:\n%s", ErrExited, r.proc.Name, err, r.proc.Tail(3000))
		}
		if ok, why := r.probe(ctx, client); ok {
			return nil
		} else {
			last = why
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready at %s after %v (last answer: %s); log tail:\n%s",
				r.proc.Name, r.url, r.timeout, last, r.proc.Tail(3000))
		case <-tick.C:
		}
	}
}

func (r readiness) probe(ctx context.Context, client *http.Client) (bool, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.url, nil)
	if err != nil {
		return false, err.Error()
	}
	if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return false, err.Error()
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK, resp.Status
}
