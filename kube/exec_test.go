package kube

import (
	"context"
	"crypto/tls"
	stdjson "encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeScript writes an executable shell script into dir.
func writeScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("exec plugin tests use /bin/sh scripts")
	}
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755))
	return path
}

// credJSON is an ExecCredential answer.
func credJSON(t *testing.T, apiVersion string, status map[string]string) string {
	t.Helper()
	b, err := stdjson.Marshal(map[string]any{"apiVersion": apiVersion, "kind": "ExecCredential", "status": status})
	require.NoError(t, err)
	return string(b)
}

// countingPlugin writes a plugin that appends a line to a count file on
// every run and prints the credential file named by its first argument
// followed by the run number: cred-1.json, cred-2.json, ...
func countingPlugin(t *testing.T, dir string) (script string, runs func() int) {
	t.Helper()
	count := filepath.Join(dir, "count")
	script = writeScript(t, dir, "plugin.sh", `echo run >> "`+count+`"
n=$(wc -l < "`+count+`" | tr -d ' ')
f="`+dir+`/cred-$n.json"
[ -f "$f" ] || f="`+dir+`/cred.json"
cat "$f"
`)
	return script, func() int {
		b, err := os.ReadFile(count)
		if errors.Is(err, os.ErrNotExist) {
			return 0
		}
		require.NoError(t, err)
		return strings.Count(string(b), "\n")
	}
}

func TestExecTokenPlugin(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(echoHandler))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	infoFile := filepath.Join(dir, "info.json")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cred.json"),
		[]byte(credJSON(t, execAPIv1, map[string]string{"token": "exec-tok"})), 0o600))
	script := writeScript(t, dir, "plugin.sh", `printf '%s' "$KUBERNETES_EXEC_INFO" > "`+infoFile+`"
[ "$1" = "--flag" ] && [ "$PLUGIN_VAR" = "val" ] || { echo "bad args or env" >&2; exit 3; }
cat "`+dir+`/cred.json"
`)
	c := &Config{Host: srv.URL, HTTP: HTTPConfig{Proxy: noProxy}, Auth: AuthConfig{Exec: &ExecConfig{
		Command: script, Args: []string{"--flag"}, Env: []ExecEnvVar{{Name: "PLUGIN_VAR", Value: "val"}},
		APIVersion: execAPIv1, ProvideClusterInfo: true}}}
	rt, err := c.RoundTripper()
	require.NoError(t, err)
	_, lines, err := get(t, rt, srv.URL)
	require.NoError(t, err)
	assert.Equal(t, "Bearer exec-tok", lines[2])

	raw, err := os.ReadFile(infoFile)
	require.NoError(t, err)
	var info struct {
		APIVersion, Kind string
		Spec             struct {
			Interactive *bool
			Cluster     *struct{ Server string }
		}
	}
	require.NoError(t, stdjson.Unmarshal(raw, &info), "KUBERNETES_EXEC_INFO: %s", raw)
	assert.Equal(t, execAPIv1, info.APIVersion)
	assert.Equal(t, "ExecCredential", info.Kind)
	require.NotNil(t, info.Spec.Interactive, "spec.interactive must always be present")
	assert.False(t, *info.Spec.Interactive)
	require.NotNil(t, info.Spec.Cluster, "ProvideClusterInfo must pass spec.cluster")
	assert.Equal(t, srv.URL, info.Spec.Cluster.Server)
}

func TestExecCachesUntilExpiry(t *testing.T) {
	dir := t.TempDir()
	clock := newFakeClock() // 2030-01-01T00:00:00Z
	expiry := clock.Now().Add(time.Hour).Format(time.RFC3339)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cred.json"),
		[]byte(credJSON(t, execAPIv1beta1, map[string]string{"token": "t", "expirationTimestamp": expiry})), 0o600))
	script, runs := countingPlugin(t, dir)
	base := &recordingTransport{}
	c := &Config{Host: "https://kube.test", HTTP: HTTPConfig{Transport: base},
		Auth: AuthConfig{Exec: &ExecConfig{Command: script, APIVersion: execAPIv1beta1}}}
	rt, err := c.roundTripper(clock.deps())
	require.NoError(t, err)
	steps := []struct {
		advance  time.Duration
		wantRuns int
	}{
		{0, 1},                // first use runs the plugin
		{30 * time.Minute, 1}, // cached
		{29 * time.Minute, 1}, // 60 s before expiry: still cached
		{55 * time.Second, 2}, // 5 s before expiry: inside the refresh margin
		{0, 2},                // the answer lives 5 s: cached for half of that
		{3 * time.Second, 3},  // past half its life: re-run
	}
	for i, st := range steps {
		clock.Advance(st.advance)
		_, _, err := get(t, rt, "https://kube.test/api")
		require.NoError(t, err, "step %d", i)
		assert.Equal(t, st.wantRuns, runs(), "step %d: plugin runs", i)
	}
}

