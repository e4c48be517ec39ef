package live

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gdamore/tcell/v2"
)

// frameEvery bounds the redraw rate: changes arriving faster are drawn
// together. It also sets how soon a new second of the clock (ages) shows.
const frameEvery = 100 * time.Millisecond

// An Update changes the model: Run applies it on its own goroutine, in the
// order received. It must not block or keep the model.
type Update func(*Model)

// UpsertRow is the Update that adds or replaces r.
func UpsertRow(r Row) Update { return func(m *Model) { m.Upsert(r) } }

// DeleteRow is the Update that removes the row with key.
func DeleteRow(key string) Update { return func(m *Model) { m.Delete(key) } }

// SetColumns is the Update that replaces the headers.
func SetColumns(columns []string) Update { return func(m *Model) { m.SetColumns(columns) } }

// SetConn is the Update that records the connection's state.
func SetConn(c Conn) Update { return func(m *Model) { m.SetConn(c) } }

// RunOptions configure Run. Screen and Model are required; the other
// fields' zero values are documented on them.
type RunOptions struct {
	// Screen is the terminal (tcell.NewScreen) or, in tests, a
	// tcell.SimulationScreen. Run initialises it and finalises it before it
	// returns, which restores the terminal. Required.
	Screen tcell.Screen
	// Model is drawn and changed by Run only. Required.
	Model *Model
	// Updates are applied in order; Run never closes it. Nil for none.
	Updates <-chan Update
	// Now is the clock ages are computed from; time.Now if nil.
	Now func() time.Time
}

// ErrQuit is what Run returns when the user quits (q or Ctrl-C).
var ErrQuit = errors.New("live view: quit")

// Run shows the model full-screen until ctx ends (it returns nil) or the
// user quits (ErrQuit). Keys and resizes redraw at once; updates and the
// ticking clock at most every frameEvery. The one goroutine it starts (the
// screen's event reader) has exited when it returns.
func Run(ctx context.Context, o RunOptions) error {
	if o.Screen == nil || o.Model == nil {
		return errors.New("live view: Screen and Model are required")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	s := o.Screen
	if err := s.Init(); err != nil {
		return fmt.Errorf("live view: cannot use the terminal: %w", err)
	}
	defer s.Fini()
	s.HideCursor()
	events, stop := readEvents(s)
	defer stop()
	return loop(ctx, o, events)
}

// readEvents runs the screen's event reader until stop, which waits for it.
func readEvents(s tcell.Screen) (<-chan tcell.Event, func()) {
	events := make(chan tcell.Event) // unbuffered: ChannelEvents waits for us or quit
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.ChannelEvents(events, quit)
	}()
	return events, func() { close(quit); <-done }
}

// loop applies updates and keys and draws until ctx ends or the user quits.
func loop(ctx context.Context, o RunOptions, events <-chan tcell.Event) error {
	s, m := o.Screen, o.Model
	tick := time.NewTicker(frameEvery)
	defer tick.Stop()
	redraw := func() (dirty bool, second int64) {
		t := o.Now()
		draw(s, m, t)
		return false, t.Unix()
	}
	dirty, drawn := redraw()
	for {
		select {
		case <-ctx.Done():
			return nil
		case u := <-o.Updates:
			u(m)
			dirty = true
		case ev, ok := <-events:
			if !ok {
				return nil // the screen was finalised under us
			}
			switch ev := ev.(type) {
			case *tcell.EventResize:
				s.Sync()
			case *tcell.EventKey:
				if m.HandleKey(keyOf(ev)) {
					return ErrQuit
				}
			default:
				continue
			}
			dirty, drawn = redraw()
		case <-tick.C:
			if dirty || o.Now().Unix() != drawn {
				dirty, drawn = redraw()
			}
		}
	}
}

// draw renders the model into the screen's buffer and shows it; tcell
// sends the terminal only the cells that changed.
func draw(s tcell.Screen, m *Model, now time.Time) {
	w, h := s.Size()
	f := m.Render(now, w, h)
	s.Clear()
	for y, l := range f.Lines {
		x := 0
		for _, sp := range l {
			st := styleOf(sp.Style)
			for _, r := range sp.Text {
				s.SetContent(x, y, r, nil, st)
				x++
			}
		}
	}
	s.Show()
}

// The terminal's own red, green and yellow (ANSI colours 1 to 3, what
// kubectl's and most tools' colours are), so that its theme decides their
// shade: tcell's ColorRed and ColorYellow are the bright variants.
var (
	ansiRed    = tcell.PaletteColor(1)
	ansiGreen  = tcell.PaletteColor(2)
	ansiYellow = tcell.PaletteColor(3)
)

// styleOf maps a Style to the terminal's.
func styleOf(s Style) tcell.Style {
	st := tcell.StyleDefault
	switch s {
	case StyleTitle, StyleChanged:
		return st.Bold(true)
	case StyleChangedCell:
		return st.Bold(true).Underline(true)
	case StyleHeader, StyleSelected:
		return st.Reverse(true)
	case StyleGood:
		return st.Foreground(ansiGreen)
	case StyleWarn:
		return st.Foreground(ansiYellow)
	case StyleBad:
		return st.Foreground(ansiRed)
	case StyleDim:
		return st.Dim(true)
	}
	return st
}

// keyOf maps a terminal key to the model's.
func keyOf(ev *tcell.EventKey) Key {
	switch ev.Key() {
	case tcell.KeyRune:
		return R(ev.Rune())
	case tcell.KeyEnter:
		return Key{Code: KeyEnter}
	case tcell.KeyEscape:
		return Key{Code: KeyEsc}
	case tcell.KeyBackspace, tcell.KeyBackspace2:
		return Key{Code: KeyBackspace}
	case tcell.KeyCtrlC:
		return Key{Code: KeyCtrlC}
	case tcell.KeyCtrlU:
		return Key{Code: KeyCtrlU}
	case tcell.KeyUp:
		return Key{Code: KeyUp}
	case tcell.KeyDown:
		return Key{Code: KeyDown}
	case tcell.KeyPgUp:
		return Key{Code: KeyPgUp}
	case tcell.KeyPgDn:
		return Key{Code: KeyPgDn}
	case tcell.KeyHome:
		return Key{Code: KeyHome}
	case tcell.KeyEnd:
		return Key{Code: KeyEnd}
	}
	return Key{}
}
