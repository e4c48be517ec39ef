package sim_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
)

// TestLeasesServedByDefault: coordination.k8s.io/v1 leases are a built-in
// kind, as leader election needs them: created, read, and refused with a
// 409 on an update from a stale resourceVersion, MicroTimes kept as sent.
func TestLeasesServedByDefault(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	const path = "/apis/coordination.k8s.io/v1/namespaces/demo/leases"
	code, body := do(t, h, "POST", path, "", []byte(`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease",
		"metadata":{"name":"leader"},"spec":{"holderIdentity":"a","leaseDurationSeconds":15,
		"acquireTime":"2026-12-01T09:02:45.123456Z","renewTime":"2026-12-01T09:02:45.123456Z","leaseTransitions":0}}`))
	require.Equal(t, 201, code, "%s", body)
	created := decodeMap(t, body)
	rv := created["metadata"].(map[string]any)["resourceVersion"].(string)
	require.Equal(t, "2026-12-01T09:02:45.123456Z", created["spec"].(map[string]any)["renewTime"])

	code, body = do(t, h, "GET", path+"/leader", "", nil)
	require.Equal(t, 200, code, "%s", body)
	require.Equal(t, "a", decodeMap(t, body)["spec"].(map[string]any)["holderIdentity"])

	update := func(holder, rv string) (int, []byte) {
		return do(t, h, "PUT", path+"/leader", "", []byte(`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease",
			"metadata":{"name":"leader","resourceVersion":"`+rv+`"},"spec":{"holderIdentity":"`+holder+`","leaseDurationSeconds":15}}`))
	}
	code, body = update("b", rv)
	require.Equal(t, 200, code, "%s", body)
	code, body = update("c", rv)
	require.Equal(t, 409, code, "an update from the stale resourceVersion %s: %s", rv, body)
	code, body = do(t, h, "GET", "/apis/coordination.k8s.io/v1", "", nil)
	require.Equal(t, 200, code, "%s", body)
	require.Contains(t, string(body), `"name":"leases"`)
}
