package informer

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHeldLogsKeepOrderAndCountWhatTheyDrop: the records kept while
// distMu is held reach the Logger in their order at the flush; past
// maxHeldLogs they are counted, and their number logged once; a flush
// leaves nothing behind.
func TestHeldLogsKeepOrderAndCountWhatTheyDrop(t *testing.T) {
	var out bytes.Buffer
	l := slog.New(slog.NewTextHandler(&out, nil))
	var h heldLogs
	for i := range maxHeldLogs + 5 {
		h.add("refused", "i", i)
	}
	h.flush(l, "pods")
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, maxHeldLogs+1)
	for i := range maxHeldLogs {
		require.Contains(t, lines[i], fmt.Sprintf("i=%d", i))
	}
	require.Contains(t, lines[maxHeldLogs], "notLogged=5")
	require.Contains(t, lines[maxHeldLogs], "resource=pods")

	out.Reset()
	h.flush(l, "pods")
	require.Empty(t, out.String(), "a flush leaves nothing to log again")
}
