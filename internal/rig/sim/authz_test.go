package sim_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
)

const adminToken = "admin-token"

func authzServer(t *testing.T) *simkit.Harness {
	t.Helper()
	return simkit.Start(t, sim.Options{BearerToken: adminToken, Users: []sim.User{
		{Name: "nobody", Token: "nobody-token"},
		{Name: "reader", Token: "reader-token", Rules: []sim.Rule{
			{Verbs: []string{"get", "list", "watch"}, Resources: []string{"pods", "deployments.apps"}},
		}},
		{Name: "team", Token: "team-token", Rules: []sim.Rule{
			{Verbs: []string{"*"}, Resources: []string{"*"}, Namespaces: []string{"team"}},
		}},
		{Name: "kubelet", Token: "kubelet-token", Rules: []sim.Rule{
			{Verbs: []string{"patch"}, Resources: []string{"pods/status"}},
		}},
	}})
}

func doAs(t *testing.T, h *simkit.Harness, token, method, path string, body string) (int, map[string]any) {
	t.Helper()
	var b []byte
	if body != "" {
		b = []byte(body)
	}
	ct := "application/json"
	if method == http.MethodPatch {
		ct = "application/merge-patch+json"
	}
	code, out := do(t, h, method, path, "", b, "Authorization", "Bearer "+token, "Content-Type", ct)
	if strings.HasPrefix(strings.TrimSpace(string(out)), "{") {
		return code, decodeMap(t, out)
	}
	return code, nil
}

func TestForbiddenMatchesRealServer(t *testing.T) {
	h := authzServer(t)
	code, body := do(t, h, "GET", "/api/v1/pods", "", nil, "Authorization", "Bearer nobody-token")
	require.Equal(t, http.StatusForbidden, code)
	require.JSONEq(t, string(capture(t, "status-403.json")), string(body))
}

func TestAuthorization(t *testing.T) {
	h := authzServer(t)
	createPod(t, h, "p")
	tests := []struct {
		token, method, path, body string
		code                      int
		msg                       string // the 403 message, when code is 403
	}{
		{"nobody-token", "GET", "/api/v1/namespaces/demo/pods", "", 403,
			`pods is forbidden: User "nobody" cannot list resource "pods" in API group "" in the namespace "demo"`},
		{"nobody-token", "GET", "/api/v1/namespaces/demo/pods?watch=1", "", 403,
			`pods is forbidden: User "nobody" cannot watch resource "pods" in API group "" in the namespace "demo"`},
		{"nobody-token", "GET", "/api/v1/watch/pods", "", 403,
			`pods is forbidden: User "nobody" cannot watch resource "pods" in API group "" at the cluster scope`},
		{"nobody-token", "GET", "/api/v1/namespaces/demo/pods/p", "", 403,
			`pods "p" is forbidden: User "nobody" cannot get resource "pods" in API group "" in the namespace "demo"`},
		{"nobody-token", "GET", "/api/v1/namespaces/demo/pods?fieldSelector=metadata.name%3Dp", "", 403,
			`pods "p" is forbidden: User "nobody" cannot list resource "pods" in API group "" in the namespace "demo"`},
		{"nobody-token", "DELETE", "/api/v1/namespaces/demo/pods", "", 403,
			`pods is forbidden: User "nobody" cannot deletecollection resource "pods" in API group "" in the namespace "demo"`},
		{"nobody-token", "GET", "/apis/apps/v1/deployments", "", 403,
			`deployments.apps is forbidden: User "nobody" cannot list resource "deployments" in API group "apps" at the cluster scope`},
		{"nobody-token", "GET", "/api/v1/namespaces/demo", "", 403,
			`namespaces "demo" is forbidden: User "nobody" cannot get resource "namespaces" in API group "" in the namespace "demo"`},
		{"nobody-token", "GET", "/api/v1/widgets", "", 403, // authorization comes before the 404
			`widgets is forbidden: User "nobody" cannot list resource "widgets" in API group "" at the cluster scope`},
		{"nobody-token", "GET", "/sim/stats", "", 403, `forbidden: User "nobody" cannot get path "/sim/stats"`},
		{"nobody-token", "GET", "/nothing", "", 403, `forbidden: User "nobody" cannot get path "/nothing"`},
		{"nobody-token", "GET", "/api/v1", "", 200, ""},
		{"nobody-token", "GET", "/apis", "", 200, ""},
		{"nobody-token", "GET", "/version", "", 200, ""},
		{"nobody-token", "GET", "/healthz", "", 200, ""},
		{"reader-token", "GET", "/api/v1/pods", "", 200, ""},
		{"reader-token", "GET", "/api/v1/namespaces/demo/pods/p", "", 200, ""},
		{"reader-token", "GET", "/apis/apps/v1/namespaces/demo/deployments", "", 200, ""},
		{"reader-token", "GET", "/api/v1/namespaces/demo/pods/p/status", "", 403,
			`pods "p" is forbidden: User "reader" cannot get resource "pods/status" in API group "" in the namespace "demo"`},
		{"reader-token", "PATCH", "/api/v1/namespaces/demo/pods/p", `{}`, 403,
			`pods "p" is forbidden: User "reader" cannot patch resource "pods" in API group "" in the namespace "demo"`},
		{"reader-token", "GET", "/api/v1/configmaps", "", 403,
			`configmaps is forbidden: User "reader" cannot list resource "configmaps" in API group "" at the cluster scope`},
		{"team-token", "POST", "/api/v1/namespaces/team/configmaps", `{"metadata":{"name":"c"}}`, 201, ""},
		{"team-token", "GET", "/api/v1/namespaces/team/configmaps", "", 200, ""},
		{"team-token", "GET", "/api/v1/configmaps", "", 403,
			`configmaps is forbidden: User "team" cannot list resource "configmaps" in API group "" at the cluster scope`},
		{"team-token", "GET", "/api/v1/namespaces/demo/configmaps", "", 403,
			`configmaps is forbidden: User "team" cannot list resource "configmaps" in API group "" in the namespace "demo"`},
		{"kubelet-token", "PATCH", "/api/v1/namespaces/demo/pods/p/status", `{"status":{"phase":"Running"}}`, 200, ""},
		{"kubelet-token", "PATCH", "/api/v1/namespaces/demo/pods/p", `{"metadata":{"labels":{"a":"b"}}}`, 403,
			`pods "p" is forbidden: User "kubelet" cannot patch resource "pods" in API group "" in the namespace "demo"`},
		{"not-a-token", "GET", "/api/v1/pods", "", 401, ""},
		{"", "GET", "/api/v1/pods", "", 401, ""},
		{adminToken, "GET", "/sim/stats", "", 200, ""},
		{adminToken, "GET", "/api/v1/widgets", "", 404, ""},
	}
	for _, tc := range tests {
		t.Run(tc.token+" "+tc.method+" "+tc.path, func(t *testing.T) {
			code, st := doAs(t, h, tc.token, tc.method, tc.path, tc.body)
			require.Equal(t, tc.code, code, "status: %v", st)
			if tc.code != http.StatusForbidden {
				return
			}
			require.Equal(t, "Forbidden", st["reason"])
			require.Equal(t, tc.msg, st["message"])
		})
	}
}

