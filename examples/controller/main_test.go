package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/kwatchtest"
)

// untilWriter collects the controller's output and calls stop once done
// holds for it. The tests stop the controller by what it printed, never
// after a length of time, so a slow machine only makes them slower.
type untilWriter struct {
	mu   sync.Mutex
	b    strings.Builder
	done func(out string) bool
	stop context.CancelFunc
}

func (w *untilWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	if w.done(w.b.String()) {
		w.stop()
	}
	return len(p), nil
}

func (w *untilWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestExampleControllerRuns runs the README's controller against the
// simulator until it has reconciled every pod, then stops it.
func TestExampleControllerRuns(t *testing.T) {
	srv := kwatchtest.Start(t, kwatchtest.Options{})
	var want []string
	for i := range 5 {
		_, err := srv.PutPod(kwatchtest.Pod{Namespace: "demo", Name: fmt.Sprintf("p-%d", i)})
		require.NoError(t, err)
		want = append(want, fmt.Sprintf("demo/p-%d Pending\n", i))
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	out := &untilWriter{stop: cancel, done: func(out string) bool {
		for _, w := range want {
			if !strings.Contains(out, w) {
				return false
			}
		}
		return true
	}}
	require.NoError(t, run(ctx, srv.Client(), out))
	for _, w := range want {
		require.Contains(t, out.String(), w)
	}
}

// TestExampleControllerSim runs the controller as -sim does, until it has
// reconciled pods of both namespaces of a small churning cluster.
func TestExampleControllerSim(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	seen := func(out, ns string) bool { return strings.Contains(out, "\n"+ns+"/") || strings.HasPrefix(out, ns+"/") }
	out := &untilWriter{stop: cancel, done: func(out string) bool { return seen(out, "ns-000") && seen(out, "ns-001") }}
	require.NoError(t, runSim(ctx, kwatchtest.ChurnOptions{Pods: 4, Namespaces: 2, Rate: 50}, out))
	for line := range strings.Lines(out.String()) {
		require.Regexp(t, `^ns-00[01]/\S+ \w+\n$`, line)
	}
}
