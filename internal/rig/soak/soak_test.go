package soak

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/kwatch/kwatch/informer"
)

// TestSoakShort is the soak's CI run, once per store mode, each for about
// half the time a single run had (KWATCH_SOAK_DURATION sets both). In
// StoreCompact the informers are also restarted from their snapshots, in
// every cycle, and its run is a little shorter: a restart cycle waits for
// the new informers before its fault, and the final restart comes after
// the cycles. Run fails it when a scheduled fault never fired (see
// Summary.verdict); it asserts nothing about how fast the informers
// converged, which the summary reports.
func TestSoakShort(t *testing.T) {
	durations := map[informer.StoreMode]time.Duration{informer.StoreTyped: 10 * time.Second, informer.StoreCompact: 8 * time.Second}
	if testing.Short() {
		durations = map[informer.StoreMode]time.Duration{informer.StoreTyped: 3 * time.Second, informer.StoreCompact: 3 * time.Second}
	}
	if v, err := time.ParseDuration(os.Getenv("KWATCH_SOAK_DURATION")); err == nil {
		durations = map[informer.StoreMode]time.Duration{informer.StoreTyped: v, informer.StoreCompact: v}
	}
	for _, mode := range []informer.StoreMode{informer.StoreTyped, informer.StoreCompact} {
		t.Run(mode.String(), func(t *testing.T) {
			sum, err := Run(context.Background(), Config{Duration: durations[mode], Store: mode, RestartEvery: 1, Out: os.Stdout})
			if err != nil {
				t.Fatal(err)
			}
			checkSummary(t, sum)
			if mode != informer.StoreCompact {
				return
			}
			if sum.Decodes == 0 || sum.SnapshotWrites == 0 {
				t.Errorf("a compact soak that decoded %d objects and wrote %d snapshots", sum.Decodes, sum.SnapshotWrites)
			}
			if sum.FinalRestarts != len(specs) {
				t.Errorf("final restart of %d informers, want %d", sum.FinalRestarts, len(specs))
			}
			if sum.Restarts-sum.FinalRestarts != sum.Cycles*len(specs) {
				t.Errorf("%d restarts during %d cycles, want every informer restarted in each", sum.Restarts-sum.FinalRestarts, sum.Cycles)
			}
		})
	}
}

// checkSummary checks a passing soak did what it should have.
func checkSummary(t *testing.T, sum Summary) {
	t.Helper()
	if sum.Cycles == 0 || sum.Events == 0 || len(sum.Faults) == 0 {
		t.Fatalf("the soak did nothing: %+v", sum)
	}
	if len(sum.Results) != sum.Cycles {
		t.Fatalf("%d cycle results for %d cycles", len(sum.Results), sum.Cycles)
	}
	for name, n := range sum.Faults {
		fired := 0
		for _, r := range sum.Results {
			if r.Fault == name && r.FiredAll {
				fired++
			}
		}
		if fired == 0 {
			t.Errorf("fault %s scheduled in %d cycles fired in none, but the soak passed", name, n)
		}
	}
}

// TestVerdictFailsOnUnfiredFault: a fault scheduled but never fired fails
// the soak even when everything converged.
func TestVerdictFailsOnUnfiredFault(t *testing.T) {
	tests := []struct {
		name    string
		results []CycleResult
		wantErr bool
	}{
		{"fired", []CycleResult{{Fault: "429-list", FiredAll: true}}, false},
		{"fired once of twice", []CycleResult{{Fault: "429-list"}, {Fault: "429-list", FiredAll: true}}, false},
		{"never fired", []CycleResult{{Fault: "429-list"}, {Fault: "429-list"}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Summary{Faults: map[string]int{"429-list": len(tt.results)}, Results: tt.results}
			err := s.verdict()
			if got := err != nil; got != tt.wantErr {
				t.Fatalf("verdict: got %v, want error %v", err, tt.wantErr)
			}
		})
	}
}
