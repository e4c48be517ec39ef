package live

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRenderFrame(t *testing.T) {
	m := podModel(pod("shop", "web-1", "Running", t0.Add(-3*time.Hour)), pod("shop", "db-0", "CrashLoopBackOff", t0),
		pod("auth", "login-7", "Terminating", t0.Add(-time.Minute)))
	m.SetConn(Conn{State: Watching, Since: t0, LastActivity: t0.Add(9 * time.Second)})
	f := m.Render(t0.Add(10*time.Second), 72, 9)
	want := `kwatch · pods · all namespaces · 3
● watching for 10s · last heard 1s ago
CrashLoopBackOff 1  Running 1  Terminating 1
NAMESPACE   NAME      STATUS             AGE
auth        login-7   Terminating        70s
shop        db-0      CrashLoopBackOff   10s
shop        web-1     Running            3h
` + "\n" + `/ filter · n namespace · s sort · ↑↓ move · Enter changes · q quit
`
	require.Equal(t, want, f.String())
	require.Len(t, f.Lines, 9)

	styles := func(l Line) []Style {
		var s []Style
		for _, sp := range l {
			s = append(s, sp.Style)
		}
		return s
	}
	require.Equal(t, []Style{StyleDim, StyleDim, StyleDim, StyleDim}, styles(f.Lines[4]), "a Terminating row is dim")
	require.Equal(t, []Style{StyleNormal, StyleNormal, StyleBad, StyleNormal}, styles(f.Lines[5]), "STATUS is coloured")
	require.Equal(t, []Style{StyleNormal, StyleNormal, StyleGood, StyleNormal}, styles(f.Lines[6]))
	require.Equal(t, []Style{StyleBad, StyleNormal, StyleGood, StyleNormal, StyleDim}, styles(f.Lines[2]))
	require.Equal(t, StyleHeader, f.Lines[3][0].Style)
}

func TestRenderFitsTheScreen(t *testing.T) {
	m := podModel(pod("a-very-long-namespace", "a-pod-with-a-name-far-longer-than-the-screen-is-wide", "Running", t0))
	for _, size := range [][2]int{{20, 3}, {10, 1}, {0, 0}, {30, 40}, {1, 8}} {
		f := m.Render(t0, size[0], size[1])
		require.Len(t, f.Lines, size[1])
		for i, l := range f.Lines {
			require.LessOrEqual(t, l.width(), size[0], "line %d of %v: %q", i, size, l.String())
		}
		if size[1] > 0 {
			require.Equal(t, m.footer().clip(size[0]), f.Lines[size[1]-1], "the last line is the keys' hint")
		}
	}
	f := m.Render(t0, 200, 8)
	require.Contains(t, f.Lines[4].String(), "a-pod-with-a-name-far-longer-than-the-screen-is-wide")
	long := strings.Repeat("x", 100)
	m.Upsert(pod("a", long, "Running", t0))
	f = m.Render(t0, 300, 8)
	require.Contains(t, f.Lines[4].String(), strings.Repeat("x", maxColWidth-1)+"…", "cells are cut at maxColWidth")
}

func TestRenderFilterAndPickerFooters(t *testing.T) {
	m := podModel(pod("a", "x", "Running", t0))
	keys(m, append([]Key{R('/')}, typed("we")...)...)
	f := m.Render(t0, 80, 6)
	require.Equal(t, "/we█   Enter keep · Esc clear", f.Lines[5].String())
	require.Contains(t, f.Lines[0].String(), `filter "we" · 0 of 1`)
	require.Equal(t, "0 shown", f.Lines[2].String())
	keys(m, Key{Code: KeyEnter})
	require.Contains(t, m.Render(t0, 100, 6).Lines[5].String(), "Esc shows all")
}

func TestConnLine(t *testing.T) {
	now := t0.Add(time.Hour)
	tests := []struct {
		name string
		conn Conn
		want string
		lead Style
	}{
		{"zero", Conn{}, "◌ connecting", StyleWarn},
		{"listing", Conn{State: Listing, Listed: 1200}, "◌ listing: 1200 objects so far", StyleWarn},
		{"watching", Conn{State: Watching, Since: t0, LastActivity: now.Add(-3 * time.Second)},
			"● watching for 60m · last heard 3s ago", StyleGood},
		{"quiet watch", Conn{State: Watching, Since: t0, LastActivity: now.Add(-5 * time.Minute), Relists: 2},
			"● watching for 60m · quiet for 5m · 2 relists", StyleGood},
		{"reconnecting", Conn{State: Reconnecting, Since: now.Add(-90 * time.Second), LastError: "connection refused",
			LastActivity: now.Add(-95 * time.Second)},
			"○ reconnecting since 12:58:30 (90s) · table as of 12:58:25 · last error: connection refused", StyleBad},
		{"relisting", Conn{State: Relisting, Listed: 7, LastError: "410 Gone"},
			"◌ relisting: 7 objects so far · last error: 410 Gone", StyleWarn},
		{"refusals", Conn{State: Watching, Since: t0, Refused: 2, LastRefusal: "index app: bad value"},
			"● watching for 60m · 2 objects refused, not shown: index app: bad value", StyleGood},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := connLine(tc.conn, now)
			require.Equal(t, tc.want, l.String())
			require.Equal(t, tc.lead, l[0].Style)
		})
	}
	require.Equal(t, "ConnState(9)", ConnState(9).String())
}

func TestRunOptionsRequired(t *testing.T) {
	err := Run(t.Context(), RunOptions{})
	require.Error(t, err)
	require.False(t, errors.Is(err, ErrQuit))
}
