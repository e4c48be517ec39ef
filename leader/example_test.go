package leader_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/internal/sim"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/leader"
)

// A controller process campaigns for a Lease, does its work while it
// leads, and releases the Lease when it stops, here against the
// simulated API server served in the process.
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
	e, err := leader.New(leader.Config{Client: c, Namespace: "demo", Name: "my-controller",
		Identity: "replica-a", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	err = e.Run(ctx, func(ctx context.Context) {
		fmt.Println("leading:", e.Leader(), e.IsLeader())
		cancel() // a real controller runs until ctx ends: shutdown, or a lost lease
		<-ctx.Done()
	})
	fmt.Println("run returned:", err, e.State())

	l, err := client.For[*leader.Lease](c, kube.Leases, client.Options{}).Get(context.Background(), "demo", "my-controller", client.GetOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("holder %q, leaseDurationSeconds %d, leaseTransitions %d\n",
		*l.Spec.HolderIdentity, *l.Spec.LeaseDurationSeconds, *l.Spec.LeaseTransitions)
	// Output:
	// leading: replica-a true
	// run returned: <nil> released
	// holder "", leaseDurationSeconds 1, leaseTransitions 0
}
