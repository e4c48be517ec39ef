package testutil

import (
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// BubbleGoroutines counts the goroutines of the synctest bubble the caller
// runs in, from the header the runtime writes for each goroutine of a stack
// dump ("goroutine 7 [chan receive (durable), synctest bubble 3]:"). Unlike
// runtime.NumGoroutine it ignores goroutines outside the bubble, such as
// those of earlier tests still winding down or a timer of theirs firing.
func BubbleGoroutines(t testing.TB) int {
	t.Helper()
	own := make([]byte, 256)
	bubble := bubbleOf(string(own[:runtime.Stack(own, false)]))
	require.NotEmpty(t, bubble, "the caller must run in a synctest bubble (or the runtime's stack header has changed)")
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for line := range strings.Lines(string(buf)) {
		if strings.HasPrefix(line, "goroutine ") && bubbleOf(line) == bubble {
			count++
		}
	}
	return count
}

// bubbleOf returns "synctest bubble N" from a goroutine's header line, or "".
func bubbleOf(header string) string {
	header, _, _ = strings.Cut(header, "\n")
	_, after, ok := strings.Cut(header, "synctest bubble ")
	if !ok {
		return ""
	}
	if end := strings.IndexAny(after, ",]"); end >= 0 {
		after = after[:end]
	}
	return "synctest bubble " + after
}
