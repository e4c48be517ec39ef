package informer

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/testutil"
)

func TestContinueTokensKeepDigests(t *testing.T) {
	var c continueTokens
	big := strings.Repeat("t", 1<<20)
	assert.False(t, c.repeated(""), "the last page's empty token")
	assert.False(t, c.repeated(""), "is never a repeat")
	assert.False(t, c.repeated(big))
	assert.False(t, c.repeated(big+"x"))
	assert.True(t, c.repeated(big))
	assert.Len(t, c.seen, 2)
	assert.Equal(t, `"abc"`, clipToken("abc"))
	got := clipToken(big)
	assert.Less(t, len(got), 100, "a bounded quote")
	assert.Contains(t, got, "(1048576 bytes)")
	assert.Equal(t, `"`+strings.Repeat("a", 63)+`"... (66 bytes)`, clipToken(strings.Repeat("a", 63)+"é"+"b"), "cut before a split rune")
}

// TestRepeatedHugeContinueTokenIsQuotedBriefly: the loop error quotes a
// bounded prefix of a repeated token, not the megabyte the server sent.
func TestRepeatedHugeContinueTokenIsQuotedBriefly(t *testing.T) {
	tok := strings.Repeat("c", 1<<20)
	s := newScripted(t,
		answer(200, listJSON("10", tok, podJSON("a", "5"))),
		answer(200, listJSON("10", tok, podJSON("b", "6"))),
		answer(200, listJSON("11", "", podJSON("a", "5"))),
		stream(false),
	)
	opts := fastOptions(s.srv.URL, t, ListPaged)
	logs := &testutil.Buffer{}
	opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	inf, err := New(opts)
	require.NoError(t, err)
	start(t, inf)
	s.waitRequests(t, 4)
	require.Contains(t, logs.String(), "refusing to loop")
	assert.Contains(t, logs.String(), "(1048576 bytes)")
	assert.Less(t, len(logs.String()), 64<<10, "the log quotes the token boundedly")
}
