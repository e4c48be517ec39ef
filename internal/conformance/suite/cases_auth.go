package suite

import (
	"net/http"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

func authCases() []Case {
	return []Case{
		{Name: "auth/http2-tls-token", Run: testHTTP2},
		{Name: "auth/wrong-token-is-401", Run: testUnauthorized},
		{Name: "auth/no-permission-is-403", Run: testForbidden},
	}
}

// testHTTP2: over TLS the client negotiates HTTP/2 and the bearer token is
// accepted on a list and a watch.
func testHTTP2(t T, e *Env) {
	cfg := e.Target.Config(Admin)
	if len(cfg.Host) < 8 || cfg.Host[:8] != "https://" {
		t.Skipf("target %s serves plain HTTP at %s: no TLS to check", e.Target.Name(), cfg.Host)
	}
	req, err := http.NewRequestWithContext(e.Ctx, http.MethodGet, kube.Pods.Path(e.NS)+"?limit=1", nil)
	require.NoError(t, err)
	resp, err := e.Admin.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, 2, resp.ProtoMajor, "protocol %s, want HTTP/2", resp.Proto)
	require.NotNil(t, resp.TLS, "no TLS state on the response")

	_, err = watch.List[*Pod](e.Ctx, e.Admin, kube.Pods, kube.Scope{Namespace: e.NS}, watch.ListOptions{})
	require.NoError(t, err)
	st := openWatch[*Pod](t, e, e.Admin, watch.WatchOptions{TimeoutSeconds: 1})
	require.NoError(t, st.Close())
}

// requireStatus checks err is a *kube.StatusError with code and reason,
// reachable through the error chain.
func requireStatus(t T, err error, code int32, reason, what string) {
	t.Helper()
	require.Error(t, err, what)
	se, ok := kube.AsStatus(err)
	require.True(t, ok, "%s: %v is not a status error", what, err)
	require.Equal(t, code, se.Code, "%s: code", what)
	require.Equal(t, reason, se.Reason, "%s: reason", what)
}

func testUnauthorized(t T, e *Env) {
	c := newClient(t, e.Target.Config(Stranger))
	_, err := watch.List[*Pod](e.Ctx, c, kube.Pods, kube.Scope{Namespace: e.NS}, watch.ListOptions{})
	require.True(t, kube.IsUnauthorized(err), "list: %v", err)
	requireStatus(t, err, http.StatusUnauthorized, "Unauthorized", "list")
	_, err = watch.Watch[*Pod](e.Ctx, c, kube.Pods, kube.Scope{Namespace: e.NS}, watch.WatchOptions{})
	require.True(t, kube.IsUnauthorized(err), "watch: %v", err)
	require.False(t, kube.IsForbidden(err))
}

func testForbidden(t T, e *Env) {
	c := newClient(t, e.Target.Config(Plain))
	for _, ns := range []string{e.NS, ""} {
		_, err := watch.List[*Pod](e.Ctx, c, kube.Pods, kube.Scope{Namespace: ns}, watch.ListOptions{})
		require.True(t, kube.IsForbidden(err), "list in %q: %v", ns, err)
		requireStatus(t, err, http.StatusForbidden, "Forbidden", "list")
		_, err = watch.Watch[*Pod](e.Ctx, c, kube.Pods, kube.Scope{Namespace: ns}, watch.WatchOptions{})
		require.True(t, kube.IsForbidden(err), "watch in %q: %v", ns, err)
		require.False(t, kube.IsUnauthorized(err))
	}
}
