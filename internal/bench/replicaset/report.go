package replicaset

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// WriteMarkdown writes results as one table: a row per controller and lag.
func WriteMarkdown(w io.Writer, results []Result) error {
	var b strings.Builder
	b.WriteString("| controller | lag | most live pods | creates (excess) | deletes (excess) | 409s | reconciles | steps stable | slowest step to stable |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		stable, slowest, slowName := 0, time.Duration(0), ""
		for _, s := range r.Steps {
			if s.Stable {
				stable++
			}
			if s.StableAfter > slowest {
				slowest, slowName = s.StableAfter, s.Name
			}
		}
		fmt.Fprintf(&b, "| %s | %v | %d | %d (%+d) | %d (%+d) | %d | %d | %d of %d | %s (%s) |\n",
			r.Controller, r.Lag, r.MaxLive, r.Creates, r.ExcessCreates, r.Deletes, r.ExcessDeletes,
			r.Conflicts, r.Reconciles, stable, len(r.Steps), slowest.Round(10*time.Millisecond), slowName)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
