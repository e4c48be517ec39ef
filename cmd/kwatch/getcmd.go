package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kwatch/kwatch/kube"
)

// newGetCommand is "kwatch get TYPE [NAME...]", which "kwatch TYPE ..."
// also reaches.
func newGetCommand(e *env) *cobra.Command {
	o := &getOptions{}
	cmd := &cobra.Command{
		Use:   "get TYPE [NAME...] [flags]",
		Short: "List a resource, then watch it and print every change",
		Long:  getLong,
		// Flags and arguments are checked together in validate, which
		// gives kwatch's messages rather than cobra's.
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(args, cmd.Flags().Changed); err != nil {
				return err
			}
			return runGet(cmd.Context(), e, o)
		},
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return completeGetArgs(cmd.Context(), e, o, args, toComplete)
		},
	}
	addGetFlags(cmd.Flags(), o)
	cmd.Flags().SortFlags = false
	registerGetCompletions(cmd, e, o)
	return cmd
}

// parseGetArgs parses the get command's arguments as the command line
// does, without running it.
func parseGetArgs(args []string, e *env) (*getOptions, error) {
	o := &getOptions{}
	fs := pflag.NewFlagSet("get", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addGetFlags(fs, o)
	if err := fs.Parse(args); err != nil {
		return nil, explainFlagError(err)
	}
	_ = e
	return o, o.validate(fs.Args(), fs.Changed)
}

// notFoundError is a named object the server does not have, in kubectl's
// words: `Error from server (NotFound): pods "x" not found`.
type notFoundError struct{ serverError }

func (e *notFoundError) Unwrap() error { return &e.serverError }

// notFound is kubectl's line for a 404 on a named object: the server's
// message ("deployments.apps "x" not found"), or one in its form.
func notFound(err error, res kube.Resource, name string) *notFoundError {
	msg := res.Resource
	if res.Group != "" {
		msg += "." + res.Group
	}
	msg += ` "` + name + `" not found`
	if se, ok := kube.AsStatus(err); ok && strings.HasSuffix(se.Message, "not found") {
		msg = se.Message
	}
	return &notFoundError{serverError{msg: "Error from server (NotFound): " + msg}}
}

// separated writes a blank line before its first byte when something was
// written before it: kubectl's blank line between the tables of two
// resource types, printed only when both have rows.
type separated struct {
	w      io.Writer
	before *countingWriter
	once   sync.Once
}

func (s *separated) Write(p []byte) (int, error) {
	var err error
	s.once.Do(func() {
		if s.before.written() > 0 {
			_, err = s.w.Write([]byte("\n"))
		}
	})
	if err != nil {
		return 0, err
	}
	return s.w.Write(p)
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w  io.Writer
	mu sync.Mutex
	n  int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.mu.Lock()
	c.n += int64(n)
	c.mu.Unlock()
	return n, err
}

func (c *countingWriter) written() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// printErrors prints err's lines: each joined error on a line of its own.
func printErrors(w io.Writer, err error, prefix string) {
	var b bytes.Buffer
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) {
		for _, e := range joined.Unwrap() {
			printErrors(&b, e, prefix)
		}
		_, _ = w.Write(b.Bytes())
		return
	}
	var (
		se *serverError
		ue *usageError
		re *kube.UnknownResourceError
	)
	switch {
	case errors.As(err, &se):
		prefix = ""
	case errors.As(err, &ue) && ue.kubectl, errors.As(err, &re):
		prefix = kubectlPrefix // where kubectl has the words, its prefix too
	}
	_, _ = io.WriteString(w, prefix+oneLine(err.Error())+"\n")
}

// completeGetArgs completes the get command's arguments: resource types
// from the server's discovery first, then object names of that type.
func completeGetArgs(ctx context.Context, e *env, o *getOptions, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if ctx == nil {
		ctx = context.Background()
	}
	if len(args) == 0 {
		types, err := completeTypes(ctx, e, o)
		if err != nil {
			return nil, cobra.ShellCompDirectiveError | cobra.ShellCompDirectiveNoFileComp
		}
		// "pods,svc": complete the part after the last comma.
		done, part := "", toComplete
		if i := strings.LastIndex(toComplete, ","); i >= 0 {
			done, part = toComplete[:i+1], toComplete[i+1:]
		}
		types = withPrefix(types, part)
		for j := range types {
			types[j] = done + types[j]
		}
		return types, cobra.ShellCompDirectiveNoFileComp
	}
	if strings.Contains(args[0], "/") || strings.Contains(args[0], ",") {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	names, err := completeNames(ctx, e, o, args[0])
	if err != nil {
		return nil, cobra.ShellCompDirectiveError | cobra.ShellCompDirectiveNoFileComp
	}
	return withPrefix(names, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// withPrefix keeps the candidates that start with prefix, as kubectl's
// completions do: the shell is given only what can complete the word.
func withPrefix(list []string, prefix string) []string {
	out := list[:0:0]
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			out = append(out, s)
		}
	}
	return out
}

// registerGetCompletions completes flag values that name things on the
// server (namespaces) or in the kubeconfig.
func registerGetCompletions(cmd *cobra.Command, e *env, o *getOptions) {
	_ = cmd.RegisterFlagCompletionFunc("namespace", func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		names, err := completeNames(cmd.Context(), e, o, "namespaces")
		if err != nil {
			return nil, cobra.ShellCompDirectiveError | cobra.ShellCompDirectiveNoFileComp
		}
		return withPrefix(names, toComplete), cobra.ShellCompDirectiveNoFileComp
	})
	_ = cmd.RegisterFlagCompletionFunc("output", func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return withPrefix([]string{"wide", "json", "yaml", "name", "jsonpath=", "jsonpath-file=", "custom-columns=", "custom-columns-file="}, toComplete),
			cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	})
}

// mergeRequests joins requests whose types name one resource ("pod/a
// pods/b" is one table of pods, as kubectl prints it). It asks discovery,
// so it runs only when there are several requests and a server to ask
// (--sim starts its cluster later, per request).
func mergeRequests(ctx context.Context, e *env, o *getOptions) error {
	if len(o.requests) < 2 || o.sim {
		return nil
	}
	cfg, err := loadConfig(o.conn, o.namespace, e)
	if err != nil {
		return err
	}
	c, err := newClient(cfg, e, o)
	if err != nil {
		return err
	}
	ctx, cancel := withTimeout(ctx, o.requestTimeout)
	defer cancel()
	var merged []request
	var seen []kube.Resource
	for _, r := range o.requests {
		res, err := resolve(ctx, c, r.resource)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(seen, func(s kube.Resource) bool { return s.Group == res.Group && s.Resource == res.Resource })
		if i < 0 {
			seen = append(seen, res)
			merged = append(merged, r)
			continue
		}
		merged[i].names = append(merged[i].names, r.names...)
	}
	o.requests = merged
	return nil
}
