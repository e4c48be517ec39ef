package events_test

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/events"
	"github.com/kwatch/kwatch/internal/sim"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

// A controller records an event from a reconcile; the recorder's Run,
// started beside the workers, writes it, and a repeat raises its count.
// The server here is the simulator, served in the process.
func ExampleRecorder() {
	srv, _ := sim.New(sim.Options{})
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	c, err := kube.NewClient(&kube.Config{Host: "http://" + ln.Addr().String()})
	if err != nil {
		fmt.Println(err)
		return
	}

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

	page, err := client.For[*events.Event](c, kube.Events, client.Options{}).List(ctx, "demo", watch.ListOptions{})
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
	<-served
	// Output:
	// ReplicaSet web Normal SuccessfulCreate Created pod: web-x7k2p count 2 from replicaset-controller
	// {Created:1 Patched:1 Dropped:0 RateLimited:0 Invalid:0 Failed:0}
}
