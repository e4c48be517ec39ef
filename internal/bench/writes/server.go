package writes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/kwatch/kwatch/internal/rig/sim"
)

// ServeFlag is the flag of the test binary that makes it the server
// process: TestMain sees it and calls ServeChild instead of running tests.
const ServeFlag = "writes.serve-sim"

// ServeChild is the server process: it serves a simulator on a loopback
// port, writes the base URL as the first line of out, and serves until in
// reaches its end (the parent closed it or exited). It returns the
// process's exit code.
func ServeChild(in io.Reader, out io.Writer) int {
	if err := serveChild(in, out); err != nil {
		fmt.Fprintln(os.Stderr, "writes: server process:", err)
		return 1
	}
	return 0
}

func serveChild(in io.Reader, out io.Writer) error {
	srv, err := sim.New(sim.Options{})
	if err != nil {
		return err
	}
	if err := srv.EnsureNamespace(Namespace); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ctx, ln) }()
	if _, err := fmt.Fprintln(out, "http://"+ln.Addr().String()); err != nil {
		cancel()
		<-errc
		return err
	}
	stdin := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, in) // the parent never writes: this waits for EOF
		close(stdin)
	}()
	select {
	case <-stdin:
		cancel()
		return <-errc
	case err := <-errc: // Serve ended on its own: nothing serves the benchmarks
		return errors.Join(errors.New("serve ended before the parent closed stdin"), err)
	}
}

// Server is the server process as the benchmarks see it.
type Server struct {
	// URL is the simulator's base URL, "http://127.0.0.1:port".
	URL   string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	// exit receives Wait's result once; Stop and a failed start read it.
	exit chan error
}

// StartServer starts exe (the test binary) with ServeFlag and waits, at
// most a minute, for the URL it serves.
func StartServer(exe string) (*Server, error) {
	cmd := exec.Command(exe, "-"+ServeFlag)
	cmd.Stderr = os.Stderr
	first := &firstLine{line: make(chan string, 1)}
	cmd.Stdout = first // exec copies into it; Wait waits for the copy
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("writes: starting the server process: %w", err)
	}
	s := &Server{cmd: cmd, stdin: stdin, exit: make(chan error, 1)}
	go func() { s.exit <- cmd.Wait() }()
	select {
	case s.URL = <-first.line:
	case err := <-s.exit:
		return nil, fmt.Errorf("writes: the server process ended before serving: %v", err)
	case <-time.After(time.Minute):
	}
	if !strings.HasPrefix(s.URL, "http://") {
		got := s.URL
		_ = s.Stop()
		return nil, fmt.Errorf("writes: the server process wrote %q, not its URL", got)
	}
	return s, nil
}

// Stop closes the server process's stdin, which ends it, and waits for it.
func (s *Server) Stop() error {
	_ = s.stdin.Close()
	select {
	case err := <-s.exit:
		return err
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		return errors.Join(errors.New("writes: the server process did not stop within 30s"), <-s.exit)
	}
}

// firstLine sends the first line written to it on line and copies the
// rest to stderr. Only exec's copying goroutine writes to it.
type firstLine struct {
	buf  []byte
	sent bool
	line chan string // buffered (1): Write never waits for the reader
}

func (f *firstLine) Write(p []byte) (int, error) {
	if f.sent {
		return os.Stderr.Write(p)
	}
	f.buf = append(f.buf, p...)
	i := bytes.IndexByte(f.buf, '\n')
	if i < 0 {
		return len(p), nil
	}
	f.sent = true
	f.line <- strings.TrimSpace(string(f.buf[:i]))
	if rest := f.buf[i+1:]; len(rest) > 0 {
		_, _ = os.Stderr.Write(rest)
	}
	return len(p), nil
}
