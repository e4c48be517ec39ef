package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/cmd/kwatch/internal/printers"
	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/metrics"
)

// recordSink records what an emitter writes, batch by batch.
type recordSink struct {
	batches []string
	closed  bool
	err     error
}

func (s *recordSink) write(batch []change[*printers.Object]) error {
	var parts []string
	for _, c := range batch {
		parts = append(parts, string(c.typ)+" "+c.obj.Namespace+"/"+c.obj.Name)
	}
	s.batches = append(s.batches, strings.Join(parts, ","))
	return s.err
}

func (s *recordSink) close() error { s.closed = true; return nil }

func obj(ns, name string) *printers.Object {
	return &printers.Object{Meta: printers.Meta{Namespace: ns, Name: name}}
}

func TestEmitter(t *testing.T) {
	tests := []struct {
		name  string
		drive func(em *emitter[*printers.Object], h informer.Handler[*printers.Object])
		want  []string
	}{
		{"initial list sorted, then live changes in order", func(em *emitter[*printers.Object], h informer.Handler[*printers.Object]) {
			h.OnAdd(obj("b", "x"), true)
			h.OnAdd(obj("a", "y"), true)
			h.OnAdd(obj("a", "x"), true)
			em.endInitial(true)
			h.OnUpdate(obj("a", "x"), obj("a", "x"))
			h.OnDelete(obj("b", "x"), true)
			h.OnAdd(obj("c", "z"), false)
		}, []string{"ADDED a/x,ADDED a/y,ADDED b/x", "MODIFIED a/x", "DELETED b/x", "ADDED c/z"}},
		{"a live change ends the initial list", func(em *emitter[*printers.Object], h informer.Handler[*printers.Object]) {
			h.OnAdd(obj("a", "2"), true)
			h.OnAdd(obj("a", "1"), true)
			h.OnAdd(obj("a", "3"), false)
			em.endInitial(true)
		}, []string{"ADDED a/1,ADDED a/2", "ADDED a/3"}},
		{"empty initial list", func(em *emitter[*printers.Object], h informer.Handler[*printers.Object]) {
			em.endInitial(true)
		}, []string{""}},
		{"listing once ignores later changes", func(em *emitter[*printers.Object], h informer.Handler[*printers.Object]) {
			h.OnAdd(obj("a", "1"), true)
			em.endInitial(false)
			h.OnAdd(obj("a", "2"), false)
			h.OnDelete(obj("a", "1"), false)
		}, []string{"ADDED a/1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &recordSink{}
			em := newEmitter[*printers.Object](bufio.NewWriter(&bytes.Buffer{}), s)
			tt.drive(em, em.handler())
			require.NoError(t, em.close())
			require.True(t, s.closed)
			require.Equal(t, tt.want, s.batches, "got batches %q, want %q", s.batches, tt.want)
		})
	}
}

func TestEmitterStopsAtWriteError(t *testing.T) {
	s := &recordSink{err: errors.New("broken pipe")}
	em := newEmitter[*printers.Object](bufio.NewWriter(&bytes.Buffer{}), s)
	var reported []error
	em.onError = func(err error) { reported = append(reported, err) }
	h := em.handler()
	h.OnAdd(obj("a", "1"), false)
	h.OnAdd(obj("a", "2"), false)
	require.Len(t, reported, 1, "the first error is reported once")
	require.Equal(t, []string{""}, s.batches, "the (empty) initial batch failed; nothing is written after it")
	require.Error(t, em.close())
}

func TestEmitterBeforeOutputAndFlush(t *testing.T) {
	var out bytes.Buffer
	calls := 0
	tab := &printers.Table{W: nil, Headers: []string{"NAME", "AGE"}}
	w := bufio.NewWriter(&out)
	tab.W = w
	sink := &tableSink[*printers.Object]{table: tab, cells: func(o *printers.Object, _ time.Time) []string { return []string{o.Name, "1s"} }}
	em := newEmitter[*printers.Object](w, sink)
	em.beforeOutput = func() { calls++ }
	em.endInitial(true)
	em.handler().OnAdd(obj("a", "web"), false)
	require.Equal(t, 1, calls, "the progress line is ended once, before the first output")
	require.Equal(t, "NAME   AGE\nweb    1s\n", out.String(), "flushed with nothing queued")
}

