package decode

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/kwatch/kwatch/internal/bench/harness"
	"github.com/kwatch/kwatch/internal/rig/sim"
)

// harnessPods renders n of the harness's pods (3-4 KB of JSON each) and
// returns their protobuf messages.
func harnessPods(t testing.TB, n int) [][]byte {
	t.Helper()
	srv, err := sim.New(sim.Options{HistorySize: 1})
	require.NoError(t, err)
	for _, d := range harness.MakePods(n) {
		_, err := srv.PutPod(d)
		require.NoError(t, err)
	}
	_, objs, err := srv.Snapshot("pods")
	require.NoError(t, err)
	var out [][]byte
	for k, o := range objs {
		p := new(corev1.Pod)
		require.NoError(t, json.Unmarshal(o.JSON, p), fmt.Sprint(k))
		b, err := p.Marshal()
		require.NoError(t, err)
		out = append(out, b)
	}
	return out
}