func TestExecRerunsAfter401(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer second" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		echoHandler(w, r)
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	for i, tok := range []string{"first", "second"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "cred-"+strconv.Itoa(i+1)+".json"),
			[]byte(credJSON(t, execAPIv1, map[string]string{"token": tok})), 0o600))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cred.json"),
		[]byte(credJSON(t, execAPIv1, map[string]string{"token": "third"})), 0o600))
	script, runs := countingPlugin(t, dir)
	rt, err := (&Config{Host: srv.URL, HTTP: HTTPConfig{Proxy: noProxy}, Auth: AuthConfig{Exec: &ExecConfig{Command: script, APIVersion: execAPIv1}}}).RoundTripper()
	require.NoError(t, err)
	resp, lines, err := get(t, rt, srv.URL)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "Bearer second", lines[2])
	assert.Equal(t, 2, runs(), "one run, a 401, one re-run")

	// Only one retry: a server that refuses everything gets one re-run per
	// request, not a loop.
	_, _, err = get(t, rt, srv.URL) // cached "second": accepted
	require.NoError(t, err)
	assert.Equal(t, 2, runs())
}

func TestExecClientCertificatePlugin(t *testing.T) {
	p := newTestPKI(t)
	srv := newTLSServer(t, p, tls.RequireAndVerifyClientCert, http.HandlerFunc(echoHandler))
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cred.json"), []byte(credJSON(t, execAPIv1,
		map[string]string{"clientCertificateData": string(p.certPEM), "clientKeyData": string(p.keyPEM)})), 0o600))
	script, runs := countingPlugin(t, dir)
	c := &Config{Host: srv.URL, HTTP: HTTPConfig{Proxy: noProxy}, TLS: TLSConfig{CAData: p.caPEM},
		Auth: AuthConfig{Exec: &ExecConfig{Command: script, APIVersion: execAPIv1}}}
	rt, err := c.RoundTripper()
	require.NoError(t, err)
	_, lines, err := get(t, rt, srv.URL)
	require.NoError(t, err)
	assert.Equal(t, "test-client", lines[1], "client certificate CN seen by the server")
	assert.Equal(t, "", lines[2], "a certificate-only plugin sends no Authorization")
	assert.Equal(t, 1, runs())
}

func TestExecFailures(t *testing.T) {
	dir := t.TempDir()
	secretOut := credJSON(t, execAPIv1, map[string]string{"token": "tok-SECRET-1"})
	require.NoError(t, os.WriteFile(filepath.Join(dir, "secret.json"), []byte(secretOut), 0o600))
	tests := []struct {
		name    string
		body    string // script body; "" means a command that does not exist
		cfg     ExecConfig
		want    []string
		wantCtx bool
	}{
		{"exit status", `cat "` + dir + `/secret.json"; echo "login expired" >&2; exit 1`, ExecConfig{},
			[]string{"exit status 1", "login expired"}, false},
		{"terminal escapes on stderr", `printf 'bad \033[2J\033]0;x\007 news\n' >&2; exit 1`, ExecConfig{},
			[]string{`(stderr: bad \x1b[2J\x1b]0;x\x07 news)`}, false},
		{"not JSON", `echo "tok-SECRET-1 is not json"`, ExecConfig{}, []string{"not valid JSON (offset"}, false},
		{"wrong api version", `cat "` + dir + `/secret.json"`, ExecConfig{APIVersion: execAPIv1beta1},
			[]string{`apiVersion "client.authentication.k8s.io/v1"; want client.authentication.k8s.io/v1beta1`}, false},
		{"output too large", `head -c 2000000 /dev/zero`, ExecConfig{}, []string{"exceeds the 1 MiB limit"}, false},
		{"too slow", `exec sleep 60`, ExecConfig{Timeout: 100 * time.Millisecond}, []string{"did not finish within 100ms"}, false},
		{"interactive always", `cat "` + dir + `/secret.json"`, ExecConfig{InteractiveMode: "Always"}, []string{"interactiveMode is Always"}, false},
		{"missing command", "", ExecConfig{InstallHint: "install it with: brew install plugin"},
			[]string{"command not found", "brew install plugin"}, false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := filepath.Join(dir, "no-such-plugin")
			if tt.body != "" {
				cmd = writeScript(t, dir, "p"+strconv.Itoa(i)+".sh", tt.body)
			}
			cfg := tt.cfg
			cfg.Command = cmd
			if cfg.APIVersion == "" {
				cfg.APIVersion = execAPIv1
			}
			rt, err := (&Config{Host: "https://kube.test", HTTP: HTTPConfig{Transport: &recordingTransport{}}, Auth: AuthConfig{Exec: &cfg}}).RoundTripper()
			require.NoError(t, err)
			_, _, err = get(t, rt, "https://kube.test/api")
			require.Error(t, err)
			var ee *ExecError
			require.True(t, errors.As(err, &ee), "got %T, want an *ExecError", err)
			msg := err.Error()
			assert.Contains(t, msg, cmd, "the error names the command")
			for _, w := range tt.want {
				assert.Contains(t, msg, w)
			}
			assert.NotContains(t, msg, "tok-SECRET-1", "the plugin's stdout must not be echoed")
			assert.NotContains(t, msg, "\x1b", "no terminal escape reaches the error")
		})
	}
}

