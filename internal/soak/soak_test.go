package soak

import (
	"context"
	"os"
	"testing"
	"time"
)

// TestSoakShort is the soak's CI run. KWATCH_SOAK_DURATION runs it longer.
// Run fails it when a scheduled fault never fired (see Summary.verdict); it
// asserts nothing about how fast the informers converged, which the summary
// reports.
func TestSoakShort(t *testing.T) {
	d := 20 * time.Second
	if testing.Short() {
		d = 5 * time.Second
	}
	if v, err := time.ParseDuration(os.Getenv("KWATCH_SOAK_DURATION")); err == nil {
		d = v
	}
	sum, err := Run(context.Background(), Config{Duration: d, Out: os.Stdout})
	if err != nil {
		t.Fatal(err)
	}
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
