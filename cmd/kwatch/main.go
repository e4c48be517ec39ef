package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kwatch/kwatch/internal/termtext"
	"github.com/kwatch/kwatch/kube"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// After the first signal, a second one kills the process at once.
	context.AfterFunc(ctx, stop)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Exit statuses.
const (
	exitOK    = 0
	exitError = 1 // the command failed: no cluster, refused, unreachable, ...
	exitUsage = 2 // bad flags or arguments
)

// env is what a command needs from the process: its output streams and
// whether they are terminals. Tests call run with plain buffers.
type env struct {
	stdout, stderr io.Writer
	outTTY, errTTY bool
	getenv         func(string) string
	// status is the reconnecting line on stderr (drawn only on a
	// terminal); errWidth is stderr's width in columns, 0 if unknown.
	status   *statusLine
	errWidth func() int
}

// run is the whole program; it returns the exit status. ctx ends on
// SIGINT or SIGTERM, which is a normal end (status 0).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	e := &env{stdout: stdout, stderr: stderr, outTTY: isTerminal(stdout), errTTY: isTerminal(stderr), getenv: os.Getenv}
	e.status = &statusLine{w: stderr, tty: e.errTTY}
	e.errWidth = func() int { return terminalWidth(stderr) }
	if e.outTTY && e.errTTY {
		e.stdout = statusClearing{w: stdout, status: e.status}
	}
	root := newRootCommand(e)
	root.SetArgs(withGetShortcut(root, args))
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	printErrors(stderr, err, "kwatch: ")
	if isUsage(err) {
		return exitUsage
	}
	return exitError
}

// newRootCommand builds the command tree: get (also reached as
// "kwatch RESOURCE"), sim, version, completion and help. Errors are
// printed once, by run, and usage only on request.
func newRootCommand(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:           "kwatch",
		Short:         "List and watch Kubernetes resources, like kubectl get -w that never gives up",
		Long:          mainHelp,
		Version:       versionString(),
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmd.Help()
		},
		// "kwatch <TAB>" offers resource types beside the commands, since
		// "kwatch TYPE" is get's shortcut.
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return completeGetArgs(cmd.Context(), e, &getOptions{}, args, toComplete)
		},
	}
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetHelpTemplate(helpTemplate)
	root.SetUsageTemplate(usageTemplate)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return explainFlagError(err) })
	root.AddCommand(newGetCommand(e), newSimCommand(e), newVersionCommand(e))
	root.SetHelpCommand(newHelpCommand(root))
	// Added now rather than at Execute, so that withGetShortcut sees
	// "completion" as a command, not a resource type.
	root.InitDefaultCompletionCmd()
	return root
}

func newVersionCommand(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprintln(e.stdout, versionString())
			return nil
		},
	}
}

// newHelpCommand is "kwatch help [COMMAND]": cobra's, except that an
// unknown topic is a usage error rather than the main help.
func newHelpCommand(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		RunE: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return root.Help()
			}
			cmd, _, err := root.Find(args)
			if err != nil || cmd == root {
				return usagef("no help for %q: try \"kwatch help get\" or \"kwatch help sim\"", strings.Join(args, " "))
			}
			return cmd.Help()
		},
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			var names []cobra.Completion
			for _, c := range root.Commands() {
				if c.IsAvailableCommand() {
					names = append(names, c.Name())
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
	}
}

// withGetShortcut makes "kwatch pods ..." mean "kwatch get pods ...": when
// the first argument that is not a flag (or a flag's value) names no
// command, "get" is put in front. "kwatch -A get pods", with flags before
// the command, becomes "kwatch get -A pods". Shell completion
// ("kwatch __complete pods ...") is rewritten the same way.
func withGetShortcut(root *cobra.Command, args []string) []string {
	if len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd) {
		if len(args) == 2 {
			return args // "kwatch <TAB>": the root completes commands and types
		}
		return append([]string{args[0]}, withGetShortcut(root, args[1:])...)
	}
	if len(args) == 0 {
		return args
	}
	get, _, _ := root.Find([]string{"get"})
	i := firstPositional(get, args)
	switch {
	case i < 0:
		if onlyRootFlags(args) {
			return args // "kwatch -h", "kwatch --version"
		}
		return append([]string{"get"}, args...) // "kwatch -n demo": get says what is missing
	case isCommand(root, args[i]):
		if i == 0 {
			return args
		}
		// Flags before the command: move the command to the front.
		out := append([]string{args[i]}, args[:i]...)
		return append(out, args[i+1:]...)
	}
	return append([]string{"get"}, args...)
}

