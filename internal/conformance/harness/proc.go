package harness

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Process is one server program running in its own process group, so that
// stopping it also stops anything it started. Its output goes to a log file.
// Start one with StartProcess; Stop it exactly when you are done. Safe for
// concurrent use.
type Process struct {
	Name    string
	LogPath string

	cmd  *exec.Cmd
	done chan struct{} // closed once the process has been reaped
	err  error         // exit status; written before done is closed
}

// ProcSpec says how to start a Process.
type ProcSpec struct {
	Name    string   // for messages: "etcd", "kube-apiserver"
	Path    string   // the program
	Args    []string // its arguments
	Dir     string   // working directory; "" is the caller's
	LogPath string   // where stdout and stderr go; required
}

// StartProcess starts spec's program in a new process group. The child
// also gets SIGKILL when this process dies (Linux parent-death signal), so a
// test binary killed by a timeout does not leave servers behind. (The
// signal follows the forking OS thread, not the process; the Go runtime
// only ends a thread when a goroutine exits while locked to it, which
// nothing here does.)
func StartProcess(spec ProcSpec) (*Process, error) {
	logf, err := os.Create(spec.LogPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(spec.Path, spec.Args...)
	cmd.Dir = spec.Dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", spec.Name, err)
	}
	p := &Process{Name: spec.Name, LogPath: spec.LogPath, cmd: cmd, done: make(chan struct{})}
	groups.add(cmd.Process.Pid)
	// The reaper goroutine is waited for by Stop (and by Done's callers).
	go func() {
		p.err = cmd.Wait()
		logf.Close()
		groups.remove(cmd.Process.Pid)
		close(p.done)
	}()
	return p, nil
}

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has exited, and how.
func (p *Process) Exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// stopGrace is how long a server gets to exit after SIGTERM before SIGKILL.
const stopGrace = 10 * time.Second

// Stop sends SIGTERM to the process group, then SIGKILL after a grace
// period, and returns once the process has been reaped.
func (p *Process) Stop() {
	pid := p.cmd.Process.Pid
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(stopGrace):
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		<-p.done
	}
	// Anything the leader left in its group goes too.
	_ = syscall.Kill(-pid, syscall.SIGKILL)
}

// Tail returns the last n bytes of the process's log, for error messages.
func (p *Process) Tail(n int) string {
	b, err := os.ReadFile(p.LogPath)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	if len(b) > n {
		b = b[len(b)-n:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return string(b)
}

// ErrExited says a server exited while it was expected to run.
var ErrExited = errors.New("server process exited")

// groupSet is every live process group this test binary started. It is
// package state because a signal handler has no other way to reach them.
type groupSet struct {
	mu   sync.Mutex
	pids map[int]bool    // leader pid of each live group
	dirs map[string]bool // scratch directories of running clusters
}

var groups = &groupSet{pids: map[int]bool{}, dirs: map[string]bool{}}

func (g *groupSet) addDir(dir string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.dirs[dir] = true
}

func (g *groupSet) removeDir(dir string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.dirs, dir)
}

func (g *groupSet) add(pid int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pids[pid] = true
}

func (g *groupSet) remove(pid int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.pids, pid)
}

// KillAll sends SIGKILL to every process group still running and removes
// the scratch directories of running clusters (etcd's data is over 100 MB),
// since a process ending on a signal skips test cleanups. It is for signal
// handlers; normal code calls Stop.
func KillAll() {
	groups.mu.Lock()
	defer groups.mu.Unlock()
	for pid := range groups.pids {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
	for dir := range groups.dirs {
		_ = os.RemoveAll(dir)
	}
}
