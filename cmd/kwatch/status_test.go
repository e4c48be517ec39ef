package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/informer"
)

// scriptedHealth is an informer whose health the test sets.
type scriptedHealth struct {
	mu sync.Mutex
	h  informer.Health
}

func (s *scriptedHealth) Health() informer.Health {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.h
}

func (s *scriptedHealth) set(h informer.Health) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.h = h
}

func TestReconnectMonitorStep(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	boom := errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")
	var m reconnectMonitor
	steps := []struct {
		at   time.Duration
		h    informer.Health
		kind int
		text string
	}{
		{0, informer.Health{Watching: true}, actNone, ""},
		{time.Second, informer.Health{LastError: boom}, actNone, ""},     // down: noted, not yet said
		{3 * time.Second, informer.Health{LastError: boom}, actNone, ""}, // 2 s: routine
		{5 * time.Second, informer.Health{LastError: boom}, actShow,
			"kwatch: reconnecting since 15:04:06 (4s), last error: dial tcp 127.0.0.1:6443: connect: connection refused"},
		{6 * time.Second, informer.Health{}, actShow, "kwatch: reconnecting since 15:04:06 (5s)"},
		{7 * time.Second, informer.Health{Watching: true}, actResumed, "kwatch: watching again after 6s (down since 15:04:06)"},
		{8 * time.Second, informer.Health{Watching: true}, actNone, ""},
	}
	for i, s := range steps {
		got := m.step(s.h, t0.Add(s.at))
		require.Equal(t, monitorAction{kind: s.kind, text: s.text}, got, "step %d", i)
	}
}

// TestMonitorStatusLine: on a terminal the status line is drawn in place
// and erased when a row is printed; elsewhere one line says it.
func TestMonitorStatusLine(t *testing.T) {
	for _, tty := range []bool{true, false} {
		t.Run(map[bool]string{true: "terminal", false: "pipe"}[tty], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var errb, outb bytes.Buffer
				var mu sync.Mutex
				e := &env{stderr: lockedWriter{&mu, &errb}, errTTY: tty, errWidth: func() int { return 200 }}
				e.status = &statusLine{w: e.stderr, tty: tty}
				out := statusClearing{w: lockedWriter{&mu, &outb}, status: e.status}
				inf := &scriptedHealth{h: informer.Health{Watching: true}}
				ctx, cancel := context.WithCancel(t.Context())
				done := make(chan struct{})
				go func() { defer close(done); monitor(ctx, e, inf) }()

				time.Sleep(time.Second)
				inf.set(informer.Health{LastError: errors.New("EOF")})
				time.Sleep(10 * time.Second)
				mu.Lock()
				got := errb.String()
				mu.Unlock()
				if tty {
					require.Contains(t, got, "\r\x1b[Kkwatch: reconnecting since ")
					require.Contains(t, got, "(9s), last error: EOF", "redrawn as time passes")
					_, err := out.Write([]byte("row\n"))
					require.NoError(t, err)
					mu.Lock()
					require.True(t, strings.HasSuffix(errb.String(), "\r\x1b[K"), "erased before the row: %q", errb.String())
					mu.Unlock()
				} else {
					require.Equal(t, "kwatch: watch interrupted, reconnecting (last error: EOF)\n", got)
				}
				inf.set(informer.Health{Watching: true})
				time.Sleep(time.Second)
				cancel()
				<-done
				mu.Lock()
				defer mu.Unlock()
				require.Regexp(t, `kwatch: watching again after \d+s \(down since \d\d:\d\d:\d\d\)\n$`, errb.String())
			})
		})
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}
