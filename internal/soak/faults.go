package soak

import (
	"math/rand/v2"
	"time"

	"github.com/kwatch/kwatch/internal/chaosnet"
	"github.com/kwatch/kwatch/internal/sim"
)

// fault is one kind of trouble the soak makes.
type fault struct {
	name string
	do   func(srv *sim.Server, proxy *chaosnet.Proxy, rng *rand.Rand) error
}

func inject(f sim.Fault) func(*sim.Server, *chaosnet.Proxy, *rand.Rand) error {
	return func(srv *sim.Server, _ *chaosnet.Proxy, _ *rand.Rand) error { return srv.InjectFault(f) }
}

var faults = []fault{
	{"drop-watch", inject(sim.Fault{Type: sim.FaultDropWatch, Count: 3, AfterEvents: 2})},
	{"cut-mid-frame", inject(sim.Fault{Type: sim.FaultCutWatch, Count: 3, AfterEvents: 1})},
	{"stall", inject(sim.Fault{Type: sim.FaultStall, Match: "watch", Count: 2, AfterEvents: 1})},
	{"split-writes", inject(sim.Fault{Type: sim.FaultSplitWrites, Count: 4})},
	{"429-list", inject(sim.Fault{Type: sim.FaultError, Match: "list", Code: 429, Count: 3})},
	{"500-watch", inject(sim.Fault{Type: sim.FaultError, Match: "watch", Code: 500, Count: 3})},
	{"503-any", inject(sim.Fault{Type: sim.FaultError, Code: 503, Count: 4})},
	{"compact", func(srv *sim.Server, _ *chaosnet.Proxy, _ *rand.Rand) error {
		srv.Compact()
		// Make the watches reconnect so the compaction is felt as a 410.
		srv.DropWatches(false)
		return nil
	}},
	{"expire-continue", func(srv *sim.Server, _ *chaosnet.Proxy, _ *rand.Rand) error {
		srv.ExpireContinueTokens()
		srv.DropWatches(true) // force relists that page through expired tokens
		return nil
	}},
	{"410-on-list", func(srv *sim.Server, _ *chaosnet.Proxy, _ *rand.Rand) error {
		srv.Compact()
		srv.DropWatches(true)
		return nil
	}},
	{"server-restart", func(srv *sim.Server, proxy *chaosnet.Proxy, rng *rand.Rand) error {
		// Every connection drops, new ones are refused for a moment, and
		// the restarted server has lost its watch history.
		proxy.Refuse(time.Duration(100+rng.IntN(400)) * time.Millisecond)
		proxy.CutAll()
		srv.DropWatches(true)
		return nil
	}},
	{"dead-connection", func(_ *sim.Server, proxy *chaosnet.Proxy, _ *rand.Rand) error {
		proxy.Freeze()
		return nil
	}},
}
