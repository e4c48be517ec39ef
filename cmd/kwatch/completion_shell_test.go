package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/kwatch/kwatch/internal/rig/sim"
)

// shellPath finds a shell for the completion tests. Where CI is set they
// must run, so a missing shell fails them (make shells installs bash-completion,
// zsh and fish); elsewhere they skip.
func shellPath(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if _, ci := os.LookupEnv("CI"); ci {
		t.Fatalf("%s not found on PATH (%v), and CI is set, so its completion test must run: make shells installs it", name, err)
	}
	t.Skipf("%s not found on PATH (%v): its completion test needs it (make shells installs it)", name, err)
	return ""
}

// bashCompletion is the bash-completion package's main script, which
// cobra's bash completion calls into.
const bashCompletion = "/usr/share/bash-completion/bash_completion"

// TestCompletionInShells types a command line and Tab into real bash (with
// bash-completion), zsh and fish, each in tmux with kwatch's completion
// script loaded, and reads the completed line off the screen: a resource
// type, a type after a comma, an object name and a namespace, each the
// only candidate starting with the word.
func TestCompletionInShells(t *testing.T) {
	_, kc := demo(t, sim.Options{})
	bin := filepath.Dir(binary)
	shells := []struct {
		name, cmd, setup string
	}{
		{"bash", "bash --norc --noprofile", "PS1='$ '; source " + bashCompletion + "; source <(kwatch completion bash)"},
		{"zsh", "zsh -f", "PROMPT='$ '; autoload -U compinit; compinit -u; source <(kwatch completion zsh)"},
		{"fish", "fish --no-config", "function fish_prompt; echo '$ '; end; kwatch completion fish | source"},
	}
	lines := []struct{ typed, want string }{
		{"kwatch get de", `kwatch get deployments\.apps`},
		// bash quotes the comma, as it does for kubectl.
		{"kwatch get pods,dep", `kwatch get pods\\?,deployments\.apps`},
		{"kwatch pods -n demo db", `kwatch pods -n demo db-0`},
		{"kwatch get pods -n ot", `kwatch get pods -n other`},
	}
	for _, sh := range shells {
		t.Run(sh.name, func(t *testing.T) {
			shellPath(t, sh.name)
			if sh.name == "bash" {
				if _, err := os.Stat(bashCompletion); err != nil {
					if _, ci := os.LookupEnv("CI"); ci {
						t.Fatalf("bash-completion is missing (%v), and CI is set: make shells installs it", err)
					}
					t.Skipf("bash-completion is missing (%v): make shells installs it", err)
				}
			}
			env := testEnv(t, "KUBECONFIG="+kc, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "TERM=tmux-256color")
			p := startPaneScript(t, env, sh.cmd)
			p.keys(sh.setup, "Enter")
			p.until(sh.name+": the prompt", matches(`^\$ ?$`))
			for _, l := range lines {
				p.keys("-l", l.typed)
				// The shell has read the line before Tab comes.
				typed := regexp.MustCompile(`(?m)^\$ ` + regexp.QuoteMeta(l.typed))
				p.until(sh.name+": "+l.typed+" typed", typed.MatchString)
				p.keys("Tab")
				re := regexp.MustCompile(`(?m)^\$ ` + l.want + `\b`)
				p.until(sh.name+": "+l.typed+" completed", re.MatchString)
				clearLine(t, p, sh.name)
			}
		})
	}
}

// clearLine empties the command line (C-u: to its start, where the cursor
// is at the end) and waits for the empty prompt. A shell busy with its
// completion may drop the key (fish on a loaded machine did), so it is sent
// again until the prompt is empty, within wait.
func clearLine(t *testing.T, p *pane, shell string) {
	t.Helper()
	empty := regexp.MustCompile(`(?m)^\$ ?$`)
	deadline := time.Now().Add(wait)
	for {
		p.keys("C-u")
		for again := time.Now().Add(2 * time.Second); time.Now().Before(again); {
			if empty.MatchString(p.screen()) {
				return
			}
			time.Sleep(50 * time.Millisecond) // how soon a change is seen, not a timing assumption
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the line is not cleared within %s; the screen:\n%s", shell, wait, p.screen())
		}
	}
}
