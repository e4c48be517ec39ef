package wire

import "hash/fnv"

// The controller scenario's conversation, per engine process (-role=controller):
//
//	sync (ID)       start the manager; wait until every pod was reconciled in
//	                its final state for round ID (the round the pods carry) -> CtlReply.Sync
//	arm  (ID)       round ID begins: a key is complete once reconciled in its final state
//	wait            block until every key is complete                         -> CtlReply.Round
//	exit            stop the manager, wait for its goroutines                 -> CtlReply{}
//
// Between arm and wait the harness writes RoundKey=ID on every pod while the
// engine's watch is held, then releases it.

// Annotation keys of the controller scenario.
const (
	// RoundKey is written by the harness on every pod of a round; its
	// value is the round's ID.
	RoundKey = "bench.kwatch.io/round"
	// ReconciledKey is what the reconciler patches on every tenth pod: the
	// round it saw.
	ReconciledKey = "bench.kwatch.io/reconciled"
	// CountKey is patched with ReconciledKey: the engine's reconcile count
	// so far (a counter, so that every patch changes the object).
	CountKey = "bench.kwatch.io/reconciles"
)

// Patched reports whether the reconciler patches the pod named name: the
// FNV-1a hash of the name is a multiple of ten.
func Patched(name string) bool {
	h := fnv.New32a()
	h.Write([]byte(name))
	return h.Sum32()%10 == 0
}

// Complete reports whether a pod with annotations ann is in its final
// state for round: it carries the round and, if the reconciler patches
// it, the reconciler's own mark of that round. A reconcile that reads a
// pod in this state is the last one the round needs for that key; every
// engine is measured by this rule, and coalescing of keys is allowed.
func Complete(name string, ann map[string]string, round string) bool {
	if ann[RoundKey] != round {
		return false
	}
	return !Patched(name) || ann[ReconciledKey] == round
}

// NeedsPatch reports whether the reconciler must patch the pod: it is one
// of every tenth, carries round, and lacks the mark of that round.
func NeedsPatch(name string, ann map[string]string) (round string, ok bool) {
	round = ann[RoundKey]
	return round, Patched(name) && ann[ReconciledKey] != round
}

// CtlReply answers one controller command. Err is set when it failed.
type CtlReply struct {
	Err   string    `json:"err,omitempty"`
	Sync  *CtlPhase `json:"sync,omitempty"`
	Round *CtlPhase `json:"round,omitempty"`
}

// CtlPhase is the startup (list and the first reconcile of every pod) or
// one round, as the engine saw it.
type CtlPhase struct {
	Keys       int   `json:"keys"`       // keys complete
	Reconciles int64 `json:"reconciles"` // reconcile calls in the phase
	Patches    int64 `json:"patches"`    // patches sent in the phase
	StartNS    int64 `json:"startNs"`    // Unix ns of sync or arm
	FirstNS    int64 `json:"firstNs"`    // Unix ns of the phase's first reconcile
	DoneNS     int64 `json:"doneNs"`     // Unix ns of the reconcile that completed the last key
	CPUNS      int64 `json:"cpuNs"`      // user+sys from start to done
	PeakRSS    int64 `json:"peakRss"`    // VmHWM at done (since the process started)
	// HeapAlloc is the live heap after two forced GCs (sync only).
	HeapAlloc int64 `json:"heapAlloc,omitempty"`
}

// CtlCommand is one request from the harness to a controller engine.
type CtlCommand struct {
	Op string `json:"op"` // "sync", "arm", "wait", "exit"
	// ID (sync, arm) is the round; every pod of it carries RoundKey=ID
	// ("" before the first round).
	ID string `json:"id,omitempty"`
	// Keys (sync, arm) is how many keys complete the phase.
	Keys int `json:"keys,omitempty"`
	// Profile, when set, is a file for a CPU profile of the round (arm),
	// or for a profile of the live heap after the sync (sync).
	Profile string `json:"profile,omitempty"`
	// TimeoutSec bounds sync and wait.
	TimeoutSec float64 `json:"timeoutSec,omitempty"`
}
