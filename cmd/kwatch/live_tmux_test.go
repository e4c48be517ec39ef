package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/sim"
)

// The live view's end-to-end tests run kwatch in a real terminal, tmux,
// and read the screen as a person would (capture-pane), typing with
// send-keys. Every wait polls the screen for what it expects, bounded by
// wait: how fast the screen changes is never asserted.

// tmuxPath finds tmux. Where CI is set the test must run, so a missing
// tmux fails it (make tmux installs it); elsewhere the test skips.
func tmuxPath(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("tmux")
	if err == nil {
		return path
	}
	if _, ci := os.LookupEnv("CI"); ci {
		t.Fatalf("tmux not found on PATH (%v), and CI is set, so the live view's terminal test must run: make tmux installs it", err)
	}
	t.Skipf("tmux not found on PATH (%v): the live view's terminal test needs it (make tmux installs it)", err)
	return ""
}

// pane is one tmux session of a fixed size running one command, on a
// server of its own that the test's cleanup ends.
type pane struct {
	t          *testing.T
	tmux, sock string
	env        []string
}

const (
	paneWidth  = 120
	paneHeight = 30
)

// startPane runs args (the binary's arguments) in a new tmux session,
// followed by a line with their exit status. The pane stays after the
// command exits, so the test can read that line.
func startPane(t *testing.T, env []string, args ...string) *pane {
	t.Helper()
	quoted := []string{shellQuote(binary)}
	for _, a := range args {
		quoted = append(quoted, shellQuote(a))
	}
	return startPaneScript(t, env, strings.Join(quoted, " ")+`; echo "kwatch exited $?"`)
}

// startPaneScript runs a sh script in a new tmux session (see startPane).
func startPaneScript(t *testing.T, env []string, script string) *pane {
	t.Helper()
	dir := t.TempDir()
	conf := filepath.Join(dir, "tmux.conf")
	require.NoError(t, os.WriteFile(conf, []byte("set -g remain-on-exit on\nset -g status off\nset -g default-terminal tmux-256color\n"), 0o600))
	sock := filepath.Join(dir, "sock")
	marker := paneMarker + "=" + sock
	p := &pane{t: t, tmux: tmuxPath(t), sock: sock, env: append(withoutTMUX(env), marker)}
	p.run("-f", conf, "new-session", "-d", "-s", "live", "-x", strconv.Itoa(paneWidth), "-y", strconv.Itoa(paneHeight),
		"sh", "-c", script)
	t.Cleanup(func() {
		cmd := exec.Command(p.tmux, "-S", p.sock, "kill-server")
		cmd.Env = p.env
		_ = cmd.Run() // already gone if the test ended it
		// kill-server returns before the pane's processes have gone, and a
		// shell hung up writes its history into the test's home on the way
		// out; the temporary directories are removed only after them.
		awaitGone(t, marker)
	})
	return p
}

// paneMarker is the variable in the environment of every process of a
// pane's tmux server, by which its cleanup finds them.
const paneMarker = "KWATCH_TEST_PANE"

// withoutTMUX keeps a test run inside tmux from looking nested.
func withoutTMUX(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "TMUX=") && !strings.HasPrefix(kv, "TMUX_PANE=") {
			out = append(out, kv)
		}
	}
	return out
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// run runs a tmux command on the pane's server and returns its output.
func (p *pane) run(args ...string) string {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.tmux, append([]string{"-S", p.sock}, args...)...)
	cmd.Env = p.env
	out, err := cmd.CombinedOutput()
	require.NoError(p.t, err, "tmux %q: %s", args, out)
	return string(out)
}

// screen is what the pane shows now.
func (p *pane) screen() string { return p.run("capture-pane", "-p", "-t", "live") }

// history is everything the pane printed, the lines scrolled off the top
// included.
func (p *pane) history() string { return p.run("capture-pane", "-p", "-S", "-", "-t", "live") }

// keys types keys, in tmux's names ("Enter", "Escape", "C-c") or as text.
func (p *pane) keys(keys ...string) { p.run(append([]string{"send-keys", "-t", "live"}, keys...)...) }

// until polls the screen until ok holds and returns it; it fails after
// wait, showing the last screen.
func (p *pane) until(what string, ok func(screen string) bool) string {
	p.t.Helper()
	deadline := time.Now().Add(wait)
	for {
		s := p.screen()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("%s: not on screen within %s; the screen:\n%s", what, wait, s)
		}
		time.Sleep(50 * time.Millisecond) // how soon a change is seen, not a timing assumption
	}
}

func matches(patterns ...string) func(string) bool {
	return func(s string) bool {
		for _, p := range patterns {
			if !regexp.MustCompile(`(?m)` + p).MatchString(s) {
				return false
			}
		}
		return true
	}
}