func TestExecWaitHonoursContext(t *testing.T) {
	p := &execProvider{cfg: ExecConfig{Command: "x"}, sem: make(chan struct{}, 1), now: time.Now}
	p.sem <- struct{}{} // another request holds the plugin
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := p.authorization(ctx)
	assert.ErrorIs(t, err, context.Canceled)
}

func TestExecParseCredential(t *testing.T) {
	p := newTestPKI(t)
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	v1 := func(status string) string {
		return `{"apiVersion":"` + execAPIv1 + `","kind":"ExecCredential","status":` + status + `}`
	}
	certJSON, _ := stdjson.Marshal(string(p.certPEM))
	keyJSON, _ := stdjson.Marshal(string(p.keyPEM))
	tests := []struct {
		name, out, wantErr string
		wantToken          string
		wantExpiry         time.Time
		wantCert           bool
	}{
		{name: "token", out: v1(`{"token":"abc"}`), wantToken: "abc"},
		{name: "token with expiry", out: v1(`{"token":"abc","expirationTimestamp":"2030-01-01T01:00:00Z"}`),
			wantToken: "abc", wantExpiry: now.Add(time.Hour)},
		{name: "certificate", out: v1(`{"clientCertificateData":` + string(certJSON) + `,"clientKeyData":` + string(keyJSON) + `}`), wantCert: true},
		{name: "syntax", out: `{"apiVersion":`, wantErr: "not valid JSON"},
		{name: "wrong type", out: v1(`{"token":12}`), wantErr: "status.token has the wrong type"},
		{name: "wrong kind", out: `{"apiVersion":"` + execAPIv1 + `","kind":"Pod"}`, wantErr: `kind "Pod"`},
		{name: "no status", out: `{"apiVersion":"` + execAPIv1 + `","kind":"ExecCredential"}`, wantErr: "no status"},
		{name: "empty status", out: v1(`{}`), wantErr: "neither token nor clientCertificateData"},
		{name: "cert without key", out: v1(`{"clientCertificateData":` + string(certJSON) + `}`), wantErr: "without clientKeyData"},
		{name: "key without cert", out: v1(`{"clientKeyData":"k"}`), wantErr: "without clientCertificateData"},
		{name: "bad pair", out: v1(`{"clientCertificateData":"c","clientKeyData":"k"}`), wantErr: "do not form a pair"},
		{name: "bad expiry", out: v1(`{"token":"a","expirationTimestamp":"tomorrow"}`), wantErr: "expirationTimestamp is not an RFC 3339 time"},
		{name: "token with newline", out: v1(`{"token":"a\nb"}`), wantErr: "not allowed in an HTTP header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseExecCredential([]byte(tt.out), execAPIv1, now)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantToken, got.token)
			assert.True(t, tt.wantExpiry.Equal(got.expiry), "got expiry %v, want %v", got.expiry, tt.wantExpiry)
			assert.Equal(t, tt.wantCert, got.cert != nil, "certificate present")
		})
	}
}

func TestExecCredentialFreshness(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		lifetime time.Duration // 0: no expiry
		at       time.Duration
		want     bool
	}{
		{"no expiry", 0, 1000 * time.Hour, true},
		{"early", time.Hour, time.Minute, true},
		{"inside the 10 s margin", time.Hour, time.Hour - 5*time.Second, false},
		{"short lifetime: margin is half of it", 4 * time.Second, time.Second, true},
		{"short lifetime past half", 4 * time.Second, 3 * time.Second, false},
		{"already expired when obtained", -time.Second, 0, false},
	}
	for _, tt := range tests {
		c := &execCredential{obtained: t0}
		if tt.lifetime != 0 {
			c.expiry = t0.Add(tt.lifetime)
		}
		got := c.freshAt(t0.Add(tt.at))
		assert.Equal(t, tt.want, got, "%s: got fresh=%v, want %v", tt.name, got, tt.want)
	}
}

func TestExecConcurrentRequestsShareOneRun(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cred.json"),
		[]byte(credJSON(t, execAPIv1, map[string]string{"token": "t"})), 0o600))
	script, runs := countingPlugin(t, dir)
	rt, err := (&Config{Host: "https://kube.test", HTTP: HTTPConfig{Transport: &recordingTransport{}},
		Auth: AuthConfig{Exec: &ExecConfig{Command: script, APIVersion: execAPIv1}}}).RoundTripper()
	require.NoError(t, err)
	var failed atomic.Int32
	done := make(chan struct{})
	for range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			req, _ := http.NewRequest(http.MethodGet, "https://kube.test/api", nil)
			if resp, err := rt.RoundTrip(req); err != nil {
				failed.Add(1)
			} else {
				resp.Body.Close()
			}
		}()
	}
	for range 8 {
		<-done
	}
	assert.Equal(t, int32(0), failed.Load())
	assert.Equal(t, 1, runs(), "concurrent requests must share one plugin run")
}
