package main

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/kube"
)

// pollEvery is how often the command looks at the informer's health.
const pollEvery = 50 * time.Millisecond

// healthSource is the part of an informer the command watches over.
type healthSource interface {
	Health() informer.Health
}

// watched is a running informer as the command oversees it.
type watched struct {
	inf  healthSource
	reg  informer.Registration
	prog *progress
	host string // the server's URL, for messages
}

// waitSynced waits until the handler has been given the whole initial
// list. It gives up, with one line saying why, when the informer meets a
// refusal (401, 403) that retrying cannot fix, or when the list makes no
// progress for --request-timeout. It returns false without an error when
// ctx ends first.
func waitSynced(ctx context.Context, w watched, o *getOptions) (bool, error) {
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	seen, lastProgress := w.prog.count(), time.Now()
	for !w.reg.HasSynced() {
		select {
		case <-ctx.Done():
			return false, nil
		case <-tick.C:
		}
		h := w.inf.Health()
		if h.LastError != nil && (kube.IsUnauthorized(h.LastError) || kube.IsForbidden(h.LastError)) {
			return false, describe(ctx, h.LastError, w.host)
		}
		if n := w.prog.count(); n != seen {
			seen, lastProgress = n, time.Now()
		}
		if o.requestTimeout > 0 && time.Since(lastProgress) > o.requestTimeout && !h.Synced { // 0: no bound
			return false, fmt.Errorf("no progress listing %s for %s (--request-timeout); last error: %v",
				o.resource, o.requestTimeout, h.LastError)
		}
	}
	return true, nil
}

// reconnectNotice is how long a watch may be down before the command says
// so: the informer resumes an ended watch within moments, which is routine.
const reconnectNotice = 3 * time.Second

// monitorEvery is how often the status line is brought up to date.
const monitorEvery = 500 * time.Millisecond

// monitor tells the user, on stderr, when the watch has been down for a
// while and when it is back, until ctx ends. On a terminal a status line
// says "reconnecting since 15:04:05 (42s)" and the last error, redrawn as
// it changes; elsewhere one line says the watch was interrupted. Either
// way a line says when watching resumed. Printing goes on meanwhile: the
// informer relists and the emitter prints what changed.
func monitor(ctx context.Context, e *env, inf healthSource) {
	tick := time.NewTicker(monitorEvery)
	defer tick.Stop()
	st := e.status
	var m reconnectMonitor
	shown := "" // the status line on the screen
	for {
		select {
		case <-ctx.Done():
			st.Clear()
			return
		case <-tick.C:
		}
		h := inf.Health()
		switch act := m.step(h, time.Now()); act.kind {
		case actShow:
			if st.tty {
				if text := fitWidth(act.text, e.errWidth()); text != shown {
					st.Show(text)
					shown = text
				}
			} else if !m.told {
				msg := "kwatch: watch interrupted, reconnecting"
				if h.LastError != nil {
					msg += " (last error: " + oneLine(h.LastError.Error()) + ")"
				}
				st.Println(msg)
			}
			m.told = true
		case actResumed:
			st.Println(act.text)
			shown = ""
		}
	}
}

// reconnectMonitor is monitor's state: when the watch went down and
// whether the user was told. step is its one transition function.
type reconnectMonitor struct {
	downSince time.Time // zero while watching
	announced bool      // the status line (or the line) was shown for this outage
	told      bool      // without a terminal: the one line was printed
}

type monitorAction struct {
	kind int // actNone, actShow or actResumed
	text string
}

const (
	actNone = iota
	actShow
	actResumed
)

// step moves the monitor on by one look at the informer's health.
func (m *reconnectMonitor) step(h informer.Health, now time.Time) monitorAction {
	switch {
	case h.Watching && m.announced:
		since := m.downSince
		*m = reconnectMonitor{}
		return monitorAction{kind: actResumed, text: resumedText(since, now)}
	case h.Watching:
		m.downSince = time.Time{}
		return monitorAction{}
	case m.downSince.IsZero():
		m.downSince = now
		return monitorAction{}
	case m.announced || now.Sub(m.downSince) > reconnectNotice:
		m.announced = true
		return monitorAction{kind: actShow, text: reconnectText(m.downSince, now, h.LastError)}
	}
	return monitorAction{}
}

// fitWidth cuts a status line to the terminal's width (less one column,
// so that it never wraps): a wrapped line cannot be erased in place.
func fitWidth(s string, width int) string {
	if width <= 1 {
		width = 120
	}
	r := []rune(s)
	if len(r) < width {
		return s
	}
	return string(r[:width-2]) + "…"
}

// group is the command's goroutines: an errgroup (the first error cancels
// the others) whose context the command can also cancel itself, to end
// the watch at a write error or when listing once is done. Build it with
// newGroup; whoever builds it calls Stop.
type group struct {
	ctx    context.Context
	cancel context.CancelFunc
	eg     *errgroup.Group
}

func newGroup(parent context.Context) *group {
	ctx, cancel := context.WithCancel(parent)
	eg, ctx := errgroup.WithContext(ctx)
	return &group{ctx: ctx, cancel: cancel, eg: eg}
}

// Go runs fn on a new goroutine with the group's context.
func (g *group) Go(fn func(ctx context.Context) error) {
	g.eg.Go(func() error { return fn(g.ctx) })
}

// Stop cancels the group's context and waits for every goroutine; it
// returns the first error one of them returned.
func (g *group) Stop() error {
	g.cancel()
	return g.eg.Wait()
}
