package engine

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/util/workqueue"

	"github.com/kwatch/kwatch/internal/bench/wire"
	"github.com/kwatch/kwatch/queue"
)

// workQueue is the part of both engines' queues the benchmark uses.
type workQueue interface {
	Add(string)
	Get() (string, bool)
	Done(string)
	ShutDown()
}

// RunQueue measures Add+Get+Done throughput: one producer adds items
// distinct keys (namespace/name strings, made beforehand) while workers Get
// and Done them. One item is one key through Add, Get and Done.
func RunQueue(engine string, workers, items int) (wire.QueueResult, error) {
	var q workQueue
	switch engine {
	case "kwatch":
		q = queue.New[string](queue.Options{})
	case "client-go":
		q = workqueue.NewTyped[string]()
	default:
		return wire.QueueResult{}, fmt.Errorf("engine: unknown queue engine %q", engine)
	}
	keys := make([]string, items)
	for i := range keys {
		keys[i] = "ns-" + strconv.Itoa(i%100) + "/pod-" + strconv.Itoa(i)
	}
	var wg sync.WaitGroup
	var done atomic.Int64
	start, cpu0 := time.Now(), cpuTime()
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
	q.ShutDown() // workers drain what is queued, then return
	wg.Wait()
	res := wire.QueueResult{Items: int(done.Load()), Workers: workers,
		WallNS: int64(time.Since(start)), CPUNS: int64(cpuTime() - cpu0)}
	if res.Items != items {
		return res, fmt.Errorf("engine: %s queue processed %d of %d items", engine, res.Items, items)
	}
	return res, nil
}
