package suite

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/leader"
)

// The leader case runs its kwatch candidate as a separate process, so it
// can be killed with SIGKILL as a crashed replica would be: the binary
// running the suite starts itself again with candidateEnv set, and this
// init runs the candidate instead of the tests. Its settings come in the
// environment; it prints one line per change of leadership, with the
// time read from the machine's real-time clock, the clock the test
// process reads for its own candidate too.
const candidateEnv = "KWATCH_CONFORMANCE_LEADER_CANDIDATE"

func init() {
	if os.Getenv(candidateEnv) == "1" {
		os.Exit(runCandidateProcess())
	}
}

// The election's timing on both candidates: short, so the case fits in
// about a minute on the real server.
const (
	electLease = 4 * time.Second
	electRenew = 3 * time.Second
	electRetry = 500 * time.Millisecond
)

// runCandidateProcess campaigns until SIGTERM (then releases) or SIGKILL.
// It prints "started <unix ns>" and "stopped <unix ns>" around each
// leadership and "exit <error>" last.
func runCandidateProcess() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	ca, err := base64.StdEncoding.DecodeString(os.Getenv(candidateEnv + "_CA"))
	if err != nil {
		fmt.Println("exit bad CA:", err)
		return 2
	}
	c, err := kube.NewClient(&kube.Config{Host: os.Getenv(candidateEnv + "_HOST"),
		Auth: kube.AuthConfig{BearerToken: os.Getenv(candidateEnv + "_TOKEN")}, TLS: kube.TLSConfig{CAData: ca}})
	if err != nil {
		fmt.Println("exit", err)
		return 2
	}
	e, err := leader.New(leader.Config{Client: c, Namespace: os.Getenv(candidateEnv + "_NS"),
		Name: os.Getenv(candidateEnv + "_NAME"), Identity: os.Getenv(candidateEnv + "_ID"),
		Timing: leader.Timing{LeaseDuration: electLease, RenewDeadline: electRenew, RetryPeriod: electRetry},
		Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
	if err != nil {
		fmt.Println("exit", err)
		return 2
	}
	var mu sync.Mutex // lines are whole
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Printf(format+"\n", args...)
	}
	err = e.Run(ctx, func(ctx context.Context) {
		say("started %d", time.Now().UnixNano())
		<-ctx.Done()
		say("stopped %d", time.Now().UnixNano())
	})
	say("exit %v", err)
	return 0
}

// candidateProc is a kwatch candidate process the case started.
type candidateProc struct {
	id     string
	cmd    *exec.Cmd
	exited chan struct{} // closed once the process is gone and its output read
}

// startCandidateProc starts a kwatch candidate named id for the Lease
// ns/name on cfg's server, recording its leadership on tl.
func startCandidateProc(t T, cfg *kube.Config, ns, name, id string, tl *timeline) *candidateProc {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Errorf("find the test binary: %v", err)
		t.FailNow()
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), candidateEnv+"=1", candidateEnv+"_HOST="+cfg.Host,
		candidateEnv+"_TOKEN="+cfg.Auth.BearerToken, candidateEnv+"_CA="+base64.StdEncoding.EncodeToString(cfg.TLS.CAData),
		candidateEnv+"_NS="+ns, candidateEnv+"_NAME="+name, candidateEnv+"_ID="+id)
	cmd.Stderr = io.Discard
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Errorf("candidate stdout: %v", err)
		t.FailNow()
	}
	if err := cmd.Start(); err != nil {
		t.Errorf("start candidate %s: %v", id, err)
		t.FailNow()
	}
	p := &candidateProc{id: id, cmd: cmd, exited: make(chan struct{})}
	go func() {
		defer close(p.exited)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			word, rest, _ := strings.Cut(sc.Text(), " ")
			ns, err := strconv.ParseInt(rest, 10, 64)
			switch {
			case word == "started" && err == nil:
				tl.start(id, time.Unix(0, ns))
			case word == "stopped" && err == nil:
				tl.stop(id, time.Unix(0, ns))
			case word == "exit" && rest != "<nil>":
				t.Logf("candidate %s: %s", id, sc.Text())
			}
		}
		_ = cmd.Wait()
		tl.stop(id, time.Now()) // killed while leading: it led until now at the latest
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.exited
	})
	return p
}

// kill sends sig and waits for the process to be gone. It returns when
// the signal was sent.
func (p *candidateProc) kill(sig syscall.Signal) time.Time {
	at := time.Now()
	_ = p.cmd.Process.Signal(sig)
	<-p.exited
	return at
}
