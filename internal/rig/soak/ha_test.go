package soak

import (
	"context"
	"os"
	"testing"
	"testing/synctest"
	"time"
)

// TestSoakHAShort is the HA soak's CI run: every setup at once, with
// the default Lease timings, for 40 s of faults (20 s with -short;
// KWATCH_SOAK_HA_DURATION sets it). RunHA fails it on an overlap, a
// post-loss write or an orphaned key; this checks that it did work.
func TestSoakHAShort(t *testing.T) {
	d := 40 * time.Second
	if testing.Short() {
		d = 20 * time.Second
	}
	if v, err := time.ParseDuration(os.Getenv("KWATCH_SOAK_HA_DURATION")); err == nil {
		d = v
	}
	sum, err := RunHA(context.Background(), HAConfig{Duration: d, Out: os.Stdout})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Setups) != len(HASetups) {
		t.Fatalf("%d setups ran, want %d", len(sum.Setups), len(HASetups))
	}
	for _, s := range sum.Setups {
		if s.Reconciles == 0 || s.Writes == 0 || s.Processes < 3 {
			t.Errorf("%s did nothing: %+v", s.Setup, s)
		}
	}
}

// TestHARecordChecks: the record's checks find what they are for.
func TestHARecordChecks(t *testing.T) {
	h := newHARecord()
	lease := func(string) string { return "demo/managers" }
	h.held("demo/managers", "a")
	endA := h.begin(context.Background(), "a", "demo/k")
	h.wrote("a", "demo/k", false)
	endB := h.begin(context.Background(), "b", "demo/k") // while a's is open
	endA()
	endB()
	h.wrote("a", "demo/k", false) // after b started it
	h.held("demo/managers", "b")
	h.wrote("b", "demo/k", false)
	h.wrote("a", "demo/other", true) // a relabel: the Lease check only, and the Lease names b
	if got := h.overlaps(); len(got) != 1 {
		t.Errorf("overlaps: %q, want one", got)
	}
	got := h.postLoss(lease)
	if len(got) != 2 {
		t.Errorf("post-loss writes: %q, want two (a's after b started the key, a's relabel while the Lease named b)", got)
	}

	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		h := newHARecord()
		end := h.begin(ctx, "a", "demo/k")
		cancel() // a's reconcile ignores it and goes on
		synctest.Wait()
		time.Sleep(time.Second)
		h.begin(context.Background(), "b", "demo/k")()
		time.Sleep(time.Second)
		end() // a's reconcile returns after b's
		if got := h.overlaps(); len(got) != 0 {
			t.Errorf("a reconcile's span ends at its cancel: overlaps %q", got)
		}
		if _, _, zombies := h.counts(); zombies != 1 {
			t.Errorf("zombies %d, want 1", zombies)
		}
	})
}