func lacks(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// exited waits for the command to end and checks that it ended with
// status 0 and left the terminal as it found it: the alternate screen
// closed, the table gone.
func (p *pane) exited() {
	p.t.Helper()
	p.until("the pane's end", func(string) bool {
		return strings.TrimSpace(p.run("display-message", "-p", "-t", "live", "#{pane_dead}")) == "1"
	})
	screen, all := p.screen(), p.history()
	require.Contains(p.t, all, "kwatch exited 0\n", "the pane's history:\n%s", all)
	require.NotContains(p.t, screen, "q quit", "the live view is gone from the terminal")
	require.Equal(p.t, "0", strings.TrimSpace(p.run("display-message", "-p", "-t", "live", "#{alternate_on}")),
		"the alternate screen is closed")
}

func TestLiveSimFirstScreenAndCtrlC(t *testing.T) {
	p := startPane(t, testEnv(t), "get", "pods", "--sim", "--sim-pods", "25", "--sim-namespaces", "3", "--sim-rate", "0", "--live")
	screen := p.until("the simulator's 25 pods", matches(`^kwatch · pods · all namespaces · 25$`, `^● watching`,
		`^NAMESPACE +NAME +READY +STATUS +RESTARTS +AGE`, `^ns-002 +\S+ +\d/\d `))
	lines := strings.Split(screen, "\n")
	total := 0
	for _, c := range regexp.MustCompile(`(\S+) (\d+)`).FindAllStringSubmatch(lines[2], -1) {
		n, _ := strconv.Atoi(c[2])
		total += n
		require.Regexp(t, `(?m)^ns-\d+ +\S+ +\d/\d +`+regexp.QuoteMeta(c[1])+` `, screen, "a row shows each counted status")
	}
	require.Equal(t, 25, total, "the counts add up to the pods: %q", lines[2])
	p.keys("C-c")
	p.exited()
}

func TestLiveChangesFilterNamespaceAndQuit(t *testing.T) {
	h, kc := demo(t, sim.Options{})
	p := startPane(t, testEnv(t), "pods", "-A", "--live", "--kubeconfig", kc)
	p.until("the first screen", matches(`^kwatch · pods · all namespaces · 4$`, `^Running 3  Pending 1$`,
		`^demo +db-0 +0/2 +Pending `, `^demo +web-1 `, `^demo +web-2 +\S+ +Running +3 `, `^other +elsewhere `))

	colours := p.run("capture-pane", "-p", "-e", "-t", "live")
	require.Regexp(t, `(?m)^demo +db-0 +0/2 +\x1b\[33mPending`, colours, "Pending is yellow")
	require.Regexp(t, `(?m)^demo +web-1 +2/2 +\x1b\[32mRunning`, colours, "Running is green")
	require.Regexp(t, `(?m)^\x1b\[7mNAMESPACE +NAME`, colours, "the header is reversed")

	_, err := h.Server.PutPod(sim.Pod{Namespace: "demo", Name: "web-3"})
	require.NoError(t, err)
	p.until("an added pod", matches(`^demo +web-3 +0/2 +Pending +0 `, `^Running 3  Pending 2$`, ` · 5$`))
	_, err = h.Server.Delete("pods", "demo", "db-0")
	require.NoError(t, err)
	p.until("a deleted pod gone", func(s string) bool { return lacks(s, "db-0") && matches(`^Running 3  Pending 1$`)(s) })

	p.keys("/", "web")
	p.until("the filter narrowing the rows", func(s string) bool {
		return matches(`filter "web" · 3 of 4`, `^demo +web-1 `, `^demo +web-2 `, `^demo +web-3 `, `^/web█`)(s) &&
			lacks(s, "elsewhere")
	})
	p.keys("Enter")
	p.until("the filter kept", matches(`filter "web" · 3 of 4`, `q quit · Esc shows all$`))
	p.keys("Escape")
	p.until("every row again", matches(`^other +elsewhere `, `^kwatch · pods · all namespaces · 4$`))

	p.keys("s")
	p.until("sorted by status, pending first", func(s string) bool {
		lines := strings.Split(s, "\n")
		return len(lines) > 4 && matches(`^kwatch · pods · all namespaces · by status · 4$`)(s) &&
			regexp.MustCompile(`^demo +web-3 +0/2 +Pending `).MatchString(lines[4])
	})
	p.keys("s", "s")
	p.until("sorted by name again", matches(`^kwatch · pods · all namespaces · 4$`))

	p.keys("n")
	p.until("the namespaces seen", matches(`^▸ all namespaces \(4\)$`, `^  demo \(3\)$`, `^  other \(1\)$`))
	p.keys("Down", "Down", "Enter")
	p.until("one namespace", func(s string) bool {
		return matches(`^kwatch · pods · namespace other · 1 of 4$`, `^NAME +READY +STATUS`, `^elsewhere +`)(s) && lacks(s, "web-")
	})

	// A smaller terminal: redrawn to fit, the keys' hint on the last line.
	p.run("resize-window", "-t", "live", "-x", "60", "-y", "8")
	p.until("the table redrawn at 60x8", func(s string) bool {
		lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
		return len(lines) == 8 && strings.HasPrefix(lines[7], "/ filter · n namespace") &&
			matches(`^elsewhere +`)(s) && utf8.RuneCountInString(lines[7]) == 60
	})

	p.keys("q")
	p.exited()
}

// TestLiveReconnecting stops the server under the live view and starts
// another on its address: the connection line says reconnecting, with the
// last error and the time the table dates from, then watching again after
// a relist (the new server knows nothing of the old one's
// resourceVersions), and the table becomes the new server's.
func TestLiveReconnecting(t *testing.T) {
	oldSrv, err := sim.New(sim.Options{})
	require.NoError(t, err)
	old := serveAt(t, oldSrv, "127.0.0.1:0")
	putPods(t, oldSrv, "keep", "old", 3, 0)
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(kc, sim.KubeconfigBytes("http://"+old.addr, nil, ""), 0o600))

	p := startPane(t, testEnv(t), "pods", "-A", "--live", "--kubeconfig", kc)
	p.until("watching the old server", matches(`^● watching`, `^keep +old-002 `))
	require.NoError(t, old.stop())
	p.until("reconnecting", matches(`^○ reconnecting since \d\d:\d\d:\d\d \(\S+\) · table as of \d\d:\d\d:\d\d · last error: \S`,
		`^keep +old-002 `))

	newSrv, err := sim.New(sim.Options{})
	require.NoError(t, err)
	putPods(t, newSrv, "keep", "new", 2, 0)
	serveAt(t, newSrv, old.addr)
	p.until("watching the new server", func(s string) bool {
		return matches(`^● watching.* · [1-9]\d* relists`, `^keep +new-001 `, ` · 2$`)(s) && lacks(s, "old-00")
	})
	p.keys("q")
	p.exited()
}

