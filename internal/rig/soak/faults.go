package soak

import (
	"math/rand/v2"
	"time"

	"github.com/kwatch/kwatch/internal/rig/chaosnet"
	"github.com/kwatch/kwatch/internal/rig/sim"
)

// kind names something that fires: a simulator fault type or action ("error",
// "drop-watches") or a proxy fault ("net:freeze").
type kind string

func simKind(t sim.FaultType) kind  { return kind(t) }
func netKind(f chaosnet.Fault) kind { return kind("net:" + string(f)) }
func (k kind) String() string       { return string(k) }

// fault is one kind of trouble the soak makes.
type fault struct {
	name string
	// do makes the trouble. It returns when trouble it set going on its own
	// ends (a refusal of new connections), or the zero time.
	do func(srv *sim.Server, proxy *chaosnet.Proxy, rng *rand.Rand) (until time.Time, err error)
	// fires are the kinds that must fire for the fault to have happened.
	fires []kind
}

// reconnect queues f, then ends every open watch so that the informers'
// next requests meet it: a watch fault applies only to a watch that starts
// after it is queued, and the soak's watches last 20 s or more. With
// loseHistory the informers must relist, so list faults meet lists too.
func reconnect(f sim.Fault, loseHistory bool) func(*sim.Server, *chaosnet.Proxy, *rand.Rand) (time.Time, error) {
	return func(srv *sim.Server, _ *chaosnet.Proxy, _ *rand.Rand) (time.Time, error) {
		if err := srv.InjectFault(f); err != nil {
			return time.Time{}, err
		}
		srv.DropWatches(loseHistory)
		return time.Time{}, nil
	}
}

var (
	kDropWatch   = simKind(sim.FaultDropWatch)
	kCutWatch    = simKind(sim.FaultCutWatch)
	kStall       = simKind(sim.FaultStall)
	kSplit       = simKind(sim.FaultSplitWrites)
	kError       = simKind(sim.FaultError)
	kCompact     = simKind(sim.ActionCompact)
	kExpire      = simKind(sim.ActionExpireContinue)
	kDropWatches = simKind(sim.ActionDropWatches)
	kNetFreeze   = netKind(chaosnet.FaultFreeze)
	kNetCut      = netKind(chaosnet.FaultCut)
	kNetRefuse   = netKind(chaosnet.FaultRefuse)
)

var faults = []fault{
	{"drop-watch", reconnect(sim.Fault{Type: sim.FaultDropWatch, Count: 3, AfterEvents: 2}, false), []kind{kDropWatch}},
	{"cut-mid-frame", reconnect(sim.Fault{Type: sim.FaultCutWatch, Count: 3, AfterEvents: 1}, false), []kind{kCutWatch}},
	{"stall", reconnect(sim.Fault{Type: sim.FaultStall, Match: "watch", Count: 2, AfterEvents: 1}, false), []kind{kStall}},
	{"split-writes", reconnect(sim.Fault{Type: sim.FaultSplitWrites, Count: 4}, false), []kind{kSplit}},
	// A watching informer makes no list: the lost history makes the paged
	// informers relist into the 429s.
	{"429-list", reconnect(sim.Fault{Type: sim.FaultError, Match: "list", Code: 429, Count: 3}, true), []kind{kError}},
	{"500-watch", reconnect(sim.Fault{Type: sim.FaultError, Match: "watch", Code: 500, Count: 3}, false), []kind{kError}},
	{"503-any", reconnect(sim.Fault{Type: sim.FaultError, Code: 503, Count: 4}, false), []kind{kError}},
	{"compact", func(srv *sim.Server, _ *chaosnet.Proxy, _ *rand.Rand) (time.Time, error) {
		srv.Compact()
		// Make the watches reconnect so the compaction is felt as a 410.
		srv.DropWatches(false)
		return time.Time{}, nil
	}, []kind{kCompact, kDropWatches}},
	{"expire-continue", func(srv *sim.Server, _ *chaosnet.Proxy, _ *rand.Rand) (time.Time, error) {
		srv.ExpireContinueTokens()
		srv.DropWatches(true) // force relists that page through expired tokens
		return time.Time{}, nil
	}, []kind{kExpire, kDropWatches}},
	{"410-on-list", func(srv *sim.Server, _ *chaosnet.Proxy, _ *rand.Rand) (time.Time, error) {
		srv.Compact()
		srv.DropWatches(true)
		return time.Time{}, nil
	}, []kind{kCompact, kDropWatches}},
	{"server-restart", func(srv *sim.Server, proxy *chaosnet.Proxy, rng *rand.Rand) (time.Time, error) {
		// Every connection drops, new ones are refused for a moment, and
		// the restarted server has lost its watch history.
		d := time.Duration(100+rng.IntN(400)) * time.Millisecond
		until := time.Now().Add(d)
		proxy.Refuse(d)
		proxy.CutAll()
		srv.DropWatches(true)
		return until, nil
	}, []kind{kNetRefuse, kNetCut, kDropWatches}},
	{"dead-connection", func(_ *sim.Server, proxy *chaosnet.Proxy, _ *rand.Rand) (time.Time, error) {
		proxy.Freeze()
		return time.Time{}, nil
	}, []kind{kNetFreeze}},
}

// fired reads what has fired so far on the server and the proxy.
func (r *run) fired() map[kind]int64 {
	out := map[kind]int64{}
	for t, n := range r.srv.FiredFaults() {
		out[simKind(t)] = n
	}
	for f, n := range r.proxy.Fired() {
		out[netKind(f)] = n
	}
	return out
}

// delta is what fired between two readings of fired.
func delta(before, after map[kind]int64) map[kind]int64 {
	out := map[kind]int64{}
	for k, n := range after {
		if d := n - before[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

// firedAll reports whether every kind f needs fired in d.
func (f fault) firedAll(d map[kind]int64) bool {
	for _, k := range f.fires {
		if d[k] == 0 {
			return false
		}
	}
	return true
}
