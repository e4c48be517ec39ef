package main

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/gdamore/tcell/v2"

	"github.com/kwatch/kwatch/cmd/kwatch/internal/diff"
	"github.com/kwatch/kwatch/cmd/kwatch/internal/live"
	"github.com/kwatch/kwatch/cmd/kwatch/internal/printers"
	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/watch"
)

// livePollEvery is how often the live view reads the informer's health for
// its connection line.
const livePollEvery = 250 * time.Millisecond

// runLive is "kwatch get TYPE --live": the resource as a full-screen table
// updated in place (package live) until q, Ctrl-C or a signal. It needs a
// terminal; the rows are the server's Table, as the printed table's.
func runLive(ctx context.Context, g *group, e *env, o *getOptions) error {
	if err := checkLive(e, o); err != nil {
		return err
	}
	t, err := connect(ctx, g, e, o)
	if err != nil {
		return err
	}
	screen, err := tcell.NewScreen()
	if err != nil {
		return usagef("--live needs a terminal: %v", err)
	}
	return liveWith(g, o, t, screen)
}

// checkLive refuses what the live view cannot show.
func checkLive(e *env, o *getOptions) error {
	switch {
	case !e.outTTY:
		return usagef("--live needs a terminal, and stdout is not one (without --live, kwatch prints every change as a line)")
	case o.format != formatTable && o.format != formatWide:
		return usagef("--live shows a table: it takes no -o %s (-o wide adds the wide columns)", o.output)
	case o.watchEvents:
		return usagef("--live shows a table: it takes no --output-watch-events")
	case !o.watch:
		return usagef("--live watches: it takes no --watch=false")
	}
	return nil
}

// liveWith runs the informer and the live view on screen until the user
// quits or the group ends; the caller stops the group.
func liveWith(g *group, o *getOptions, t *target, screen tcell.Screen) error {
	prog := newProgress(&env{}, t.res.Resource) // counts only, draws nothing: the view shows the progress
	inf, err := informer.New(informer.Options[*printers.ServerRow]{
		Client: t.client, Resource: t.res, Scope: scope(t, o),
		// Logs would scribble over the screen; the connection line says
		// what the informer is doing.
		Logger: slog.New(slog.DiscardHandler),
		// The server's Table rows, carrying their objects for the changes
		// pane (Enter).
		Form: watch.FormTableObject,
		Transform: func(r *printers.ServerRow) (*printers.ServerRow, error) {
			prog.add(1)
			return r.Slim(), nil
		},
		Tuning: informer.Tuning{PageSize: pageSize(o)},
	})
	if err != nil {
		return err
	}
	updates := make(chan live.Update) // unbuffered: the informer coalesces while the view is busy
	lt := &liveTable{wide: o.format == formatWide,
		columns: func() ([]printers.Column, error) { return serverColumns(g.ctx, t, o) }}
	reg, err := inf.AddHandler(lt.handler(g.ctx, updates), informer.HandlerOptions{})
	if err != nil {
		return err
	}
	if _, err := serveMetrics(g, o, t.res, inf, inf.Store().Len); err != nil {
		return err
	}
	g.Go(inf.Run)
	g.Go(func(ctx context.Context) error { return pollConn(ctx, inf, updates, livePollEvery) })
	g.Go(func(ctx context.Context) error {
		_, err := waitSynced(ctx, watched{inf: inf, reg: reg, prog: prog, host: t.client.Host()}, o)
		return err
	})
	model := live.NewModel(live.Options{Resource: t.res.Resource, Namespaced: t.allNamespaces, Scope: liveScope(t)})
	err = live.Run(g.ctx, live.RunOptions{Screen: screen, Model: model, Updates: updates})
	if errors.Is(err, live.ErrQuit) {
		return nil
	}
	return err
}

// liveScope is what the title says is watched.
func liveScope(t *target) string {
	switch {
	case t.allNamespaces:
		return "all namespaces"
	case t.namespace != "":
		return "namespace " + t.namespace
	}
	return ""
}

// pollConn sends the connection's state to the view every interval until
// ctx ends.
func pollConn(ctx context.Context, inf statsSource, updates chan<- live.Update, every time.Duration) error {
	tick := time.NewTicker(every)
	defer tick.Stop()
	var ct connTracker
	for {
		c := ct.next(inf.Health(), inf.Stats(), time.Now())
		select {
		case updates <- live.SetConn(c):
		case <-ctx.Done():
			return nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return nil
		}
	}
}

// connTracker turns the informer's health, read over and over, into the
// view's connection state: it remembers since when the watch has been up
// or down, and whether a list is moving. The zero value is ready.
type connTracker struct {
	up, down         time.Time // when the watch was last seen opening, closing; zero if not seen
	listed, relists  int64     // Stats at the previous reading
	seenAny, wasDown bool
}

