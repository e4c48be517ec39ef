package printers

import (
	"time"

	"k8s.io/apimachinery/pkg/util/duration"
)

// Age is kubectl's AGE: the time since t in its short human form ("5s",
// "3m2s", "4h", "2d"); "<unknown>" for a zero time. The server computes the
// AGE cells of its Tables itself; this is for rows it did not print
// (ServerRow.FallbackCells).
func Age(t, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t))
}
