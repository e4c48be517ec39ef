package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// Progress line timing: nothing for lists faster than progressDelay, then
// a redraw every progressEvery.
const (
	progressDelay = 500 * time.Millisecond
	progressEvery = 250 * time.Millisecond
)

// progress counts the objects received while the initial list loads and,
// on a terminal, shows the count and rate on one stderr line, redrawn in
// place and erased before the first row is printed. Its methods are safe
// for concurrent use; run draws, finish ends it.
type progress struct {
	w       io.Writer // nil: count only, draw nothing (not a terminal)
	what    string    // "pods"
	n       atomic.Int64
	start   time.Time
	stopped chan struct{} // closed by finish
	once    sync.Once

	mu    sync.Mutex
	done  bool // finish was called: never draw again
	shown bool // a line is on the screen
}

func newProgress(e *env, what string) *progress {
	p := &progress{what: what, start: time.Now(), stopped: make(chan struct{})}
	if e.errTTY {
		p.w = e.stderr
	}
	return p
}

func (p *progress) add(n int64)  { p.n.Add(n) }
func (p *progress) count() int64 { return p.n.Load() }

// run redraws the line until finish or ctx ends.
func (p *progress) run(ctx context.Context) error {
	if p.w == nil {
		return nil
	}
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-p.stopped:
			return nil
		case now := <-tick.C:
			if now.Sub(p.start) >= progressDelay {
				p.draw(now)
			}
		}
	}
}

func (p *progress) draw(now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return
	}
	n := p.count()
	rate := float64(n) / now.Sub(p.start).Seconds()
	fmt.Fprintf(p.w, "\r\x1b[Klisting %s: %d objects (%.0f/s)", p.what, n, rate)
	p.shown = true
}

// finish erases the line and stops drawing. It is idempotent.
func (p *progress) finish() {
	p.once.Do(func() { close(p.stopped) })
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.shown = false
	}
	p.done = true
}
