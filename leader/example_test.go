package leader_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/kwatchtest"
	"github.com/kwatch/kwatch/leader"
)

// A controller process campaigns for a Lease, does its work while it
// leads, and releases the Lease when it stops, here against the
// simulated API server (kwatchtest) served in the process.
func Example() {
	srv, err := kwatchtest.Serve(context.Background(), kwatchtest.Options{})
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	c := srv.Client()
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

	l, err := client.For(c, kube.Typed[*leader.Lease](kube.Leases), client.Options{}).Get(context.Background(), "demo", "my-controller", client.GetOptions{})
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
