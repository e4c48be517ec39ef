package soak

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/kwatch/kwatch/internal/rig/testutil"
	"github.com/kwatch/kwatch/kube"
)

// haSlot is one replica's place: each start is a new process (a new
// identity, link, client and manager), as a restarted pod would be; a
// Run that ends by itself (a lost Lease, a fenced member) starts the
// next process too.
type haSlot struct {
	n   int
	run *haMode
	rng *rand.Rand // seeds the processes' reconcilers

	mu       sync.Mutex
	gen      int      // guarded by mu
	cur      *haProc  // the running process; guarded by mu
	restarts int      // processes stopped by a restart fault; guarded by mu
	exits    []string // processes whose Run ended by itself, with its error; guarded by mu
	cancel   context.CancelFunc
	done     chan struct{}
}

// haProc is one replica process.
type haProc struct {
	id     string
	link   *haLink
	pause  *testutil.Freeze
	cancel context.CancelFunc
}

// start runs processes on the slot until stop.
func (s *haSlot) start(ctx context.Context) {
	ctx, s.cancel = context.WithCancel(ctx)
	s.done = make(chan struct{})
	seed := s.rng.Uint64()
	go func() {
		defer close(s.done)
		for ctx.Err() == nil {
			if err := s.runProcess(ctx, seed); err != nil {
				s.mu.Lock()
				s.exits = append(s.exits, err.Error())
				s.mu.Unlock()
				select { // a process that cannot start is not retried in a tight loop
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
			}
			seed++
		}
	}()
}

// runProcess runs one process until it ends by itself (its error) or
// is stopped (nil).
func (s *haSlot) runProcess(ctx context.Context, seed uint64) error {
	s.mu.Lock()
	s.gen++
	id := fmt.Sprintf("r%d-%d", s.n, s.gen)
	s.mu.Unlock()
	p := &testutil.Freeze{}
	l, err := s.run.serveLink(ctx, id, p)
	if err != nil {
		return fmt.Errorf("%s: link: %w", id, err)
	}
	s.run.mu.Lock()
	s.run.links = append(s.run.links, l)
	s.run.mu.Unlock()
	// A bound on each request, as a production client has: a write on a
	// dead connection (the proxy's freeze) fails instead of hanging.
	kc, err := kube.NewClient(&kube.Config{Host: "http://" + l.addr, HTTP: kube.HTTPConfig{Timeout: 30 * time.Second}})
	if err != nil {
		return fmt.Errorf("%s: client: %w", id, err)
	}
	m, err := s.run.newManager(kc, id, p, &lockedRand{rng: rand.New(rand.NewPCG(seed, 5))})
	if err != nil {
		return fmt.Errorf("%s: manager: %w", id, err)
	}
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.mu.Lock()
	s.cur = &haProc{id: id, link: l, pause: p, cancel: cancel}
	s.mu.Unlock()
	err = m.Run(pctx)
	s.mu.Lock()
	s.cur = nil
	stopped := pctx.Err() != nil
	s.mu.Unlock()
	if stopped {
		return nil
	}
	return fmt.Errorf("%s: Run ended: %v", id, err)
}

// current is the running process, or nil between two.
func (s *haSlot) current() *haProc {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

// restart stops the current process (thawed first: a stopped process
// ends) and lets the next one start; it reports whether one ran.
func (s *haSlot) restart() bool {
	s.mu.Lock()
	p := s.cur
	if p != nil {
		s.restarts++
	}
	s.mu.Unlock()
	if p == nil {
		return false
	}
	p.pause.Thaw()
	p.cancel()
	return true
}

// stop ends the slot's last process and waits for it.
func (s *haSlot) stop() {
	s.cancel()
	if p := s.current(); p != nil {
		p.pause.Thaw()
	}
	<-s.done
}
