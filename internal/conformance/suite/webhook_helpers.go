package suite

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/kube"
)

// Helpers of the webhook cases (cases_webhook.go): a webhook server the
// target calls over TLS on loopback, recording the bodies it is sent, and
// webhook configurations scoped to the case's namespace so that no other
// case meets them.

// hookServer serves h over TLS on 127.0.0.1 (its certificate is for that
// address) and records every request body.
type hookServer struct {
	srv    *httptest.Server
	mu     sync.Mutex
	bodies [][]byte // guarded by mu
}

func startHookServer(t T, h http.Handler) *hookServer {
	hs := &hookServer{}
	hs.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(io.LimitReader(r.Body, 8<<20))
		hs.mu.Lock()
		hs.bodies = append(hs.bodies, b)
		hs.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(b))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.srv.Close)
	return hs
}

func (hs *hookServer) caPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: hs.srv.Certificate().Raw})
}

func (hs *hookServer) recorded() [][]byte {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return append([][]byte(nil), hs.bodies...)
}

// hookSpec is one webhook of a configuration, on configmaps of the case's
// namespace; extra fields override the defaults.
func hookSpec(e *Env, name, url string, ca []byte, extra map[string]any) map[string]any {
	h := map[string]any{"name": name, "admissionReviewVersions": []any{"v1"}, "sideEffects": "None",
		"failurePolicy": "Fail", "timeoutSeconds": 5,
		"clientConfig":      map[string]any{"url": url, "caBundle": ca},
		"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": e.NS}},
		"rules": []any{map[string]any{"operations": []any{"CREATE", "UPDATE"}, "apiGroups": []any{""},
			"apiVersions": []any{"v1"}, "resources": []any{"configmaps"}}}}
	for k, v := range extra {
		h[k] = v
	}
	return h
}

// createHookConfig writes a webhook configuration (kind Validating or
// Mutating) of hooks, deleted when the case ends.
func createHookConfig(t T, e *Env, kind string, hooks ...map[string]any) {
	t.Helper()
	res := strings.ToLower(kind) + "webhookconfigurations"
	name := strings.ToLower(kind) + "-" + e.NS
	list := make([]any, len(hooks))
	for i, h := range hooks {
		list[i] = h
	}
	path := "/apis/admissionregistration.k8s.io/v1/" + res
	mustCall(t, e, http.MethodPost, path, nil, ctJSON, jsonBody(t, map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind + "WebhookConfiguration",
		"metadata": map[string]any{"name": name}, "webhooks": list}))
	t.Cleanup(func() { cleanupDelete(t, e, path+"/"+name) })
}

// cleanupDelete deletes path after the case, whose context has ended.
func cleanupDelete(t T, e *Env, path string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	after := *e
	after.Ctx = ctx
	call(t, &after, http.MethodDelete, path, nil, "", nil)
}

// closedURL is an https URL on a loopback port nothing listens on.
func closedURL(t T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return "https://" + addr + "/down"
}

// kubectlBin is the kubectl the project builds (make kubectl), or "" when
// it is not built.
func kubectlBin() string {
	if p, err := exec.LookPath("kubectl"); err == nil && os.Getenv("KWATCH_KUBECTL_FROM_PATH") != "" {
		return p
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "kwatch-tools", "kubectl-*", "kubectl"))
	if len(matches) == 0 {
		return ""
	}
	return matches[len(matches)-1]
}

// kubectl runs the project's kubectl against the target as the admin and
// returns its combined output and error; the case skips that part when
// kubectl is not built.
func kubectl(t T, e *Env, args ...string) (string, error, bool) {
	t.Helper()
	bin := kubectlBin()
	if bin == "" {
		t.Logf("kubectl not built (make kubectl): its part of the case is left out")
		return "", nil, false
	}
	cfg := e.Target.Config(Admin)
	kc := writeKubeconfig(t, cfg)
	cmd := exec.CommandContext(e.Ctx, bin, append([]string{"--kubeconfig", kc}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err, true
}

func writeKubeconfig(t T, cfg *kube.Config) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "kwatch-webhook-kubeconfig-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	kc := map[string]any{"apiVersion": "v1", "kind": "Config", "current-context": "c",
		"clusters": []any{map[string]any{"name": "c", "cluster": map[string]any{"server": cfg.Host,
			"certificate-authority-data": cfg.TLS.CAData}}},
		"users":    []any{map[string]any{"name": "u", "user": map[string]any{"token": cfg.Auth.BearerToken}}},
		"contexts": []any{map[string]any{"name": "c", "context": map[string]any{"cluster": "c", "user": "u"}}}}
	b, err := json.Marshal(kc)
	require.NoError(t, err)
	p := filepath.Join(dir, "kubeconfig")
	require.NoError(t, os.WriteFile(p, b, 0o600))
	return p
}

// capture writes body to KWATCH_CONFORMANCE_CAPTURE/name on the real
// target, indented, when that directory is named (how the captures in
// internal/testdata/real-apiserver were made).
func capture(t T, e *Env, name string, body []byte) {
	dir := os.Getenv("KWATCH_CONFORMANCE_CAPTURE")
	if dir == "" || e.Target.Name() != "real" {
		return
	}
	var buf bytes.Buffer
	if json.Indent(&buf, body, "", "  ") != nil {
		buf.Reset()
		buf.Write(body)
	}
	buf.WriteByte('\n')
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644))
	t.Logf("captured %s", name)
}

// untilStatus repeats a dry-run create of body until it is answered code:
// webhook configurations take effect on the real server a moment after
// they are written.
func untilStatus(t T, e *Env, path string, body []byte, code int) {
	t.Helper()
	eventually(t, e, time.Minute, fmt.Sprintf("the webhook answers %d", code), func() bool {
		return call(t, e, http.MethodPost, path, map[string][]string{"dryRun": {"All"}}, ctJSON, body).code == code
	})
}

// timeMinute bounds the waits for a configuration to take effect.
const timeMinute = time.Minute
