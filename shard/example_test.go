package shard_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/kwatch/kwatch/kwatchtest"
	"github.com/kwatch/kwatch/shard"
)

// A replica joins a ring on the simulated API server (kwatchtest), waits
// until the handover barrier lets it reconcile, checks a key before
// reconciling it, and leaves (releasing its Lease) when its context ends.
func Example() {
	srv, err := kwatchtest.Serve(context.Background(), kwatchtest.Options{})
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	c := srv.Client()
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
