// Package soak is kwatch's chaos soak: the simulated API server under
// churn, behind a proxy that cuts, freezes and refuses connections, with
// random protocol faults (dropped and cut watches, stalls, 410s on watch
// and list, expired continue tokens, 429/500/503 with Retry-After,
// compaction, server restarts that lose every watch and the history), and
// several informers with handlers feeding a workqueue.
//
// The soak runs in cycles, dealing the faults in rounds of random order:
// churn with one fault (a request fault is followed by dropping every
// watch, so that the informers' next requests meet it) until it has fired
// (Config.FireBound at most), then clear the faults and measure how long
// every informer takes, from the moment the server is healthy again (no
// fault pending or armed, any refusal of connections over), to converge to
// the server's exact state (its store, and the state rebuilt from its
// handler calls). Faults count when they fired: the simulator's and the
// proxy's fired counters, per kind, not the injections. A stall or a dead
// connection is over for the server at once but not for the informer,
// which must notice the silence (its IdleTimeout, 2 s here): their
// convergence includes that wait.
//
// It fails when a fault scheduled in some cycle fired in none, when an
// object is lost (a store or a replay that never converges), when a
// handler call contradicts the calls before it, when the heap grows over
// the run, or when goroutines outlive shutdown. It asserts nothing about
// how fast convergence is; the summary gives p50, p99 and max overall and
// per fault.
//
// The informers keep their stores typed (Config.Store, -store typed) or
// compact (-store compact): objects kept encoded and decoded on read, each
// informer with a snapshot file. In compact mode, every Config.RestartEvery
// cycles every informer is stopped for the first quarter of the cycle's
// churn, then replaced by a new one (a new client, as a new process would
// have) on the same snapshot file, and the cycle's fault is made once the
// new ones watch: they load the file, resume into the writes they missed
// and meet the fault, and must converge as the others do. After the last
// cycle every informer is stopped once more, the server changes while they
// are down, and they are started again with no fault: each must load its
// snapshot and resume its watch without a list. It also fails, in compact
// mode, when an object does not decode or a restart does not load its
// snapshot.
//
// Before the informers start, the server is populated with the share of
// pods the churn keeps in the long run, so the stores start at their
// steady size (a compact store keeps whole objects; the heap check is
// about growth after warm-up).
//
// `make soak DURATION=10m` runs it (go run ./internal/rig/soak/cmd/soak
// -store compact for the compact mode); TestSoakShort runs a short one in
// each mode in CI.
//
// The HA soak (RunHA; `make soak MODE=ha`, -mode ha) runs controllers
// instead of bare informers: three managers under leader election, and
// three sharded replicas of one ring in Filter mode and in Label mode,
// each setup on a simulated server of its own, all at once, with the
// default Lease timings. Every replica process reaches the server through
// a chaosnet proxy of its own and a recording link (ha_link.go). Faults,
// dealt in rounds of random order, one replica at a time: the soak's own
// (faults.go, on the server or that replica's network), its Lease writes
// answered 500 for 5-25 s, a freeze longer than the lease duration (its
// reconciles, its elector's or member's goroutine and its Lease requests
// held, as SIGSTOP would; the clock goes on), and a restart as a new
// process (a new identity). The reconcilers write through the manager's
// fenced client and half the time sleep ignoring their context, then
// write again with and without it. The checks read only the independent
// record (ha_record.go): what reached the server from which process, the
// Leases' holders in the order the server applied them, and each
// reconcile's span (its start to its return or its context's cancel):
// no key reconciled by two processes at once, no write reaching the
// server from a process after another started on its key or while the
// Lease giving it the right named someone else, and, once the faults
// end, every key reconciled again. A fault counts when it did something
// (a write refused, a request or goroutine held, a process stopped, the
// server's and proxies' fired counters). TestSoakHAShort runs a short one
// in CI.
package soak
