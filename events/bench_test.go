package events

import (
	"strconv"
	"testing"
	"time"

	"github.com/kwatch/kwatch/kube"
)

// BenchmarkEvent measures what a reconcile pays per Event: the object's
// token bucket and the queue, drained by a reader standing in for Run.
func BenchmarkEvent(b *testing.B) {
	c, err := kube.NewClient(&kube.Config{Host: "http://127.0.0.1:1"}) // never contacted
	if err != nil {
		b.Fatal(err)
	}
	r, err := New(Options{Client: c, Burst: 1 << 30, MaxObjects: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range r.queue {
		}
	}()
	objs := make([]ObjectReference, 1000)
	for i := range objs {
		objs[i] = ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "demo", Name: "web-" + strconv.Itoa(i)}
	}
	now := time.Now()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		r.EventAt(objs[i%len(objs)], TypeNormal, "Synced", "synced", now)
	}
	b.StopTimer()
	close(r.queue)
	<-done
	// Past the queue's capacity an event is dropped: that is as cheap.
	b.ReportMetric(float64(r.Stats().Dropped)/float64(b.N), "dropped/op")
}