func TestProgressLine(t *testing.T) {
	var errb bytes.Buffer
	p := newProgress(&env{stderr: &errb, errTTY: true}, "pods")
	p.add(1500)
	p.draw(p.start.Add(3 * time.Second))
	require.Equal(t, "\r\x1b[Klisting pods: 1500 objects (500/s)", errb.String())
	p.finish()
	require.True(t, strings.HasSuffix(errb.String(), "\r\x1b[K"), "the line is erased: %q", errb.String())
	errb.Reset()
	p.draw(time.Now())
	p.finish()
	require.Empty(t, errb.String(), "nothing after finish")
	require.NoError(t, p.run(context.Background()), "run returns at once after finish")

	var quiet bytes.Buffer
	q := newProgress(&env{stderr: &quiet}, "pods")
	require.NoError(t, q.run(context.Background()), "not a terminal: run returns at once")
	q.finish()
	require.Empty(t, quiet.String())
}

// fakeStats is a statsSource with settable Stats.
type fakeStats struct{ s informer.Stats }

func (f *fakeStats) Stats() informer.Stats   { return f.s }
func (f *fakeStats) Health() informer.Health { return informer.Health{} }

func TestCounterSync(t *testing.T) {
	reg := metrics.NewSet()
	src := &fakeStats{}
	cs := newCounterSync(reg, src, metrics.Label{Name: "resource", Value: "pods"})
	scrape := func() string {
		cs.sync()
		var b bytes.Buffer
		require.NoError(t, reg.WritePrometheus(&b))
		return b.String()
	}
	src.s = informer.Stats{Events: 5, Gone: 1}
	require.Contains(t, scrape(), `kwatch_informer_events_total{resource="pods"} 5`)
	src.s = informer.Stats{Events: 12, Gone: 1}
	got := scrape()
	require.Contains(t, got, `kwatch_informer_events_total{resource="pods"} 12`)
	require.Contains(t, got, `kwatch_informer_gone_total{resource="pods"} 1`)
}

func TestKindName(t *testing.T) {
	tests := []struct {
		res  kube.Resource
		want string
	}{
		{kube.Pods, "pod"},
		{kube.Resource{Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment"}, "deployment.apps"},
		{kube.Resource{Version: "v1", Resource: "things"}, "things"},
	}
	for _, tt := range tests {
		got := kindName(tt.res)
		require.Equal(t, tt.want, got, "kindName(%v): got %q, want %q", tt.res, got, tt.want)
	}
}

// TestEmitterReportsMerges: when the informer merged changes because the
// output fell behind, the emitter says so on stderr with the count, at most
// once per reportEvery while printing, and for whatever is left at close.
func TestEmitterReportsMerges(t *testing.T) {
	var out bytes.Buffer
	em := newEmitter[*printers.Object](bufio.NewWriter(&out), &recordSink{})
	var merged uint64
	var warnings []string
	em.merged = func() uint64 { return merged }
	em.warn = func(s string) { warnings = append(warnings, s) }
	h := em.handler()
	em.endInitial(true)
	h.OnAdd(obj("a", "1"), false)
	require.Empty(t, warnings, "nothing merged, nothing said")
	merged = 5
	h.OnAdd(obj("a", "2"), false)
	require.Equal(t, []string{mergeReport(5, 5)}, warnings)
	merged = 7
	h.OnAdd(obj("a", "3"), false)
	require.Len(t, warnings, 1, "not again within reportEvery")
	require.NoError(t, em.close())
	require.Equal(t, []string{mergeReport(5, 5), mergeReport(2, 7)}, warnings, "the rest at close")
	require.Contains(t, warnings[1], "2 changes were merged", "the count is in the line")
}
