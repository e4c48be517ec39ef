package shard_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"

	"github.com/kwatch/kwatch/internal/sim"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/shard"
)

// A replica joins a ring on the simulated API server, waits until the
// handover barrier lets it reconcile, checks a key before reconciling
// it, and leaves (releasing its Lease) when its context ends.
func Example() {
	srv, err := sim.New(sim.Options{})
	if err != nil {
		panic(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	serveCtx, stopServer := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(serveCtx, ln) }()
	defer func() { stopServer(); <-served }()

	c, err := kube.NewClient(&kube.Config{Host: "http://" + ln.Addr().String()})
	if err != nil {
		panic(err)
	}
	m, err := shard.New(shard.Config{Client: c, Namespace: "demo", Ring: "my-controller",
		Identity: "replica-a", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	err = m.Run(ctx, func(ctx context.Context) {
		for range m.Changed() { // a controller enqueues its keys on each change
			if m.Status().Settled != "" {
				break
			}
		}
		rctx, done, ok := m.Begin(ctx, "demo/settings")
		fmt.Println("members:", m.Status().Members, "owns demo/settings:", ok)
		_ = rctx // reconcile with rctx: cancelled if the member fences
		done()
		cancel()
		<-ctx.Done()
	})
	fmt.Println("run returned:", err)
	// Output:
	// members: [replica-a] owns demo/settings: true
	// run returned: <nil>
}
