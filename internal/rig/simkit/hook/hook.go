// Package hook lets internal/rig/simkit reach what kwatchtest keeps
// unexported, without a public name for it: kwatchtest sets both functions
// in its init, and nothing else may. A library package never imports it
// (the layers check), and neither does an Example.
package hook

import (
	"context"

	"github.com/kwatch/kwatch/internal/rig/sim"
)

var (
	// Serve is kwatchtest.Serve on every simulator option, with the
	// garbage collector when gc: it returns a *kwatchtest.Server.
	Serve func(ctx context.Context, opts sim.Options, gc bool) (any, error)
	// Sim returns the simulator behind a *kwatchtest.Server.
	Sim func(server any) *sim.Server
)
