package sim_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
)

// BenchmarkPutPod measures a pod update: render ~3.5 KB of JSON, commit, record.
func BenchmarkPutPod(b *testing.B) {
	srv, err := sim.New(sim.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := srv.PutPod(sim.Pod{Namespace: "demo", Name: fmt.Sprintf("p-%d", i%1000), Restarts: int32(i)}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadPods measures the bulk loader, per pod.
func BenchmarkLoadPods(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		srv, err := sim.New(sim.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := srv.LoadPods(10000, 10, 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*10000), "ns/pod")
}

// BenchmarkListPods measures serving a 10,000-pod list over loopback HTTP.
func BenchmarkListPods(b *testing.B) {
	h := simkit.Start(b, sim.Options{})
	if _, err := h.Server.LoadPods(10000, 10, 1); err != nil {
		b.Fatal(err)
	}
	var size int64
	for b.Loop() {
		resp, err := h.Client.Do(h.NewRequest(b, "GET", "/api/v1/pods?resourceVersion=0", nil))
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil {
			b.Fatal(err)
		}
		size = n
	}
	b.SetBytes(size)
}

// BenchmarkWatchFanout measures delivering each pod update to 50 watchers over
// loopback HTTP; ns/op is per update, all watchers served.
func BenchmarkWatchFanout(b *testing.B) {
	const watchers = 50
	h := simkit.Start(b, sim.Options{HistorySize: 100000})
	if _, err := h.Server.PutPod(sim.Pod{Namespace: "demo", Name: "p"}); err != nil {
		b.Fatal(err)
	}
	from := h.Server.ResourceVersion()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got atomic.Int64
	var wg sync.WaitGroup
	for range watchers {
		req := h.NewRequest(b, "GET", fmt.Sprintf("/api/v1/pods?watch=1&resourceVersion=%d", from), nil).WithContext(ctx)
		resp, err := h.Client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(make([]byte, 64<<10), 1<<20)
			for sc.Scan() {
				got.Add(1)
			}
		}()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := h.Server.PutPod(sim.Pod{Namespace: "demo", Name: "p", Restarts: int32(i)}); err != nil {
			b.Fatal(err)
		}
	}
	for got.Load() < int64(b.N*watchers) {
		if h.Server.Stats().TerminatedWatches > 0 {
			b.Fatal("a watcher fell behind the history")
		}
		benchPause()
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*watchers)/b.Elapsed().Seconds(), "events/s")
	cancel()
	wg.Wait()
}
