package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/sim"
	"github.com/kwatch/kwatch/internal/sim/simtest"
	"github.com/kwatch/kwatch/internal/testutil"
	"github.com/kwatch/kwatch/watch"
)

// TestExampleControllerRuns runs the README's controller against the
// simulator until it has reconciled, then stops it.
func TestExampleControllerRuns(t *testing.T) {
	h := simtest.Start(t, sim.Options{})
	for i := 0; i < 5; i++ {
		_, err := h.Server.PutPod(sim.Pod{Namespace: "demo", Name: fmt.Sprintf("p-%d", i)})
		require.NoError(t, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var out testutil.Buffer
	require.NoError(t, run(ctx, &watch.Config{Host: h.URL}, &out))
	for i := 0; i < 5; i++ {
		require.Contains(t, out.String(), fmt.Sprintf("demo/p-%d Pending\n", i))
	}
}