// TestLiveChangedCellsAndChangesPane: a change marks the cells that
// changed (bold and underlined) for a few seconds, then they are plain
// again; Enter on a row opens the pane of its last changes, the same
// fields --diff prints; Esc goes back to the table.
func TestLiveChangedCellsAndChangesPane(t *testing.T) {
	h, kc := demo(t, sim.Options{})
	p := startPane(t, testEnv(t), "pods", "-A", "--live", "--kubeconfig", kc)
	p.until("the first screen", matches(`^demo +web-2 +\S+ +Running +3 `, `^other +elsewhere `))
	_, err := h.Server.PutPod(sim.Pod{Namespace: "demo", Name: "web-2", NodeName: "node-2", Ready: true, Restarts: 4,
		Labels: map[string]string{"app": "web"}})
	require.NoError(t, err)
	colours := func() string { return p.run("capture-pane", "-p", "-e", "-t", "live") }
	// The RESTARTS cell is marked: underlined (SGR 4) up to its text.
	marked := regexp.MustCompile(`(?m)^(\x1b\[[0-9;]*m)*demo +web-2 .*\x1b\[[0-9;]*4[0-9;]*m(\x1b\[[0-9;]*m)*4(\x1b| )`)
	deadline := time.Now().Add(wait)
	for s := colours(); !marked.MatchString(s); s = colours() {
		if time.Now().After(deadline) {
			t.Fatalf("the changed cell is not marked within %s:\n%q", wait, s)
		}
		time.Sleep(50 * time.Millisecond) // how soon a change is seen, not a timing assumption
	}
	for s := colours(); marked.MatchString(s) || !strings.Contains(s, "web-2"); s = colours() {
		if time.Now().After(deadline) {
			t.Fatalf("the mark does not go within %s:\n%q", wait, s)
		}
		time.Sleep(50 * time.Millisecond)
	}

	p.keys("Down", "Down") // db-0, web-1, web-2
	p.until("web-2 selected", matches(`^demo +web-2 `))
	p.keys("Enter")
	p.until("the changes pane", matches(`^CHANGES OF demo/web-2$`, `^\d\d:\d\d:\d\d  MODIFIED$`,
		`^    status\.containerStatuses\[name=\S+\]\.restartCount: 3 → 4$`, `Esc back`))
	p.keys("Escape")
	p.until("the table again", matches(`^NAMESPACE +NAME +READY`, `^demo +web-2 +\S+ +Running +4 `))
	p.keys("q")
	p.exited()
}