// next is the state at now. A watch down for less than reconnectNotice
// still shows as watching: the informer reopens an ended watch at once,
// which is routine, and the line would flicker. A list that moves while
// the watch is down is a relist.
func (ct *connTracker) next(h informer.Health, s informer.Stats, now time.Time) live.Conn {
	c := live.Conn{LastActivity: h.LastActivity, Listed: s.Listed, Relists: max(s.Relists-1, 0)}
	if h.LastError != nil {
		c.LastError = oneLine(h.LastError.Error())
	}
	if c.Refused = s.TransformErrors + s.StoreErrors; c.Refused > 0 && h.LastRefusal != nil {
		c.LastRefusal = oneLine(h.LastRefusal.Error())
	}
	listMoved := ct.seenAny && (s.Listed != ct.listed || s.Relists != ct.relists)
	ct.listed, ct.relists, ct.seenAny = s.Listed, s.Relists, true
	switch {
	case h.Watching:
		if ct.up.IsZero() || ct.wasDown {
			ct.up = now
		}
		ct.wasDown = false
	case !ct.wasDown:
		ct.down, ct.wasDown = now, true
	}
	switch {
	case !h.Synced && s.Listed == 0 && h.LastActivity.IsZero():
		c.State = live.Connecting
	case !h.Synced:
		c.State = live.Listing
	case h.Watching, now.Sub(ct.down) < reconnectNotice && h.LastError == nil && !listMoved:
		c.State, c.Since = live.Watching, ct.up
	case listMoved:
		c.State, c.Since = live.Relisting, ct.down
	default:
		c.State, c.Since = live.Reconnecting, ct.down
	}
	return c
}

// liveTable turns the server's Table rows into the view's rows. Its
// methods run on the view's goroutine (inside Updates), which owns it; the
// handler only sends them.
type liveTable struct {
	wide bool
	// columns asks the server for its columns (serverColumns).
	columns func() ([]printers.Column, error)
	// cols are the server's columns, nil until a row brings them; shown
	// indexes the columns on screen; age and status index shown cells (-1:
	// none).
	cols        []printers.Column
	shown       []int
	age, status int
	// pending holds rows that came before any row with columns (the initial
	// list arrives in no particular order); they are shown once columns
	// come.
	pending []*printers.ServerRow
	// now is the view's clock, which stamps changes (time.Now; tests set
	// their own). history holds each object's last changes, at most
	// historyLen, for the changes pane.
	now     func() time.Time
	history map[string][]live.Change
	// cellTimes holds when each shown cell of an object last changed.
	cellTimes map[string][]time.Time
}

// historyLen bounds the changes kept per object for the changes pane.
const historyLen = 20

// clock is lt.now, time.Now when unset.
func (lt *liveTable) clock() time.Time {
	if lt.now == nil {
		return time.Now()
	}
	return lt.now()
}

// handler sends every change to the view, waiting while it draws; the
// informer coalesces a key's changes meanwhile, and the view needs only
// the newest state.
func (lt *liveTable) handler(ctx context.Context, updates chan<- live.Update) informer.Handler[*printers.ServerRow] {
	send := func(u live.Update) {
		select {
		case updates <- u:
		case <-ctx.Done():
		}
	}
	return informer.HandlerFuncs[*printers.ServerRow]{
		AddFunc: func(r *printers.ServerRow, initial bool) {
			send(func(m *live.Model) { lt.upsert(m, r, initial) })
		},
		UpdateFunc: func(old, r *printers.ServerRow) {
			send(func(m *live.Model) { lt.update(m, old, r, "MODIFIED") })
		},
		RelistUpdateFunc: func(old, r *printers.ServerRow) {
			send(func(m *live.Model) { lt.update(m, old, r, "MODIFIED"+relistNote) })
		},
		DeleteFunc: func(r *printers.ServerRow, _ bool) {
			send(func(m *live.Model) { lt.delete(m, r) })
		},
	}
}

