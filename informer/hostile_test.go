package informer

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/sim"
	"github.com/kwatch/kwatch/internal/sim/simtest"
	"github.com/kwatch/kwatch/internal/testutil"
	"github.com/kwatch/kwatch/kube"
)

// TestHostileWatchStreams feeds the informer streams a broken or hostile
// server could send. Each must end that stream with an error, keep the
// store's last good state, and resume from the last good RV.
func TestHostileWatchStreams(t *testing.T) {
	big := `{"type":"ADDED","object":` + podJSON("big", "12")[:len(podJSON("big", "12"))-1] +
		`,"pad":"` + strings.Repeat("x", 100<<10) + `"}}`
	tests := []struct {
		name  string
		frame string
		extra string // a key the frame adds when it is accepted as an object
		want  string // in the logged error
	}{
		{"oversized frame", big, "", "exceeds the 65536-byte limit"},
		{"deeply nested JSON", `{"type":"ADDED","object":` + strings.Repeat(`{"a":`, 5000) + `1` + strings.Repeat(`}`, 5000) + `}`, "", "nesting too deep"},
		// Invalid UTF-8 inside a string becomes U+FFFD, as the Kubernetes
		// decoder does: the object is accepted under that key, nothing panics.
		{"invalid UTF-8", "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"\xff\xfe\",\"namespace\":\"ns\",\"resourceVersion\":\"12\"}}}", "ns/\ufffd\ufffd", ""},
		{"huge number", `{"type":"ADDED","object":{"metadata":{"name":"n","generation":1e999999,"resourceVersion":"12"}}}`, "", "does not decode"},
		{"status with a wrong code", `{"type":"ERROR","object":{"kind":"Status","code":200,"message":"fine, really"}}`, "", "server answered 200"},
		{"unknown event type", `{"type":"EXPLODED","object":{}}`, "", `unknown event type`},
		{"not JSON at all", `<html>502 Bad Gateway</html>`, "", "unexpected byte '<'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newScripted(t,
				answer(200, listJSON("10", "", podJSON("a", "5"))),
				stream(true, eventJSON("MODIFIED", podJSON("a", "11")), tt.frame),
				answer(200, listJSON("13", "")), // the confirmation of the resume RV
				stream(false, eventJSON("ADDED", podJSON("c", "13"))),
			)
			opts := fastOptions(s.srv.URL, t, ListPaged)
			opts.Decoder.MaxFrameSize = 64 << 10
			logs := &testutil.Buffer{}
			opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			inf, err := New(opts)
			require.NoError(t, err)
			start(t, inf)
			q := s.waitRequests(t, 4)
			want := map[string]string{"ns/a": "11", "ns/c": "13"}
			if tt.extra != "" {
				want[tt.extra] = "12"
				require.Equal(t, "12", q[3].Get("resourceVersion"), "resume after the accepted event")
				require.Eventually(t, func() bool { return len(storeRVs(inf)) == 3 }, waitLong, tick)
				require.Equal(t, want, storeRVs(inf))
				return
			}
			require.Equal(t, "11", q[3].Get("resourceVersion"), "resume after the last good event")
			require.Eventually(t, func() bool { return len(storeRVs(inf)) == 2 }, waitLong, tick)
			require.Equal(t, want, storeRVs(inf))
			require.GreaterOrEqual(t, inf.Stats().Errors, int64(1))
			require.Contains(t, logs.String(), tt.want)
		})
	}
}

// TestCredentialsNeverLogged runs informers with a known token against a
// server that refuses it, then accepts it, with every fault that makes the
// engine log, at debug level, and searches every log line for the token.
func TestCredentialsNeverLogged(t *testing.T) {
	const secret = "kw-secret-token-5f1c9e"
	h := simtest.Start(t, sim.Options{BearerToken: secret})
	loadPods(t, h.Server, 5)
	mu := &testutil.Buffer{}
	logger := slog.New(slog.NewTextHandler(mu, &slog.HandlerOptions{Level: slog.LevelDebug}))
	for _, token := range []string{secret + "-wrong", secret} {
		c, err := kube.NewClient(&kube.Config{Host: h.URL, BearerToken: token})
		require.NoError(t, err)
		opts := simOptions(t, h.URL, ListAuto)
		opts.Client, opts.Logger = c, logger
		inf, err := New(opts)
		require.NoError(t, err)
		cancel := start(t, inf)
		if token == secret {
			require.True(t, inf.WaitForSync(ctxTimeout(t)))
			require.NoError(t, h.Server.InjectFault(sim.Fault{Type: sim.FaultError, Code: 503, Count: 2}))
			h.Server.DropWatches(true)
			_, err := h.Server.PutPod(sim.Pod{Namespace: "ns-0", Name: "x"})
			require.NoError(t, err)
			require.Eventually(t, func() bool { _, ok := inf.Store().Get("ns-0/x"); return ok }, waitLong, tick)
		} else {
			require.Eventually(t, func() bool { return kube.IsUnauthorized(inf.Health().LastError) }, waitLong, tick)
			require.NotContains(t, inf.Health().LastError.Error(), secret)
		}
		cancel()
	}
	out := mu.String()
	require.NotEmpty(t, out, "the run logged something")
	require.NotContains(t, out, secret, "a credential reached the logs")
	require.NotContains(t, out, "kw-secret", "a credential prefix reached the logs")
}
