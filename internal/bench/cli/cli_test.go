package cli

import (
	"slices"
	"testing"

	"github.com/kwatch/kwatch/internal/bench/harness"
)

func TestAdjustRowsInTheOrderNamed(t *testing.T) {
	cfg := harness.Full()
	if err := adjust(&cfg, "client-go,kwatch-proto-nointern,kwatch", "10000,100000", 3, true, true); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range cfg.Rows {
		names = append(names, r.Name)
	}
	if want := []string{"client-go", "kwatch-proto-nointern", "kwatch"}; !slices.Equal(names, want) {
		t.Errorf("rows = %v, want %v", names, want)
	}
	if cfg.Runs != 3 || cfg.MainRunsAt != nil || cfg.QueueItems != 0 || !slices.Equal(cfg.PodCounts, []int{10000, 100000}) {
		t.Errorf("runs %d (at %v), queue items %d, pods %v", cfg.Runs, cfg.MainRunsAt, cfg.QueueItems, cfg.PodCounts)
	}
	if err := adjust(&cfg, "kwatch-nope", "", 0, false, false); err == nil {
		t.Error("an unknown row was accepted")
	}
}

func TestHeadlinesFollowRows(t *testing.T) {
	hs := harness.HeadlinesOf(harness.DefaultRows())
	if len(hs) < 2 || hs[0].Kwatch != "kwatch-proto" || hs[0].ClientGo != "client-go-proto" || hs[1].Kwatch != "kwatch" || hs[1].ClientGo != "client-go" {
		t.Errorf("headlines = %+v, want kwatch-proto/client-go-proto then kwatch/client-go", hs)
	}
	pairs := harness.PairsOf(harness.DefaultRows())
	if !slices.Contains(pairs, harness.Pair{Kwatch: "kwatch-proto", ClientGo: "client-go-proto"}) || !slices.Contains(pairs, harness.Pair{Kwatch: "kwatch", ClientGo: "client-go"}) {
		t.Errorf("pairs = %v", pairs)
	}
}
