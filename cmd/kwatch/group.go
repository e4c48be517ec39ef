package main

import (
	"context"
	"sync"
)

// group runs goroutines that share a context and waits for them all, in
// the manner of errgroup: the first error cancels the others, Wait returns
// it. The zero value is not usable; build one with newGroup.
type group struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu  sync.Mutex
	err error // the first error returned by a goroutine
}

func newGroup(parent context.Context) *group {
	ctx, cancel := context.WithCancel(parent)
	return &group{ctx: ctx, cancel: cancel}
}

// Go runs fn on a new goroutine with the group's context.
func (g *group) Go(fn func(ctx context.Context) error) {
	g.wg.Go(func() {
		if err := fn(g.ctx); err != nil {
			g.mu.Lock()
			if g.err == nil {
				g.err = err
			}
			g.mu.Unlock()
			g.cancel()
		}
	})
}

// Stop cancels the group's context and waits for every goroutine; it
// returns the first error one of them returned.
func (g *group) Stop() error {
	g.cancel()
	g.wg.Wait()
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

// Err returns the first error so far without waiting.
func (g *group) Err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}
