package shardreplica

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Timeline collects what every replica of a test printed: reconciles
// and ring views. Its methods are safe for concurrent use.
type Timeline struct {
	mu     sync.Mutex
	open   map[string]map[string]time.Time // key -> replica -> start of its open reconcile
	spans  map[string][]Span               // key -> its closed reconciles
	starts map[string][]Start              // key -> its reconcile starts
	rings  map[string]RingView
	total  int
}

// Start is one reconcile start.
type Start struct {
	Replica string
	At      time.Time
}

// Span is one reconcile, from its start line to its end line (or, for a
// killed replica, to when the process was seen gone).
type Span struct {
	Replica    string
	Start, End time.Time
}

// RingView is a replica's last printed view.
type RingView struct {
	Members []string
	Settled bool
}

// NewTimeline returns an empty timeline.
func NewTimeline() *Timeline {
	return &Timeline{open: map[string]map[string]time.Time{}, spans: map[string][]Span{},
		starts: map[string][]Start{}, rings: map[string]RingView{}}
}

func (tl *Timeline) start(id, key string, at time.Time) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.total++
	tl.starts[key] = append(tl.starts[key], Start{Replica: id, At: at})
	if tl.open[key] == nil {
		tl.open[key] = map[string]time.Time{}
	}
	tl.open[key][id] = at
}

func (tl *Timeline) end(id, key string, at time.Time) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	began, ok := tl.open[key][id]
	if !ok {
		return
	}
	delete(tl.open[key], id)
	tl.spans[key] = append(tl.spans[key], Span{Replica: id, Start: began, End: at})
}

// gone closes every reconcile id left open: a killed process reconciled
// until at at the latest.
func (tl *Timeline) gone(id string, at time.Time) {
	tl.mu.Lock()
	var keys []string
	for key, open := range tl.open {
		if _, ok := open[id]; ok {
			keys = append(keys, key)
		}
	}
	tl.mu.Unlock()
	for _, k := range keys {
		tl.end(id, k, at)
	}
}

// Overlaps are the pairs of reconciles of one key by two replicas whose
// spans intersect, judged on the printed times (lines of several
// processes are read out of order, so only the times count). A
// reconcile still open counts as running until now.
func (tl *Timeline) Overlaps() []string {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	now := time.Now()
	var out []string
	for key, spans := range tl.spans {
		all := append([]Span(nil), spans...)
		for id, at := range tl.open[key] {
			all = append(all, Span{Replica: id, Start: at, End: now})
		}
		for i, a := range all {
			for _, b := range all[i+1:] {
				if a.Replica != b.Replica && a.Start.Before(b.End) && b.Start.Before(a.End) {
					out = append(out, fmt.Sprintf("%s: %s [%v, %v] and %s [%v, %v]", key,
						a.Replica, a.Start, a.End, b.Replica, b.Start, b.End))
				}
			}
		}
	}
	return out
}

// Total is the number of reconcile starts.
func (tl *Timeline) Total() int {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return tl.total
}

// Ring is replica id's last printed view.
func (tl *Timeline) Ring(id string) RingView {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return tl.rings[id]
}

// LastBefore is the replica of key's last reconcile start before t ("" if none).
func (tl *Timeline) LastBefore(key string, t time.Time) string {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	var last Start
	for _, s := range tl.starts[key] {
		if s.At.Before(t) && !s.At.Before(last.At) {
			last = s
		}
	}
	return last.Replica
}

// FirstAfter is key's first reconcile start after t, on any replica but
// except.
func (tl *Timeline) FirstAfter(key string, t time.Time, except string) (Start, bool) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	var first Start
	found := false
	for _, s := range tl.starts[key] {
		if s.Replica != except && s.At.After(t) && (!found || s.At.Before(first.At)) {
			first, found = s, true
		}
	}
	return first, found
}

func (tl *Timeline) read(id string, r io.Reader, errs func(string)) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), " ", 3)
		if len(f) < 3 {
			continue
		}
		ns, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		at := time.Unix(0, ns)
		switch f[0] {
		case "start":
			tl.start(id, f[2], at)
		case "end":
			tl.end(id, f[2], at)
		case "ring":
			members, settled, _ := strings.Cut(f[2], " ")
			tl.mu.Lock()
			tl.rings[id] = RingView{Members: strings.Split(members, ","), Settled: settled == "true"}
			tl.mu.Unlock()
		case "exit":
			if f[2] != "<nil>" {
				errs(id + ": " + sc.Text())
			}
		}
	}
}

// Proc is a replica process.
type Proc struct {
	ID     string
	cmd    *exec.Cmd
	exited chan struct{} // closed once the process is gone and its output read
}

// StartProc starts the running binary again as replica o, its lines
// going to tl; errs receives a replica's failure. The process dies with
// its parent.
func StartProc(o Options, tl *Timeline, errs func(string)) (*Proc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), o.Environ()...)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Proc{ID: o.ID, cmd: cmd, exited: make(chan struct{})}
	go func() {
		defer close(p.exited)
		tl.read(o.ID, out, errs)
		_ = cmd.Wait()
		tl.gone(o.ID, time.Now())
	}()
	return p, nil
}

// Signal sends sig and waits until the process is gone. It returns when
// the signal was sent.
func (p *Proc) Signal(sig syscall.Signal) time.Time {
	at := time.Now()
	_ = p.cmd.Process.Signal(sig)
	<-p.exited
	return at
}

// Kill kills the process (SIGKILL) if it still runs and waits for it.
func (p *Proc) Kill() { p.Signal(syscall.SIGKILL) }

// StartsBetween counts replica id's reconcile starts in [from, to).
func (tl *Timeline) StartsBetween(id string, from, to time.Time) int {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	n := 0
	for _, starts := range tl.starts {
		for _, s := range starts {
			if s.Replica == id && !s.At.Before(from) && s.At.Before(to) {
				n++
			}
		}
	}
	return n
}

// CPU is the process's user and system CPU time so far, read from
// /proc (Linux; 0 elsewhere or once the process is gone).
func (p *Proc) CPU() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses and may hold spaces.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	const ticks = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / ticks
}
