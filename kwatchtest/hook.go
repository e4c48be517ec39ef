package kwatchtest

import (
	"context"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit/hook"
)

// kwatch's own tests start this package's server with simulator options
// that Options does not offer, and reach the simulator behind it, through
// internal/rig/simkit: no public name gives a user's test a way to depend
// on the simulator's internals.
func init() {
	hook.Serve = func(ctx context.Context, opts sim.Options, gc bool) (any, error) { return serve(ctx, opts, gc) }
	hook.Sim = func(s any) *sim.Server { return s.(*Server).srv }
}
