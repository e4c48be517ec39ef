package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/kwatch/kwatch/cmd/kwatch/internal/printers"
	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

// runGet is "kwatch [get] TYPE [NAME...]": each request in turn (several
// only when listing once), as kubectl prints them: one table or list per
// resource type, a blank line between tables.
func runGet(ctx context.Context, e *env, o *getOptions) error {
	if err := mergeRequests(ctx, e, o); err != nil {
		return err
	}
	if len(o.requests) > 1 {
		o.showKind = true // kubectl names the kind when it prints several
	}
	var errs []error
	out := &countingWriter{w: e.stdout}
	shared, err := newSharedOutput(out, o)
	if err != nil {
		return err
	}
	o.shared = shared
	for i, r := range o.requests {
		o.resource, o.names = r.resource, r.names
		re := *e
		re.stdout = out
		if i > 0 && o.tableOutput() && !o.noHeaders {
			re.stdout = &separated{w: out, before: out}
		}
		o.missing = nil
		err := runRequest(ctx, &re, o)
		if ctx.Err() != nil && !isUsage(err) {
			return nil // interrupted: a normal end
		}
		errs = append(errs, o.missing...)
		var nf *notFoundError
		switch {
		case errors.Is(err, errNothingFound):
		case errors.As(err, &nf):
			errs = append(errs, err)
		case err != nil:
			return errors.Join(append(errs, err)...)
		}
	}
	if shared != nil {
		if err := shared.finish(); err != nil && !isBrokenPipe(err) {
			errs = append(errs, err)
		}
	}
	if len(o.requests) > 1 && o.emptyTypes == len(o.requests) {
		fmt.Fprintln(e.stderr, o.noneFound)
	}
	return errors.Join(errs...)
}

// runRequest lists (and watches) o.resource.
func runRequest(ctx context.Context, e *env, o *getOptions) error {
	g := newGroup(ctx)
	err := getWith(ctx, g, e, o)
	if stopErr := g.Stop(); err == nil {
		err = stopErr
	}
	return err
}

func isUsage(err error) bool {
	var ue *usageError
	return errors.As(err, &ue)
}

// getWith connects and picks the object type and printer for the output.
func getWith(ctx context.Context, g *group, e *env, o *getOptions) error {
	if o.live.enabled {
		return runLive(ctx, g, e, o)
	}
	t, err := connect(ctx, g, e, o)
	if err != nil {
		return err
	}
	out := bufio.NewWriterSize(e.stdout, 64<<10)
	table := o.output == "" || o.output == "wide"
	switch {
	case o.shared != nil: // several types, one List or one set of columns
		return watchWith(g, e, o, t, view[*printers.Raw]{sink: o.shared}, out)
	case table: // the server prints the rows, as it does for kubectl
		return watchWith(g, e, o, t, view[*printers.ServerRow]{
			sink: withDiff[*printers.ServerRow](newServerTable(g.ctx, out, e, o, t), out, e, o), form: tableForm(o.diff),
			transform: func(r *printers.ServerRow) *printers.ServerRow {
				if !o.diff {
					r.Object = nil
				}
				return r.Slim()
			},
		}, out)
	case o.format == formatJSONPath || o.format == formatCustomColumns:
		s, err := newTemplateSink(out, o)
		if err != nil {
			return err
		}
		return watchWith(g, e, o, t, view[*printers.Raw]{sink: withDiff[*printers.Raw](s, out, e, o)}, out)
	case o.output == "name" && o.diff: // the names, and what changed in the whole objects
		s := &streamSink[*printers.Raw]{stream: newStream(out, o, t), raw: func(*printers.Raw) []byte { return nil }}
		return watchWith(g, e, o, t, view[*printers.Raw]{sink: withDiff[*printers.Raw](s, out, e, o)}, out)
	case o.output == "name":
		s := &streamSink[*printers.Object]{stream: newStream(out, o, t), raw: func(*printers.Object) []byte { return nil }}
		return watchWith(g, e, o, t, view[*printers.Object]{sink: s, form: watch.FormMetadata}, out)
	default:
		s := &streamSink[*printers.Raw]{stream: newStream(out, o, t), raw: func(r *printers.Raw) []byte { return r.JSON }, patch: o.diff}
		return watchWith(g, e, o, t, view[*printers.Raw]{sink: s}, out)
	}
}

// withDiff wraps a line output's sink with --diff's lines when asked.
func withDiff[T any](s sink[T], out io.Writer, e *env, o *getOptions) sink[T] {
	if !o.diff {
		return s
	}
	return newDiffSink(s, out, e, o)
}

