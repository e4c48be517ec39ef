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
		if time.Since(lastProgress) > o.requestTimeout && !h.Synced {
			return false, fmt.Errorf("no progress listing %s for %s (--request-timeout); last error: %v",
				o.resource, o.requestTimeout, h.LastError)
		}
	}
	return true, nil
}

// reconnectNotice is how long a watch may be down before the command says
// so: the informer resumes an ended watch within moments, which is routine.
const reconnectNotice = 3 * time.Second

// monitor tells the user, on stderr, when the watch has been down for a
// while and when it is back, until ctx ends. Printing stays true meanwhile:
// the informer relists and the emitter prints what changed.
func monitor(ctx context.Context, e *env, inf healthSource) {
	tick := time.NewTicker(10 * pollEvery)
	defer tick.Stop()
	var downSince time.Time
	announced := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		h := inf.Health()
		switch {
		case h.Watching && announced:
			fmt.Fprintf(e.stderr, "kwatch: watching again after %s\n", time.Since(downSince).Round(time.Second))
			announced, downSince = false, time.Time{}
		case h.Watching:
			downSince = time.Time{}
		case downSince.IsZero():
			downSince = time.Now()
		case !announced && time.Since(downSince) > reconnectNotice:
			msg := "kwatch: watch interrupted, reconnecting"
			if h.LastError != nil {
				msg += " (last error: " + oneLine(h.LastError.Error()) + ")"
			}
			fmt.Fprintln(e.stderr, msg)
			announced = true
		}
	}
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
