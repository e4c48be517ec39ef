package queue

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kwatch/kwatch/metrics"
)

// benchAddGetDone measures one producer adding b.N distinct keys while
// workers Get and Done them. One op is one key through Add, Get and Done.
func benchAddGetDone[K comparable](b *testing.B, workers int, opts Options, key func(int) K) {
	q := New[K](opts)
	keys := make([]K, b.N)
	for i := range keys {
		keys[i] = key(i)
	}
	var wg sync.WaitGroup
	var done atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	for range workers {
		wg.Go(func() {
			for {
				k, shutdown := q.Get()
				if shutdown {
					return
				}
				q.Done(k)
				done.Add(1)
			}
		})
	}
	for _, k := range keys {
		q.Add(k)
	}
	q.ShutDown() // workers drain what is ready, then exit
	wg.Wait()
	b.StopTimer()
	if got := done.Load(); got != int64(b.N) {
		b.Fatalf("processed %d keys, want %d", got, b.N)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

func BenchmarkAddGetDone(b *testing.B) {
	for _, workers := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("int/workers=%d", workers), func(b *testing.B) {
			benchAddGetDone(b, workers, Options{}, func(i int) int { return i })
		})
		b.Run(fmt.Sprintf("string/workers=%d", workers), func(b *testing.B) {
			benchAddGetDone(b, workers, Options{}, func(i int) string { return "default/pod-" + strconv.Itoa(i) })
		})
	}
	b.Run("int/workers=4/metrics", func(b *testing.B) {
		benchAddGetDone(b, 4, Options{Metrics: metrics.NewSet()}, func(i int) int { return i })
	})
}

// BenchmarkAddRateLimited measures AddRateLimited from parallel goroutines
// over 1024 keys with the default limiter: the backoff map, the token
// bucket and the delay heap under contention.
func BenchmarkAddRateLimited(b *testing.B) {
	q := NewRateLimited(RateLimitedOptions[int]{})
	defer q.ShutDown()
	var seed atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		k := int(seed.Add(1)) * 7919
		for pb.Next() {
			q.AddRateLimited(k & 1023)
			k++
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

func BenchmarkTokenBucketReserveAt(b *testing.B) {
	tb, err := NewTokenBucket(BucketOptions{Rate: 1e9, Burst: 1000})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		tb.ReserveAt(t0.Add(time.Duration(i)))
	}
}
