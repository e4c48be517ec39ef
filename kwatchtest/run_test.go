package kwatchtest_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/kwatchtest"
)

// recordingTB is a testing.TB whose failures and cleanups the test holds.
type recordingTB struct {
	testing.TB
	ctx      context.Context
	mu       sync.Mutex
	errs     []string
	cleanups []func()
}

func (r *recordingTB) Context() context.Context { return r.ctx }

func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recordingTB) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }

// end ends the fake test as testing does: its context, then its cleanups,
// last first.
func (r *recordingTB) end(cancel context.CancelFunc) []string {
	cancel()
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.errs
}

// Run's function runs until the test ends, on the test's context, and the
// test's cleanup returns only once it has; an error it returns fails the
// test, with the error.
func TestRun(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		wantErr []string
	}{
		{"returns nil when its context ends", nil, nil},
		{"returns an error", errors.New("informer gave up"), []string{"kwatchtest: Run: informer gave up"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			tb := &recordingTB{TB: t, ctx: ctx}
			started, returned := make(chan struct{}), false
			kwatchtest.Run(tb, func(ctx context.Context) error {
				close(started)
				<-ctx.Done()
				returned = true // read after the cleanup: it waited for this
				return tt.err
			})
			<-started
			require.Equal(t, tt.wantErr, tb.end(cancel))
			require.True(t, returned, "the cleanup returned before the function did")
		})
	}
}

// Client is a working client of the server.
func TestClient(t *testing.T) {
	srv := kwatchtest.Start(t, kwatchtest.Options{})
	srv.MustApply(`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": "demo", "name": "a"}}`)
	cms := client.For(srv.Client(), kube.Typed[*configMap](kube.ConfigMaps), client.Options{})
	cm, err := cms.Get(t.Context(), "demo", "a", client.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, "a", cm.Name)
}
