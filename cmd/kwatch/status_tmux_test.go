package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
)

// TestStatusLineInTerminal runs kwatch in a real terminal (tmux), stops
// the server under it and starts another on its address: the last line of
// the screen says reconnecting, since when, for how long and the last
// error, then that watching resumed, with the new server's rows printed
// above it (the old server's pods again, as their deletes) and never after
// the status line.
func TestStatusLineInTerminal(t *testing.T) {
	oldSrv, err := sim.New(sim.Options{})
	require.NoError(t, err)
	old := serveAt(t, oldSrv, "127.0.0.1:0")
	putPods(t, oldSrv, "keep", "old", 2, 0)
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(kc, sim.KubeconfigBytes("http://"+old.addr, nil, ""), 0o600))

	p := startPane(t, testEnv(t), "pods", "-n", "keep", "--kubeconfig", kc)
	p.until("watching", matches(`^NAME +READY +STATUS`, `^old-001 `))
	require.NoError(t, old.stop())
	p.until("reconnecting", matches(`^kwatch: reconnecting since \d\d:\d\d:\d\d \(\d+s\), last error: \S`))

	newSrv, err := sim.New(sim.Options{})
	require.NoError(t, err)
	putPods(t, newSrv, "keep", "new", 1, 0)
	serveAt(t, newSrv, old.addr)
	screen := p.until("watching again", matches(`^kwatch: watching again after \d+s \(down since \d\d:\d\d:\d\d\)$`, `^new-000 `))
	require.True(t, lacks(screen, "reconnecting since"), "the status line is gone:\n%s", screen)
}
