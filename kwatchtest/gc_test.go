package kwatchtest_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/kwatchtest"
)

// owned is a configmap owned by the object of uid.
func owned(name, ownerName, uid string, block bool) string {
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"demo","name":%q,
		"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":%q,"uid":%q,"blockOwnerDeletion":%t}]}}`,
		name, ownerName, uid, block)
}

// deleteWith sends a client's DELETE with a propagation policy.
func deleteWith(t *testing.T, srv *kwatchtest.Server, name, policy string) {
	t.Helper()
	c, err := kube.NewClient(srv.Config())
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodDelete, srv.URL()+"/api/v1/namespaces/demo/configmaps/"+name,
		strings.NewReader(`{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"`+policy+`"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

func names(t *testing.T, srv *kwatchtest.Server) []string {
	objs, err := srv.List("configmaps", "demo")
	require.NoError(t, err)
	var out []string
	for _, o := range objs {
		out = append(out, o.Name)
	}
	return out
}

func eventuallyNames(t *testing.T, srv *kwatchtest.Server, want ...string) {
	t.Helper()
	require.Eventually(t, func() bool { return fmt.Sprint(names(t, srv)) == fmt.Sprint(want) },
		time.Minute, 5*time.Millisecond, "want %v", want)
}

// TestGarbageCollect: background, foreground and orphan deletion of owners.
func TestGarbageCollect(t *testing.T) {
	srv := kwatchtest.Start(t, kwatchtest.Options{GarbageCollect: true})
	for _, policy := range []string{"Background", "Foreground", "Orphan"} {
		t.Run(policy, func(t *testing.T) {
			owner := srv.MustApply(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"demo","name":"owner"}}`)[0]
			srv.MustApply(owned("dep-a", "owner", owner.UID, true), owned("dep-b", "owner", owner.UID, false))
			deleteWith(t, srv, "owner", policy)
			switch policy {
			case "Orphan":
				eventuallyNames(t, srv, "dep-a", "dep-b")
				dep, err := srv.Get("configmaps", "demo", "dep-a")
				require.NoError(t, err)
				require.NotContains(t, string(dep.JSON), "ownerReferences")
				require.NoError(t, srv.Delete("configmaps", "demo", "dep-a"))
				require.NoError(t, srv.Delete("configmaps", "demo", "dep-b"))
			default:
				eventuallyNames(t, srv)
			}
		})
	}
	// Without the option nothing collects (no goroutine runs to do it), so the
	// dependent stays, as on a bare API server.
	bare := kwatchtest.Start(t, kwatchtest.Options{})
	owner := bare.MustApply(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"demo","name":"owner"}}`)[0]
	bare.MustApply(owned("dep-a", "owner", owner.UID, true))
	require.NoError(t, bare.Delete("configmaps", "demo", "owner"))
	require.Equal(t, []string{"dep-a"}, names(t, bare))
}

// TestForegroundCascade: a Deployment deleted in the foreground waits for its
// ReplicaSet, which waits for its pods; bound pods are deleted gracefully and
// go only when deleted with grace period 0, as a kubelet does.
func TestForegroundCascade(t *testing.T) {
	srv := kwatchtest.Start(t, kwatchtest.Options{GarbageCollect: true})
	dep := srv.MustApply(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"namespace":"demo","name":"web"}}`)[0]
	rs := srv.MustApply(fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"namespace":"demo","name":"web-1",
		"ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":"web","uid":%q,"controller":true,"blockOwnerDeletion":true}]}}`, dep.UID))[0]
	for _, name := range []string{"web-1-a", "web-1-b"} {
		srv.MustApply(fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"demo","name":%q,
			"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-1","uid":%q,"controller":true,"blockOwnerDeletion":true}]},
			"spec":{"nodeName":"node-a","terminationGracePeriodSeconds":30,"containers":[{"name":"c","image":"i"}]}}`, name, rs.UID))
	}
	c, err := kube.NewClient(srv.Config())
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodDelete, srv.URL()+"/apis/apps/v1/namespaces/demo/deployments/web?propagationPolicy=Foreground", nil)
	require.NoError(t, err)
	resp, err := c.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	terminating := func(resource, name string) bool {
		o, err := srv.Get(resource, "demo", name)
		return err == nil && strings.Contains(string(o.JSON), `"deletionTimestamp"`)
	}
	require.Eventually(t, func() bool {
		return terminating("deployments.apps", "web") && terminating("replicasets.apps", "web-1") &&
			terminating("pods", "web-1-a") && terminating("pods", "web-1-b")
	}, time.Minute, 5*time.Millisecond, "everything is being deleted; nothing is gone while the pods run")
	rsObj, err := srv.Get("replicasets.apps", "demo", "web-1")
	require.NoError(t, err)
	require.Contains(t, string(rsObj.JSON), `"foregroundDeletion"`, "the ReplicaSet goes in the foreground too")

	// The kubelet's part: the pods' containers stopped, delete with grace period 0.
	for _, name := range []string{"web-1-a", "web-1-b"} {
		req, err := http.NewRequest(http.MethodDelete, srv.URL()+"/api/v1/namespaces/demo/pods/"+name+"?gracePeriodSeconds=0", nil)
		require.NoError(t, err)
		resp, err := c.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
	}
	require.Eventually(t, func() bool {
		_, errD := srv.Get("deployments.apps", "demo", "web")
		_, errR := srv.Get("replicasets.apps", "demo", "web-1")
		return kwatchtest.IsNotFound(errD) && kwatchtest.IsNotFound(errR)
	}, time.Minute, 5*time.Millisecond, "the ReplicaSet, then the Deployment, go once the pods are gone")
}
