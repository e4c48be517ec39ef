package kube

import (
	"bytes"
	"context"
	"crypto/tls"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kwatch/kwatch/internal/termtext"
)

// The ExecCredential API versions kwatch speaks.
const (
	execAPIv1      = "client.authentication.k8s.io/v1"
	execAPIv1beta1 = "client.authentication.k8s.io/v1beta1"
)

// Exec plugin bounds.
const (
	defaultExecTimeout = time.Minute      // ExecConfig.Timeout zero
	maxExecOutput      = 1 << 20          // stdout; the plugin is killed past it
	maxExecStderr      = 512              // bytes of stderr kept for an error message
	execRefreshMargin  = 10 * time.Second // refresh this long before expiry (at most half the lifetime)
	execWaitDelay      = time.Second      // for pipes held open by the plugin's own children
)

// ExecError is a failure of an exec credential plugin. It names the command
// and never quotes what the plugin printed on stdout.
type ExecError struct {
	Command string
	Err     error
}

func (e *ExecError) Error() string {
	return fmt.Sprintf("exec credential plugin %q: %v", e.Command, e.Err)
}

func (e *ExecError) Unwrap() error { return e.Err }

// execProvider runs a credential plugin and caches what it returns until
// the credential's expiry (or a 401). It is safe for concurrent use; at most
// one run is in flight and the others wait for its result.
type execProvider struct {
	cfg     ExecConfig
	info    []byte // KUBERNETES_EXEC_INFO: the ExecCredential input
	now     func() time.Time
	environ func() []string
	// onCertChange runs when the plugin hands out a different client
	// certificate, so that idle connections made with the old one close.
	// Set once before first use; may be nil.
	onCertChange func()

	// sem has capacity 1. Holding it guards cred. It is a channel so that a
	// request waiting for another's plugin run can give up with its context.
	sem chan struct{}
	// cred is the cached credential: nil before the first run and after a
	// 401 made it stale.
	cred *execCredential
}

// execCredential is a parsed plugin answer.
type execCredential struct {
	token    string
	cert     *tls.Certificate // nil when the plugin gave a token only
	obtained time.Time
	expiry   time.Time // zero: valid until the server refuses it
}

func newExecProvider(c *Config, d transportDeps) (*execProvider, error) {
	e := c.Auth.Exec
	if e.Command == "" {
		return nil, &ConfigError{Field: "Auth.Exec.Command", Err: errors.New("is empty")}
	}
	apiVersion := e.APIVersion
	switch apiVersion {
	case "":
		apiVersion = execAPIv1
	case execAPIv1, execAPIv1beta1:
	default:
		return nil, &ConfigError{Field: "Auth.Exec.APIVersion",
			Err: fmt.Errorf("%q is not supported; want %s or %s", apiVersion, execAPIv1, execAPIv1beta1)}
	}
	info, err := execInfo(c, apiVersion, d.readFile)
	if err != nil {
		return nil, err
	}
	cfg := *e
	cfg.APIVersion = apiVersion
	return &execProvider{cfg: cfg, info: info, now: d.now, environ: os.Environ,
		sem: make(chan struct{}, 1)}, nil
}

// The ExecCredential input, passed in KUBERNETES_EXEC_INFO.
type execInfoJSON struct {
	APIVersion string           `json:"apiVersion"`
	Kind       string           `json:"kind"`
	Spec       execInfoSpecJSON `json:"spec"`
}

type execInfoSpecJSON struct {
	Cluster     *execClusterJSON `json:"cluster,omitempty"`
	Interactive bool             `json:"interactive"`
}

type execClusterJSON struct {
	Server                   string `json:"server"`
	TLSServerName            string `json:"tls-server-name,omitempty"`
	InsecureSkipTLSVerify    bool   `json:"insecure-skip-tls-verify,omitempty"`
	CertificateAuthorityData []byte `json:"certificate-authority-data,omitempty"`
}

func execInfo(c *Config, apiVersion string, readFile func(string) ([]byte, error)) ([]byte, error) {
	in := execInfoJSON{APIVersion: apiVersion, Kind: "ExecCredential"}
	if c.Auth.Exec.ProvideClusterInfo {
		ca, field, err := c.TLS.caPEM(readFile)
		if err != nil {
			return nil, &ConfigError{Field: field, Err: err}
		}
		in.Spec.Cluster = &execClusterJSON{Server: c.Host, TLSServerName: c.TLS.ServerName,
			InsecureSkipTLSVerify: c.TLS.Insecure, CertificateAuthorityData: ca}
	}
	return stdjson.Marshal(in)
}

