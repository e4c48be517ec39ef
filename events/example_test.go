package events_test

import (
	"context"
	"fmt"
	"time"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/events"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/kwatchtest"
	"github.com/kwatch/kwatch/watch"
)

// A controller records an event from a reconcile; the recorder's Run,
// started beside the workers, writes it, and a repeat raises its count.
// The server here is kwatchtest's simulator, served in the process.
func ExampleRecorder() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := kwatchtest.Serve(ctx, kwatchtest.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	c := srv.Client()

	rec, err := events.New(events.Options{Client: c, Component: "replicaset-controller"})
	if err != nil {
		fmt.Println(err)
		return
	}
	ran := make(chan error, 1)
	go func() { ran <- rec.Run(ctx) }()

	rs := events.ObjectReference{Kind: "ReplicaSet", APIVersion: "apps/v1", Namespace: "demo", Name: "web", UID: "6f2c"}
	rec.Eventf(rs, events.TypeNormal, "SuccessfulCreate", "Created pod: %s", "web-x7k2p")
	rec.Eventf(rs, events.TypeNormal, "SuccessfulCreate", "Created pod: %s", "web-x7k2p") // a repeat
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if s := rec.Stats(); s.Created+s.Patched == 2 {
			break
		}
	}

	page, err := client.For(c, kube.Typed[*events.Event](kube.Events), client.Options{}).List(ctx, kube.Scope{Namespace: "demo"}, watch.ListOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, ev := range page.Items {
		fmt.Println(ev.InvolvedObject.Kind, ev.InvolvedObject.Name, ev.Type, ev.Reason, ev.Message, "count", ev.Count, "from", ev.Source.Component)
	}
	fmt.Printf("%+v\n", rec.Stats())
	cancel()
	<-ran
	// Output:
	// ReplicaSet web Normal SuccessfulCreate Created pod: web-x7k2p count 2 from replicaset-controller
	// {Created:1 Patched:1 Dropped:0 RateLimited:0 Invalid:0 Failed:0}
}
