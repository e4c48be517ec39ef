// Package soak is kwatch's chaos soak: the simulated API server under
// churn, behind a proxy that cuts, freezes and refuses connections, with
// random protocol faults (dropped and cut watches, stalls, 410s on watch
// and list, expired continue tokens, 429/500/503 with Retry-After,
// compaction, server restarts that lose every watch and the history), and
// several informers with handlers feeding a workqueue.
//
// The soak runs in cycles: churn with one fault for a while, then quiet,
// and measures how long every informer takes to converge to the server's
// exact state (its store, and the state rebuilt from its handler calls).
// It fails when an object is lost (a store or a replay that never
// converges), when a handler call contradicts the calls before it, when
// the heap grows over the run, or when goroutines outlive shutdown.
//
// `make soak DURATION=10m` runs it; TestSoakShort runs a short one in CI.
package soak
