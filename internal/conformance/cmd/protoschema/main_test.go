package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// genPath is the checked-in table, relative to this directory.
var genPath = filepath.Join("..", "..", "..", "rig", "sim", "protoschema_gen.go")

// TestGeneratedTableIsCurrent fails when internal/rig/sim/protoschema_gen.go is not what
// this command writes for the pinned k8s.io/api: run go generate in internal/rig/sim.
func TestGeneratedTableIsCurrent(t *testing.T) {
	want, err := generate(roots)
	require.NoError(t, err)
	got, err := os.ReadFile(genPath)
	require.NoError(t, err)
	if bytes.Equal(got, want) {
		return
	}
	gotLines, wantLines := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := range max(len(gotLines), len(wantLines)) {
		var g, w []byte
		if i < len(gotLines) {
			g = gotLines[i]
		}
		if i < len(wantLines) {
			w = wantLines[i]
		}
		if !bytes.Equal(g, w) {
			t.Fatalf("%s is stale (run go generate in internal/rig/sim); first difference at line %d:\n got: %s\nwant: %s",
				genPath, i+1, g, w)
		}
	}
}
