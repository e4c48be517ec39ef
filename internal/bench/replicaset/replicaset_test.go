package replicaset_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/bench/replicaset"
)

// TestKwatchControllersMakeNoExcessWrites runs the scenario for both
// kwatch controllers with the caches lagging by 200 ms: every step
// settles with exactly the creates and deletes it needs, and never more
// live pods than replicas. (controller-runtime's figures are the
// command's to report, not a test's to assert.) With -short only the
// obvious controller runs.
func TestKwatchControllersMakeNoExcessWrites(t *testing.T) {
	for _, c := range replicaset.Controllers() {
		if c.Name == "controller-runtime" || (testing.Short() && c.Name != "kwatch-obvious") {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			r, err := replicaset.Run(context.Background(), c, 200*time.Millisecond, replicaset.Options{})
			require.NoError(t, err)
			for _, s := range r.Steps {
				require.True(t, s.Stable, "step %q did not settle: %+v", s.Name, s)
			}
			require.Zero(t, r.ExcessCreates, "%+v", r)
			require.Zero(t, r.ExcessDeletes, "%+v", r)
			require.Equal(t, 30, r.MaxLive, "most live pods: the largest scale step's 30")
		})
	}
}