func (p *execProvider) authorization(ctx context.Context) (string, error) {
	cred, err := p.get(ctx)
	if err != nil || cred.token == "" {
		return "", err
	}
	return "Bearer " + cred.token, nil
}

func (p *execProvider) unauthorized(ctx context.Context, used string) bool {
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	defer func() { <-p.sem }()
	// Drop the credential only if it is the one refused: a concurrent
	// request may already have fetched a fresh one.
	if p.cred != nil && (p.cred.token == "" && used == "" || "Bearer "+p.cred.token == used) {
		p.cred = nil
	}
	return true
}

// clientCertificate is tls.Config.GetClientCertificate: the plugin's
// certificate, or an empty one (send none) when it gives tokens only.
func (p *execProvider) clientCertificate(ctx context.Context) (*tls.Certificate, error) {
	cred, err := p.get(ctx)
	if err != nil {
		return nil, err
	}
	if cred.cert == nil {
		return &tls.Certificate{}, nil
	}
	return cred.cert, nil
}

// get returns the cached credential, running the plugin when there is none
// or it is about to expire.
func (p *execProvider) get(ctx context.Context) (*execCredential, error) {
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, &ExecError{Command: p.cfg.Command, Err: ctx.Err()}
	}
	defer func() { <-p.sem }()
	if p.cred != nil && p.cred.freshAt(p.now()) {
		return p.cred, nil
	}
	cred, err := p.run(ctx)
	if err != nil {
		return nil, &ExecError{Command: p.cfg.Command, Err: err}
	}
	old := p.cred
	p.cred = cred
	if p.onCertChange != nil && old != nil && old.cert != nil && !sameCert(old.cert, cred.cert) {
		p.onCertChange()
	}
	return cred, nil
}

// freshAt reports whether c may still be used at now: it has no expiry, or
// now is before the expiry less a margin of execRefreshMargin, capped at
// half the credential's lifetime.
func (c *execCredential) freshAt(now time.Time) bool {
	if c.expiry.IsZero() {
		return true
	}
	margin := min(execRefreshMargin, c.expiry.Sub(c.obtained)/2)
	return now.Before(c.expiry.Add(-margin))
}

func sameCert(a, b *tls.Certificate) bool {
	if a == nil || b == nil || len(a.Certificate) == 0 || len(b.Certificate) == 0 {
		return a == b
	}
	return bytes.Equal(a.Certificate[0], b.Certificate[0])
}

// run executes the plugin once and parses its answer.
func (p *execProvider) run(ctx context.Context) (*execCredential, error) {
	if p.cfg.InteractiveMode == "Always" {
		return nil, errors.New("interactiveMode is Always, but kwatch never gives a plugin a terminal")
	}
	timeout := p.cfg.Timeout
	if timeout <= 0 {
		timeout = defaultExecTimeout
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, p.cfg.Command, p.cfg.Args...)
	cmd.Env = p.environ()
	for _, v := range p.cfg.Env {
		cmd.Env = append(cmd.Env, v.Name+"="+v.Value)
	}
	cmd.Env = append(cmd.Env, "KUBERNETES_EXEC_INFO="+string(p.info))
	stdout := &cappedBuffer{max: maxExecOutput, overflow: cancel}
	stderr := &cappedBuffer{max: maxExecStderr}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = execWaitDelay
	obtained := p.now()
	err := cmd.Run()
	switch {
	case stdout.over:
		return nil, fmt.Errorf("output exceeds the %d MiB limit", maxExecOutput>>20)
	case errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist):
		msg := "command not found"
		if p.cfg.InstallHint != "" {
			msg += "; " + strings.TrimSpace(p.cfg.InstallHint)
		}
		return nil, errors.New(msg)
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case runCtx.Err() != nil:
		return nil, fmt.Errorf("did not finish within %s", timeout)
	case err != nil:
		return nil, fmt.Errorf("failed: %w%s", err, stderrTail(stderr.buf.Bytes()))
	}
	return parseExecCredential(stdout.buf.Bytes(), p.cfg.APIVersion, obtained)
}

// stderrTail formats what the plugin said on stderr, for an error message.
// It is the plugin's own diagnostic, with control characters escaped (see
// termtext); stdout, which holds credentials, is never quoted.
func stderrTail(b []byte) string {
	s := termtext.Escape(strings.TrimSpace(string(b)))
	if s == "" {
		return ""
	}
	return " (stderr: " + s + ")"
}

