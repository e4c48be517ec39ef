package sim_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
)

// protoDeleteOptions encodes opts as client-go's typed clients send it in
// protobuf: the magic, then a runtime.Unknown under apiVersion.
func protoDeleteOptions(t *testing.T, apiVersion string, opts *metav1.DeleteOptions) []byte {
	t.Helper()
	raw, err := opts.Marshal()
	require.NoError(t, err)
	u := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: apiVersion, Kind: "DeleteOptions"}, Raw: raw}
	b, err := u.Marshal()
	require.NoError(t, err)
	return append([]byte("k8s\x00"), b...)
}

// TestDeleteOptionsProtobuf: a protobuf DeleteOptions body is read as its JSON
// twin: a grace period, a propagation policy, a precondition.
func TestDeleteOptionsProtobuf(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	const ct = "application/vnd.kubernetes.protobuf"
	_, err := h.Server.Create("pods", []byte(`{"metadata":{"namespace":"p","name":"bound"},"spec":{"nodeName":"n1","containers":[{"name":"c","image":"i"}]}}`))
	require.NoError(t, err)
	ten := int64(10)
	code, got := do(t, h, "DELETE", "/api/v1/namespaces/p/pods/bound", "",
		protoDeleteOptions(t, "v1", &metav1.DeleteOptions{GracePeriodSeconds: &ten}), "Content-Type", ct)
	require.Equal(t, 200, code, "%s", got)
	require.EqualValues(t, 10, decodeMap(t, got)["metadata"].(map[string]any)["deletionGracePeriodSeconds"])

	cm, err := h.Server.Create("deployments.apps", []byte(`{"metadata":{"namespace":"p","name":"d"}}`))
	require.NoError(t, err)
	bad, uid := types.UID("not-the-uid"), types.UID(cm.UID)
	code, got = do(t, h, "DELETE", "/apis/apps/v1/namespaces/p/deployments/d", "",
		protoDeleteOptions(t, "apps/v1", &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &bad}}), "Content-Type", ct)
	require.Equal(t, 409, code, "%s", got)
	fg := metav1.DeletePropagationForeground
	code, got = do(t, h, "DELETE", "/apis/apps/v1/namespaces/p/deployments/d", "",
		protoDeleteOptions(t, "apps/v1", &metav1.DeleteOptions{PropagationPolicy: &fg, Preconditions: &metav1.Preconditions{UID: &uid}}), "Content-Type", ct)
	require.Equal(t, 200, code, "%s", got)
	require.Equal(t, []any{"foregroundDeletion"}, decodeMap(t, got)["metadata"].(map[string]any)["finalizers"])

	code, got = do(t, h, "DELETE", "/apis/apps/v1/namespaces/p/deployments/d", "", []byte("k8s\x00\x0a\xff"), "Content-Type", ct)
	require.Equal(t, 400, code, "%s", got)
}
