package harness

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kwatch/kwatch/internal/bench/report"
	"github.com/kwatch/kwatch/internal/bench/wire"
)

// proc is one engine process and its command pipe.
type proc struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Scanner
	logf *os.File
}

// engineArgs are the flags cmd/bench takes for an engine process;
// tracePrefix, when set, asks for runtime traces of tracePhases.
func engineArgs(cfg *Config, r Row, host, tracePrefix string) []string {
	args := []string{"-role=engine", "-engine=" + r.Engine, "-host=" + host,
		"-list-mode=" + r.ListMode, "-page-size=" + strconv.FormatInt(r.PageSize, 10),
		"-parallelism=" + strconv.Itoa(r.Parallelism)}
	if tracePrefix != "" {
		args = append(args, "-trace="+tracePrefix, "-trace-phases="+strings.Join(cfg.tracePhases(), ","))
	}
	if cfg.LatencyGC {
		args = append(args, "-latency-gc-after="+strconv.Itoa(max(cfg.LatencyEvents/2, 1)))
	}
	return args
}

// reply is an engine's answer: wire's reply and, for sync and wait, the
// GC's CPU over the span measured.
type reply struct {
	wire.Reply
	report.GCReply
}

// startProc starts exe with args, its standard error going to logName in
// logDir.
func startProc(exe string, args, env []string, logDir, logName string) (*proc, error) {
	logf, err := os.Create(filepath.Join(logDir, logName))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = logf
	in, err := cmd.StdinPipe()
	if err != nil {
		logf.Close()
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		logf.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 256<<20) // latency replies carry every sample
	return &proc{cmd: cmd, in: in, out: sc, logf: logf}, nil
}

// call sends one command and reads its reply.
func (p *proc) call(c wire.Command) (reply, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return reply{}, err
	}
	if _, err := p.in.Write(append(b, '\n')); err != nil {
		return reply{}, fmt.Errorf("harness: send %s: %w", c.Op, err)
	}
	if !p.out.Scan() {
		return reply{}, fmt.Errorf("harness: no reply to %s (see %s): %w", c.Op, p.logf.Name(), errOr(p.out.Err(), io.ErrUnexpectedEOF))
	}
	var r reply
	if err := json.Unmarshal(p.out.Bytes(), &r); err != nil {
		return r, fmt.Errorf("harness: bad reply to %s: %w", c.Op, err)
	}
	if r.Err != "" {
		return r, fmt.Errorf("harness: %s: %s", c.Op, r.Err)
	}
	return r, nil
}

func errOr(err, def error) error {
	if err != nil {
		return err
	}
	return def
}

// finish asks the engine to exit and waits for it, killing it after grace.
// It returns the process's total CPU time.
func (p *proc) finish(grace time.Duration) (time.Duration, error) {
	_, callErr := p.call(wire.Command{Op: "exit"})
	p.in.Close()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(grace):
		p.cmd.Process.Kill()
		err = errors.Join(errors.New("harness: engine did not exit in time; killed"), <-done)
	}
	p.logf.Close()
	var cpu time.Duration
	if ps := p.cmd.ProcessState; ps != nil {
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	return cpu, errors.Join(callErr, err)
}

// kill ends the process at once (after a failure) and waits for it.
func (p *proc) kill() {
	p.in.Close()
	p.cmd.Process.Kill()
	p.cmd.Wait()
	p.logf.Close()
}