func TestUsersAloneTurnOnAuthentication(t *testing.T) {
	h := simkit.Start(t, sim.Options{Users: []sim.User{{Name: "u", Token: "u-token",
		Rules: []sim.Rule{{Verbs: []string{"list"}, Resources: []string{"pods"}}}}}})
	code, _ := doAs(t, h, "", "GET", "/api/v1/pods", "")
	require.Equal(t, 401, code, "no token")
	code, _ = doAs(t, h, "u-token", "GET", "/api/v1/pods", "")
	require.Equal(t, 200, code)
}

func TestUserOptionsAreValidated(t *testing.T) {
	tests := []struct {
		name  string
		opts  sim.Options
		wants string
	}{
		{"no name", sim.Options{Users: []sim.User{{Token: "t"}}}, "Options.Users[0].Name is required"},
		{"no token", sim.Options{Users: []sim.User{{Name: "u"}}}, "Options.Users[0].Token is required"},
		{"admin's token", sim.Options{BearerToken: "t", Users: []sim.User{{Name: "u", Token: "t"}}}, "is Options.BearerToken"},
		{"duplicate token", sim.Options{Users: []sim.User{{Name: "a", Token: "t"}, {Name: "b", Token: "t"}}},
			"Options.Users[1].Token (user \"b\") is also Users[0]'s"},
		{"unknown verb", sim.Options{Users: []sim.User{{Name: "u", Token: "t",
			Rules: []sim.Rule{{Verbs: []string{"lsit"}, Resources: []string{"pods"}}}}}}, `Rules[0].Verbs: unknown verb "lsit"`},
		{"empty resource", sim.Options{Users: []sim.User{{Name: "u", Token: "t",
			Rules: []sim.Rule{{Verbs: []string{"list"}, Resources: []string{""}}}}}}, `Rules[0].Resources: invalid resource ""`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sim.New(tc.opts)
			require.ErrorContains(t, err, tc.wants)
		})
	}
}

func TestUsersAreCopied(t *testing.T) {
	users := []sim.User{{Name: "u", Token: "u-token", Rules: []sim.Rule{{Verbs: []string{"list"}, Resources: []string{"pods"}}}}}
	h := simkit.Start(t, sim.Options{Users: users})
	users[0].Rules[0].Resources[0] = "configmaps" // the caller reuses its slices
	code, _ := doAs(t, h, "u-token", "GET", "/api/v1/pods", "")
	require.Equal(t, 200, code, "the server kept its own copy of the rules")
}