// cappedBuffer keeps the first max bytes written to it and drops the rest,
// calling overflow (if set) once when the limit is passed.
type cappedBuffer struct {
	buf      bytes.Buffer
	max      int
	over     bool
	overflow func()
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(room, len(p))])
	}
	if b.buf.Len()+len(p) > b.max && !b.over {
		b.over = true
		if b.overflow != nil {
			b.overflow()
		}
	}
	return len(p), nil
}

// The ExecCredential output.
type execOutputJSON struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Status     *struct {
		Token                 string `json:"token"`
		ClientCertificateData string `json:"clientCertificateData"`
		ClientKeyData         string `json:"clientKeyData"`
		ExpirationTimestamp   string `json:"expirationTimestamp"`
	} `json:"status"`
}

// maxQuotedField bounds how much of a plugin's kind or apiVersion an error
// quotes: a plugin printing something else entirely (a token where the
// kind goes) must not have it echoed whole.
const maxQuotedField = 64

// quoteField quotes the start of v for an error.
func quoteField(v string) string {
	if len(v) <= maxQuotedField {
		return strconv.Quote(v)
	}
	return strconv.Quote(strings.ToValidUTF8(v[:maxQuotedField], "")) + "..."
}

// parseExecCredential parses a plugin's stdout. Errors say what is wrong
// and where, never what the output holds.
func parseExecCredential(out []byte, apiVersion string, obtained time.Time) (*execCredential, error) {
	var o execOutputJSON
	if err := stdjson.Unmarshal(out, &o); err != nil {
		var se *stdjson.SyntaxError
		var te *stdjson.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return nil, fmt.Errorf("output is not valid JSON (offset %d)", se.Offset)
		case errors.As(err, &te):
			return nil, fmt.Errorf("output field %s has the wrong type (%s)", te.Field, te.Value)
		}
		return nil, errors.New("output is not an ExecCredential JSON object")
	}
	if o.Kind != "ExecCredential" {
		return nil, fmt.Errorf("output has kind %s; want ExecCredential", quoteField(o.Kind))
	}
	if o.APIVersion != apiVersion {
		return nil, fmt.Errorf("output has apiVersion %s; want %s as configured", quoteField(o.APIVersion), apiVersion)
	}
	s := o.Status
	if s == nil {
		return nil, errors.New("output has no status")
	}
	cred := &execCredential{token: s.Token, obtained: obtained}
	if s.ExpirationTimestamp != "" {
		t, err := time.Parse(time.RFC3339, s.ExpirationTimestamp)
		if err != nil {
			return nil, errors.New("output status.expirationTimestamp is not an RFC 3339 time")
		}
		cred.expiry = t
	}
	if s.Token != "" && !validToken(s.Token) {
		return nil, errors.New("output status.token contains a character not allowed in an HTTP header")
	}
	switch {
	case s.ClientCertificateData != "" && s.ClientKeyData != "":
		pair, err := tls.X509KeyPair([]byte(s.ClientCertificateData), []byte(s.ClientKeyData))
		if err != nil {
			return nil, fmt.Errorf("output status.clientCertificateData and clientKeyData do not form a pair: %w", err)
		}
		cred.cert = &pair
	case s.ClientCertificateData != "":
		return nil, errors.New("output status.clientCertificateData is set without clientKeyData")
	case s.ClientKeyData != "":
		return nil, errors.New("output status.clientKeyData is set without clientCertificateData")
	case s.Token == "":
		return nil, errors.New("output status has neither token nor clientCertificateData")
	}
	return cred, nil
}

// execFromKubeconfig checks a kubeconfig user's exec section.
func execFromKubeconfig(x *kcExec) (*ExecConfig, error) {
	if x.Command == "" {
		return nil, errors.New("command is empty")
	}
	switch x.APIVersion {
	case execAPIv1, execAPIv1beta1:
	case "":
		return nil, fmt.Errorf("apiVersion is empty; want %s or %s", execAPIv1, execAPIv1beta1)
	default:
		return nil, fmt.Errorf("apiVersion %q is not supported; want %s or %s", x.APIVersion, execAPIv1, execAPIv1beta1)
	}
	e := &ExecConfig{
		Command:            x.Command,
		Args:               slices.Clone(x.Args),
		APIVersion:         x.APIVersion,
		InstallHint:        x.InstallHint,
		InteractiveMode:    x.InteractiveMode,
		ProvideClusterInfo: x.ProvideClusterInfo,
	}
	for _, v := range x.Env {
		e.Env = append(e.Env, ExecEnvVar(v))
	}
	return e, nil
}
