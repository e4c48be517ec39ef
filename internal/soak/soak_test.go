package soak

import (
	"context"
	"os"
	"testing"
	"time"
)

// TestSoakShort is the soak's CI run. KWATCH_SOAK_DURATION runs it longer.
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
}