// view is how one output format sees objects: the type they decode into,
// the form the server sends them in (metadata may be enough, or the
// server's Table rows), and the sink that prints them.
type view[T watch.Object] struct {
	sink      sink[T]
	form      watch.Form
	transform func(T) T // may slim an object before it is cached
}

// tableForm is the form of the server's Table rows: with whole objects for
// --diff, which compares them.
func tableForm(diff bool) watch.Form {
	if diff {
		return watch.FormTableObject
	}
	return watch.FormTable
}

// connect builds the client (starting the simulated cluster for --sim),
// resolves the resource and probes the server.
func connect(ctx context.Context, g *group, e *env, o *getOptions) (*target, error) {
	var cfg *kube.Config
	var err error
	if o.sim {
		cfg, err = startSim(ctx, g, o)
		if o.namespace == "" {
			// The simulated pods live in several namespaces; show them all.
			o.allNamespaces = true
		}
	} else {
		cfg, err = loadConfig(o.conn, o.namespace, e)
	}
	if err != nil {
		return nil, err
	}
	client, err := newClient(cfg, e, o)
	if err != nil {
		return nil, err
	}
	pctx, cancel := withTimeout(ctx, o.requestTimeout)
	defer cancel()
	res, err := resolve(pctx, client, o.resource)
	if err != nil {
		return nil, err
	}
	t := &target{client: client, res: res}
	switch {
	case !res.Namespaced:
	case o.allNamespaces:
		t.allNamespaces = true
	default:
		t.namespace = client.Namespace()
	}
	if err := checkNames(pctx, t, o); err != nil {
		return t, err
	}
	return t, probe(pctx, t, o)
}

// logger is the informer's, on stderr: errors only by default, more with
// each -v level (see logLevel).
func logger(e *env, o *getOptions) *slog.Logger {
	return slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: logLevel(o.verbosity)}))
}

// watchWith runs the informer with view's printer until the command ends:
// at interrupt when watching, after the initial list otherwise.
func watchWith[T watch.Object](g *group, e *env, o *getOptions, t *target, v view[T], out *bufio.Writer) error {
	sk, err := decorate(g.ctx, v.sink, t, o)
	if err != nil {
		return err
	}
	v.sink = sk
	prog := newProgress(e, t.res.Resource)
	inf, err := informer.New(informer.Options[T]{
		Client: t.client, Resource: t.res, Scope: scope(t, o),
		Form: v.form, Logger: logger(e, o),
		Transform: func(obj T) (T, error) {
			prog.add(1)
			if v.transform != nil {
				obj = v.transform(obj)
			}
			if l, ok := any(obj).(labelled); ok && !keepLabels(o) {
				l.ClearLabels()
			}
			return obj, nil
		},
		Tuning: informer.Tuning{PageSize: pageSize(o), ListMode: listMode(o)},
	})
	if err != nil {
		return err
	}
	em := newEmitter(out, v.sink)
	em.beforeOutput = prog.finish
	em.onError = func(error) { g.cancel() }
	// Ordered: every change the server sent is printed, in order.
	reg, err := inf.AddHandler(em.handler(), informer.HandlerOptions{Delivery: informer.Ordered})
	if err != nil {
		return err
	}
	em.backlog, em.merged = reg.Backlog, reg.Merged
	em.warn = func(s string) { fmt.Fprintln(e.stderr, s) }
	counted, err := serveMetrics(g, o, t.res, inf, inf.Store().Len)
	if err != nil {
		return err
	}
	em.counted = counted
	g.Go(func(ctx context.Context) error { return inf.Run(ctx) })
	g.Go(prog.run)
	synced, err := waitSynced(g.ctx, watched{inf: inf, reg: reg, prog: prog, host: t.client.Host()}, o)
	prog.finish()
	if synced {
		em.endInitial(o.watch)
		if o.watch {
			monitor(g.ctx, e, inf)
		}
	}
	if stopErr := g.Stop(); err == nil {
		err = stopErr
	}
	if closeErr := em.close(); err == nil && !isBrokenPipe(closeErr) {
		err = closeErr
	}
	return err
}

// isBrokenPipe: the reader went away ("kwatch pods | head"); not an error
// worth a message.
func isBrokenPipe(err error) bool {
	return err != nil && (errors.Is(err, io.ErrClosedPipe) || isEPIPE(err))
}
