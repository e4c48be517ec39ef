package live

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/stretchr/testify/require"
)

// simScreen is a simulated terminal of a fixed size.
type simScreen struct {
	tcell.SimulationScreen
	w, h int
}

func (s *simScreen) Init() error {
	if err := s.SimulationScreen.Init(); err != nil {
		return err
	}
	s.SetSize(s.w, s.h)
	return nil
}

// text returns what the screen shows, trailing spaces removed.
func (s *simScreen) text() string {
	cells, w, h := s.GetContents()
	var b strings.Builder
	for y := range h {
		var line strings.Builder
		for x := range w {
			if r := cells[y*w+x].Runes; len(r) > 0 {
				line.WriteString(string(r))
			} else {
				line.WriteByte(' ')
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
		b.WriteByte('\n')
	}
	return b.String()
}

// styleAt is the style of the first cell of the screen's text sub.
func (s *simScreen) styleAt(sub string) (tcell.Style, bool) {
	cells, w, _ := s.GetContents()
	for y, l := range strings.Split(s.text(), "\n") {
		if i := strings.Index(l, sub); i >= 0 {
			return cells[y*w+len([]rune(l[:i]))].Style, true
		}
	}
	return tcell.StyleDefault, false
}

// running is Run on a simulated screen inside a synctest bubble.
type running struct {
	screen  *simScreen
	updates chan Update
	cancel  context.CancelFunc
	done    chan error
}

func startRun(t *testing.T, m *Model) *running {
	ctx, cancel := context.WithCancel(t.Context())
	r := &running{screen: &simScreen{SimulationScreen: tcell.NewSimulationScreen("UTF-8"), w: 80, h: 12},
		updates: make(chan Update), cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- Run(ctx, RunOptions{Screen: r.screen, Model: m, Updates: r.updates}) }()
	synctest.Wait()
	return r
}

// look runs f on Run's goroutine, between two draws: the simulated
// screen's cells are not safe to read while Run draws.
func (r *running) look(f func(s *simScreen)) {
	done := make(chan struct{})
	r.updates <- func(*Model) { f(r.screen); close(done) }
	<-done
}

// text returns the screen's text.
func (r *running) text() string {
	var text string
	r.look(func(s *simScreen) { text = s.text() })
	return text
}

// frame lets a frame pass and returns the screen's text.
func (r *running) frame() string {
	time.Sleep(frameEvery)
	synctest.Wait()
	return r.text()
}

func (r *running) key(k tcell.Key, ch rune) string {
	r.screen.InjectKey(k, ch, tcell.ModNone)
	synctest.Wait()
	return r.text()
}

func (r *running) styleAt(t *testing.T, sub string) tcell.Style {
	t.Helper()
	var st tcell.Style
	var ok bool
	r.look(func(s *simScreen) { st, ok = s.styleAt(sub) })
	require.True(t, ok, "%q is not on the screen:\n%s", sub, r.text())
	return st
}

func TestRunShowsUpdatesKeysAndTicks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		r := startRun(t, podModel())
		require.Contains(t, r.text(), "◌ connecting")

		r.updates <- UpsertRow(pod("shop", "web-1", "Running", start))
		r.updates <- UpsertRow(pod("shop", "db-0", "CrashLoopBackOff", start))
		r.updates <- SetConn(Conn{State: Watching, Since: start})
		screen := r.frame()
		require.Regexp(t, `(?m)^shop +db-0 +CrashLoopBackOff +0s$`, screen)
		require.Regexp(t, `(?m)^shop +web-1 +Running +0s$`, screen)
		require.Contains(t, screen, "CrashLoopBackOff 1  Running 1")
		require.Contains(t, screen, "● watching")
		require.Equal(t, tcell.StyleDefault.Foreground(ansiRed), r.styleAt(t, "CrashLoopBackOff   "))
		require.Equal(t, tcell.StyleDefault.Reverse(true), r.styleAt(t, "NAMESPACE"))

		time.Sleep(3 * time.Second)
		require.Regexp(t, `(?m)^shop +web-1 +Running +3s$`, r.frame(), "ages tick without events")

		r.updates <- DeleteRow("shop/db-0")
		require.NotContains(t, r.frame(), "db-0")

		r.key(tcell.KeyRune, '/')
		r.key(tcell.KeyRune, 'x')
		screen = r.key(tcell.KeyRune, 'q')
		require.Contains(t, screen, "/xq█", "keys redraw at once; q is text in the filter")
		require.NotContains(t, screen, "web-1")
		screen = r.key(tcell.KeyEscape, 0)
		require.Contains(t, screen, "web-1")

		r.look(func(s *simScreen) { s.SetSize(40, 6) })
		require.NoError(t, r.screen.PostEvent(tcell.NewEventResize(40, 6)))
		synctest.Wait()
		lines := strings.Split(strings.TrimSuffix(r.text(), "\n"), "\n")
		require.Len(t, lines, 6)
		require.Regexp(t, `^shop +web-1 +Running +3s$`, lines[4], "redrawn at the new size")

		r.screen.InjectKey(tcell.KeyRune, 'q', tcell.ModNone)
		require.ErrorIs(t, <-r.done, ErrQuit)
		r.cancel()
	})
}

func TestRunCtrlCQuitsAndContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := startRun(t, podModel())
		r.screen.InjectKey(tcell.KeyCtrlC, 0, tcell.ModCtrl)
		require.ErrorIs(t, <-r.done, ErrQuit)
		r.cancel()

		r = startRun(t, podModel())
		r.cancel()
		require.NoError(t, <-r.done, "the end of the context is a normal end")
	})
}

// failScreen cannot be initialised, as a terminal that is not one.
type failScreen struct{ tcell.SimulationScreen }

func (failScreen) Init() error { return tcell.ErrNoScreen }

func TestRunTerminalError(t *testing.T) {
	err := Run(t.Context(), RunOptions{Screen: failScreen{tcell.NewSimulationScreen("")}, Model: podModel()})
	require.ErrorIs(t, err, tcell.ErrNoScreen)
	require.ErrorContains(t, err, "cannot use the terminal")
}
