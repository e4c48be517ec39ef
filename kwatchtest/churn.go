package kwatchtest

import (
	"context"
	"fmt"

	"github.com/kwatch/kwatch/internal/rig/sim"
)

// ChurnOptions configures Churn. The zero value churns pods as fast as it
// can in 10 namespaces until the context ends, starting from no pods.
type ChurnOptions struct {
	// Pods is how many generated pods Churn loads before it starts changing
	// them. Zero means none.
	Pods int
	// Namespaces spreads the pods over "ns-000", "ns-001", ... Zero means 10.
	Namespaces int
	// Rate is the number of changes a second. Zero means as fast as it can.
	Rate float64
	// Events stops Churn after that many changes. Zero means until ctx ends.
	Events int
	// Seed makes the sequence of changes and names reproducible. Zero
	// means 1.
	Seed uint64
}

// Churn loads o.Pods generated pods, then creates, updates (readiness,
// restarts, a label, an annotation) and deletes pods at o.Rate, about as
// many creates as deletes, until ctx ends or o.Events changes are made: a
// cluster that keeps changing, for a controller to follow. It touches only
// the pods it made, runs in the caller's goroutine and returns nil when
// stopped by either; an error means a change failed.
func (s *Server) Churn(ctx context.Context, o ChurnOptions) error {
	c, err := sim.NewChurn(s.srv, sim.ChurnOptions{Pods: o.Pods, Namespaces: o.Namespaces, Rate: o.Rate,
		Events: o.Events, Seed: o.Seed})
	if err != nil {
		return fmt.Errorf("kwatchtest: %w", err)
	}
	return c.Run(ctx)
}