// update shows a changed row: its changed cells marked, and the change's
// fields added to the object's history (noise left out, as --diff does).
func (lt *liveTable) update(m *live.Model, old, r *printers.ServerRow, event string) {
	now := lt.clock()
	key := rowKey(r)
	lines := []string{"(the object was not sent whole: no fields to compare)"}
	if old.Object != nil && r.Object != nil {
		changes, err := changesOf(change[*printers.ServerRow]{obj: r, old: old, hasOld: true}, diff.Options{})
		switch {
		case err != nil:
			lines = []string{"(cannot compare the versions: " + oneLine(err.Error()) + ")"}
		case len(changes) == 0:
			lines = []string{"(no field changed but metadata.resourceVersion, generation or managedFields)"}
		default:
			lines = lines[:0]
			for _, c := range changes {
				lines = append(lines, c.String())
			}
		}
	}
	if lt.history == nil {
		lt.history = map[string][]live.Change{}
	}
	h := append(lt.history[key], live.Change{At: now, Event: event, Lines: lines})
	if len(h) > historyLen {
		h = slices.Clone(h[len(h)-historyLen:])
	}
	lt.history[key] = h
	if lt.cellTimes == nil {
		lt.cellTimes = map[string][]time.Time{}
	}
	lt.cellTimes[key] = cellsChanged(lt.cellTimes[key], old, r, lt.shown, lt.age, now)
	lt.upsertAt(m, r, false, now)
}

// cellsChanged stamps the shown cells that differ between two versions of
// a row with now, keeping the earlier stamps of the others (a change
// that touched a cell stays marked when another change follows at once);
// AGE aside, which ticks by itself.
func cellsChanged(prev []time.Time, old, r *printers.ServerRow, shown []int, age int, now time.Time) []time.Time {
	a, b := printers.Pick(old.Cells, shown), printers.Pick(r.Cells, shown)
	out := make([]time.Time, len(b))
	copy(out, prev)
	for i := range b {
		if i != age && (i >= len(a) || a[i] != b[i]) {
			out[i] = now
		}
	}
	return out
}

func rowKey(r *printers.ServerRow) string {
	if r.Namespace == "" {
		return r.Name
	}
	return r.Namespace + "/" + r.Name
}

// upsert shows r, first taking its columns if they are new. Rows of the
// initial list wait for a row with columns; a later change without any
// names the pending cells by position (a server that never sent columns).
func (lt *liveTable) upsert(m *live.Model, r *printers.ServerRow, initial bool) {
	lt.upsertAt(m, r, initial, lt.clock())
}

func (lt *liveTable) upsertAt(m *live.Model, r *printers.ServerRow, initial bool, now time.Time) {
	if cols := rowColumns(r); cols != nil && !sameColumns(cols, lt.cols) {
		lt.setColumns(m, cols)
	}
	if lt.cols == nil {
		if initial {
			lt.pending = append(lt.pending, r)
			return
		}
		lt.setColumns(m, firstColumns([]change[*printers.ServerRow]{{obj: r}}, lt.columns))
	}
	row := lt.row(r)
	if !initial {
		row.Changed = now
	}
	row.CellsChanged = lt.cellTimes[rowKey(r)]
	row.History = lt.history[rowKey(r)]
	m.Upsert(row)
}

func (lt *liveTable) delete(m *live.Model, r *printers.ServerRow) {
	m.Delete(rowKey(r))
	delete(lt.history, rowKey(r))
	delete(lt.cellTimes, rowKey(r))
	for i, p := range lt.pending {
		if rowKey(p) == rowKey(r) {
			lt.pending = append(lt.pending[:i], lt.pending[i+1:]...)
			break
		}
	}
}

// setColumns takes the server's columns and shows the rows that waited.
func (lt *liveTable) setColumns(m *live.Model, cols []printers.Column) {
	lt.cols, lt.shown = cols, printers.Visible(cols, lt.wide)
	headers := printers.Headers(cols, lt.shown)
	lt.age, lt.status = -1, -1
	for i, h := range headers {
		switch h {
		case "AGE":
			lt.age = i
		case "STATUS":
			lt.status = i
		}
	}
	m.SetColumns(headers)
	pending := lt.pending
	lt.pending = nil
	for _, p := range pending {
		m.Upsert(lt.row(p))
	}
}

// row is r as the view shows it. Its AGE cell is computed again from the
// creation time at every second of the view's clock (the server's cell is
// the age when the event was sent), which is what the server prints for
// AGE.
func (lt *liveTable) row(r *printers.ServerRow) live.Row {
	cells := func(now time.Time) []string {
		all := r.Cells
		if r.Fallback {
			all = r.FallbackCells(now)
		}
		shown := printers.Pick(all, lt.shown)
		for i, c := range shown {
			shown[i] = printers.DisplayCell(c)
		}
		if lt.age >= 0 && lt.age < len(shown) && !r.CreationTimestamp.IsZero() {
			shown[lt.age] = printers.Age(r.CreationTimestamp, now)
		}
		return shown
	}
	status := ""
	if lt.status >= 0 {
		if c := printers.Pick(r.Cells, lt.shown); lt.status < len(c) {
			status = strings.TrimSpace(c[lt.status])
		}
	}
	return live.Row{Key: rowKey(r), Namespace: r.Namespace, Name: r.Name, Status: status, Cells: cells,
		Created: r.CreationTimestamp}
}
