package suite

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
)

// T is the part of *testing.T the cases use. The runner passes the real
// *testing.T, or a recorder for a case the target is known to fail, so the
// case still runs in full and its outcome is reported without failing the
// test binary.
type T interface {
	Helper()
	Errorf(format string, args ...any)
	FailNow()
	Logf(format string, args ...any)
	Skipf(format string, args ...any)
	Cleanup(f func())
}

// recorder is a T that keeps what happened instead of reporting it.
// A case runs on its own goroutine with it (FailNow and Skipf end that
// goroutine, as they do a test's).
type recorder struct {
	mu       sync.Mutex
	failed   bool
	skipped  bool
	log      []string // Errorf and Logf messages, in order
	cleanups []func() // run last-in first-out when the case ends
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = true
	r.log = append(r.log, fmt.Sprintf(format, args...))
}

func (r *recorder) FailNow() {
	r.mu.Lock()
	r.failed = true
	r.mu.Unlock()
	runtime.Goexit()
}

func (r *recorder) Logf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = append(r.log, fmt.Sprintf(format, args...))
}

func (r *recorder) Skipf(format string, args ...any) {
	r.mu.Lock()
	r.skipped = true
	r.log = append(r.log, "skipped: "+fmt.Sprintf(format, args...))
	r.mu.Unlock()
	runtime.Goexit()
}

func (r *recorder) Cleanup(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cleanups = append(r.cleanups, f)
}

func (r *recorder) runCleanups() {
	for {
		r.mu.Lock()
		n := len(r.cleanups)
		if n == 0 {
			r.mu.Unlock()
			return
		}
		f := r.cleanups[n-1]
		r.cleanups = r.cleanups[:n-1]
		r.mu.Unlock()
		f()
	}
}

// record runs c with a recorder on a goroutine it waits for. A panic in
// the case counts as a failure, as it would in a test.
func record(c Case, e *Env) *recorder {
	r := &recorder{}
	var wg sync.WaitGroup
	wg.Go(func() {
		defer r.runCleanups()
		defer func() {
			if p := recover(); p != nil {
				r.Errorf("panic: %v", p)
			}
		}()
		c.Run(r, e)
	})
	wg.Wait()
	return r
}

// summary is the recorded messages on one line each, indented.
func (r *recorder) summary() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return "\t" + strings.Join(r.log, "\n\t")
}