func isHelpFlag(a string) bool { return a == "-h" || a == "--help" }

// onlyRootFlags: every argument is one the root command itself answers.
func onlyRootFlags(args []string) bool {
	for _, a := range args {
		if !isHelpFlag(a) && a != "--version" {
			return false
		}
	}
	return true
}

func isCommand(root *cobra.Command, name string) bool {
	if name == "help" {
		return true
	}
	for _, c := range root.Commands() {
		if c.Name() == name || c.HasAlias(name) {
			return true
		}
	}
	return false
}

// firstPositional returns the index of the first argument of args that
// is neither a flag of cmd nor a flag's value, or -1.
func firstPositional(cmd *cobra.Command, args []string) int {
	fs := cmd.Flags()
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			if i+1 < len(args) {
				return i + 1
			}
			return -1
		case strings.HasPrefix(a, "--"):
			name, _, hasValue := strings.Cut(a[2:], "=")
			if f := fs.Lookup(name); f != nil && !hasValue && f.NoOptDefVal == "" {
				i++ // "--namespace demo"
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			if !strings.Contains(a, "=") && shortValueAt(fs, a) == len(a) {
				i++ // "-n demo", "-Ao wide"; not "-ndemo" or "-Aw"
			}
		default:
			return i
		}
	}
	return -1
}

// shortValueAt returns where, in a group of short flags like "-Aw" or
// "-ndemo", the value of the first flag that takes one starts: the index
// after its letter, so len(a) when the value is the next argument. It is
// -1 when no flag of the group takes a value.
func shortValueAt(fs *pflag.FlagSet, a string) int {
	for j := 1; j < len(a); j++ {
		if f := fs.ShorthandLookup(a[j : j+1]); f != nil && f.NoOptDefVal == "" {
			return j + 1
		}
	}
	return -1
}

// oneLine keeps an error message on one line: server messages may hold
// newlines, and a reader wants one line per failure. Every message from a
// server or a plugin reaches stderr, /readyz and the live view through it,
// so it also escapes what could drive a terminal (see termtext).
func oneLine(s string) string {
	return termtext.Escape(strings.Join(strings.Fields(s), " "))
}

func versionString() string {
	v := "kwatch " + kube.Version + " (" + runtime.Version()
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += ", commit " + s.Value[:12]
			}
		}
	}
	return v + ", " + runtime.GOOS + "/" + runtime.GOARCH + ")"
}

const mainHelp = `kwatch lists and watches Kubernetes resources, like "kubectl get -w" that never
gives up: it shows the initial state, then every change, and survives
disconnects, expired resourceVersions (410) and API server restarts by itself.

Usage:
  kwatch [get] RESOURCE [NAME] [flags]   list, then watch and print changes
  kwatch sim [flags]                     serve a simulated cluster for other clients
  kwatch completion SHELL                shell completion (bash, zsh, fish, powershell)
  kwatch version                         print the version

Examples:
  kwatch pods                            pods of the current namespace, then changes
  kwatch pods -A -o wide                 every namespace, with IP and node
  kwatch get deploy -n kube-system       any resource: name, plural, short name or kind
  kwatch pods -l app=web --watch=false   list once and exit
  kwatch pods -o json --output-watch-events | jq .type
  kwatch pods --sim                      against a built-in simulated cluster
  kwatch sim --addr 127.0.0.1:8080       serve the simulated cluster

Run "kwatch help get" or "kwatch help sim" for the flags.
`

// helpTemplate prints a command's Long text (which holds its usage and
// examples), then its flags; the root command's Long says everything.
const helpTemplate = `{{with .Long}}{{.}}{{end}}{{if and .HasParent .HasAvailableLocalFlags}}
Flags:
{{.LocalFlags.FlagUsages}}{{end}}`

const usageTemplate = `Usage:
  {{.UseLine}}
{{if .HasAvailableLocalFlags}}
Flags:
{{.LocalFlags.FlagUsages}}{{end}}`
