package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/testutil"
)

// wait bounds anything asynchronous: the machine is loaded and slow, and
// tests assert behaviour, never speed.
const wait = 90 * time.Second

// binary is the kwatch binary built once by TestMain.
var binary string

func TestMain(m *testing.M) {
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "kwatch-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "temp dir:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "kwatch")
	args := []string{"build", "-o", binary}
	if raceEnabled {
		args = append(args, "-race") // the binary's races fail the tests too
	}
	cmd := exec.Command("go", append(args, ".")...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building kwatch:", err)
		return 1
	}
	return m.Run()
}

// testEnv is a clean environment: no kubeconfig, no in-cluster variables,
// a home of its own, and races reported as failures.
func testEnv(t *testing.T, extra ...string) []string {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "KUBECONFIG", "HOME", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", "NO_COLOR", "GORACE":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+t.TempDir(), "GORACE=exitcode=66 halt_on_error=1")
	return append(env, extra...)
}

// result is a finished kwatch run.
type result struct {
	stdout, stderr string
	code           int
}

// kwatch runs the binary to completion (bounded by wait).
func kwatch(t *testing.T, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err, "kwatch %q", args)
	}
	require.NotEqual(t, 66, code, "kwatch %q: data race:\n%s", args, errb.String())
	return result{stdout: out.String(), stderr: errb.String(), code: code}
}

// proc is a kwatch process left running: a test reads its output as it
// comes and ends it with a signal.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdout io.Reader // the live stdout pipe, read by the test
	stderr *testutil.Buffer
	done   chan struct{} // closed when Wait returned
	once   sync.Once     // starts the goroutine that waits
	code   int
}

// start runs kwatch in the background; the test must read stdout (the pipe
// is unbuffered beyond the OS's) and call stop.
func start(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = env
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	p := &proc{t: t, cmd: cmd, stdout: stdout, stderr: &testutil.Buffer{}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = cmd.Process.Kill()
			p.startWait()
			<-p.done
		}
	})
	return p
}

// startWait reaps the process on a goroutine that ends when it exits.
func (p *proc) startWait() {
	p.once.Do(func() {
		go func() {
			err := p.cmd.Wait()
			if ee, ok := err.(*exec.ExitError); ok {
				p.code = ee.ExitCode()
			} else if err != nil {
				p.code = -1
			}
			close(p.done)
		}()
	})
}

// wait waits for the process after its stdout has been read to the end.
func (p *proc) wait() int {
	p.t.Helper()
	p.startWait()
	select {
	case <-p.done:
	case <-time.After(wait):
		p.t.Fatalf("kwatch did not exit within %s; stderr:\n%s", wait, p.stderr.String())
	}
	require.NotEqual(p.t, 66, p.code, "data race:\n%s", p.stderr.String())
	return p.code
}

// interrupt sends SIGINT, reads what is left of stdout, and returns it
// with the exit status.
func (p *proc) interrupt(lines *lineReader) (string, int) {
	p.t.Helper()
	require.NoError(p.t, p.cmd.Process.Signal(os.Interrupt))
	rest := lines.rest()
	return rest, p.wait()
}

// lineReader reads a process's stdout line by line on one goroutine and
// hands lines to the test, which waits with a bound.
type lineReader struct {
	t     *testing.T
	lines chan string
	all   *testutil.Buffer
	ended chan struct{}
}

func readLines(t *testing.T, r io.Reader) *lineReader {
	lr := &lineReader{t: t, lines: make(chan string, 1<<16), all: &testutil.Buffer{}, ended: make(chan struct{})}
	go func() { // ends at EOF, when the process exits
		defer close(lr.ended)
		br := bufio.NewReader(r)
		for {
			s, err := br.ReadString('\n')
			lr.all.Write([]byte(s))
			if err != nil {
				return
			}
			lr.lines <- strings.TrimSuffix(s, "\n")
		}
	}()
	return lr
}

// until returns the lines read until one satisfies ok.
func (lr *lineReader) until(ok func(string) bool) []string {
	lr.t.Helper()
	var got []string
	timeout := time.After(wait)
	for {
		select {
		case l := <-lr.lines:
			got = append(got, l)
			if ok(l) {
				return got
			}
		case <-lr.ended:
			lr.t.Fatalf("output ended before the expected line; got:\n%s", strings.Join(got, "\n"))
		case <-timeout:
			lr.t.Fatalf("no expected line within %s; got:\n%s", wait, strings.Join(got, "\n"))
		}
	}
}

// rest waits for the end of the output and returns all of it.
func (lr *lineReader) rest() string {
	lr.t.Helper()
	select {
	case <-lr.ended:
	case <-time.After(wait):
		lr.t.Fatalf("output did not end within %s", wait)
	}
	return lr.all.String()
}

// eventually polls cond until it holds, failing after wait. It is for state
// that tells no one when it changes, the simulator's counters or another
// process's HTTP endpoint: the interval only sets how soon a change is
// seen, and wait is a guard against a hang, not a speed requirement. State
// the test can observe change (a replica of printed events) is waited on
// directly instead (replica.waitUntil).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, wait)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
