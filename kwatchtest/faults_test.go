package kwatchtest_test

import (
	"context"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/kwatchtest"
)

// TestEveryFaultReportsFiring injects each request fault, sends the request
// it applies to, and waits for the fault to report that it fired.
func TestEveryFaultReportsFiring(t *testing.T) {
	tests := []struct {
		name   string
		inject func(*kwatchtest.Server) *kwatchtest.Fault
		path   string
	}{
		{"cut-watch", func(s *kwatchtest.Server) *kwatchtest.Fault {
			return s.CutWatch(kwatchtest.FaultOptions{Resource: "pods"})
		},
			"/api/v1/pods?watch=1&resourceVersion=0"},
		{"drop-watch", func(s *kwatchtest.Server) *kwatchtest.Fault {
			return s.DropWatch(kwatchtest.FaultOptions{Resource: "pods", AfterEvents: 1})
		}, "/api/v1/pods?watch=1&resourceVersion=0"},
		{"stall", func(s *kwatchtest.Server) *kwatchtest.Fault { return s.Stall(kwatchtest.FaultOptions{Match: "list"}) },
			"/api/v1/pods"},
		{"error", func(s *kwatchtest.Server) *kwatchtest.Fault {
			return s.Error(429, 2, kwatchtest.FaultOptions{Match: "list"})
		},
			"/api/v1/pods"},
		{"split-writes", func(s *kwatchtest.Server) *kwatchtest.Fault {
			return s.SplitWrites(kwatchtest.FaultOptions{Resource: "pods"})
		}, "/api/v1/pods"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := kwatchtest.Start(t, kwatchtest.Options{})
			_, err := srv.LoadPods(3, 1)
			require.NoError(t, err)
			f := tc.inject(srv)
			require.Equal(t, 0, f.Fired(), "not fired before any request")
			c, err := kube.NewClient(srv.Config())
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			reqCtx, stop := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() {
				defer close(done)
				req, _ := http.NewRequestWithContext(reqCtx, http.MethodGet, srv.URL()+tc.path, nil)
				if resp, err := c.Do(req); err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}()
			require.NoError(t, f.Wait(ctx))
			require.Equal(t, 1, f.Fired())
			stop() // a stalled request ends when its client leaves
			<-done
		})
	}
	srv := kwatchtest.Start(t, kwatchtest.Options{})
	f := srv.Error(500, 1, kwatchtest.FaultOptions{})
	srv.ClearFaults()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, f.Wait(ctx), context.DeadlineExceeded, "a cleared fault never fires")
}

// TestKubectl lists seeded objects with kubectl through the kit's kubeconfig,
// when kubectl is installed.
func TestKubectl(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl not on PATH")
	}
	// With TLS and no credentials kubectl asks for a username; a token spares it.
	srv := kwatchtest.Start(t, kwatchtest.Options{TLS: true, Token: "t0ken"})
	srv.MustApply(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"default","name":"from-the-kit"}}`)
	out, err := exec.CommandContext(t.Context(), kubectl, "--kubeconfig", srv.Kubeconfig(), "get", "configmaps", "-o", "name").CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Equal(t, "configmap/from-the-kit", strings.TrimSpace(string(out)))
}
