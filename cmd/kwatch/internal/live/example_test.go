package live_test

import (
	"fmt"
	"time"

	"github.com/kwatch/kwatch/cmd/kwatch/internal/live"
)

// A model fed by events and rendered at a given time, without a terminal:
// rows sorted, the status counted, ages computed from the clock. Run shows
// the same frames on a terminal.
func Example() {
	created := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	now := created.Add(90 * time.Second)
	m := live.NewModel(live.Options{Resource: "pods", Columns: []string{"NAME", "STATUS", "AGE"}})
	for _, p := range []struct{ name, status string }{{"web-2", "Running"}, {"web-1", "Pending"}, {"db-0", "Running"}} {
		m.Upsert(live.Row{Key: p.name, Name: p.name, Status: p.status, Cells: func(now time.Time) []string {
			return []string{p.name, p.status, now.Sub(created).String()}
		}})
	}
	m.SetConn(live.Conn{State: live.Watching, Since: created, LastActivity: now})
	m.HandleKey(live.R('/'))
	m.HandleKey(live.R('w'))
	fmt.Print(m.Render(now, 60, 8))
	// Output:
	// kwatch · pods · filter "w" · 2 of 3
	// ● watching for 90s · last heard 0s ago
	// Pending 1  Running 1
	// NAME    STATUS    AGE
	// web-1   Pending   1m30s
	// web-2   Running   1m30s
	//
	// /w█   Enter keep · Esc clear
}
