package kwatchtest

import (
	"context"
	"testing"

	"github.com/kwatch/kwatch/kube"
)

// Client returns a new kwatch client of the server (kube.NewClient on
// Config), with the client's defaults, such as its rate limit: give one to
// the code under test, and another to the test's own reads and writes so
// that they never wait behind its requests. It fails the test (outside
// one, panics) if the client cannot be made.
func (s *Server) Client() *kube.Client {
	c, err := kube.NewClient(s.Config())
	if err != nil {
		s.fatalf("kwatchtest: client: %v", err)
		return nil
	}
	return c
}

// Run runs run in a goroutine for the rest of the test: the Run method of
// a long-lived part of the code under test (a controller.Manager, an
// informer, an events.Recorder), on the test's context (t.Context). When
// the test ends that context ends, and t.Cleanup waits for run to return,
// so nothing it started outlives the test, nor the server, which Start
// stops after it (cleanups run last first). An error run returns fails
// the test when it is returned; kwatch's parts return nil when their
// context ends.
//
//	srv := kwatchtest.Start(t, kwatchtest.Options{})
//	mgr, err := controller.NewManager(srv.Client(), controller.ManagerOptions{})
//	require.NoError(t, err)
//	// controller.New(mgr, ...)
//	kwatchtest.Run(t, mgr.Run)
func Run(t testing.TB, run func(ctx context.Context) error) {
	t.Helper()
	ctx := t.Context()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := run(ctx); err != nil {
			t.Errorf("kwatchtest: Run: %v", err)
		}
	}()
	t.Cleanup(func() { <-done })
}
