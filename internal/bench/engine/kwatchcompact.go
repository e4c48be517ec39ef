package engine

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

// The compact-store engines: kwatch-proto's informer (protobuf, default
// options) with Store: StoreCompact, fed to a KeyHandler as a workqueue
// would be.
const (
	// EngineCompact's consumer takes keys only: it reads a changed
	// object's annotations from the compact store's metadata
	// (RawStore().Get(key).GetAnnotations(), which decodes ObjectMeta and
	// nothing else), and only while a phase is measured.
	EngineCompact = "kwatch-compact"
	// EngineCompactRead's consumer reads every changed object as
	// *corev1.Pod through Store().Get(key): one full decode per delivery
	// (shared with any other reader of that version through the decode
	// cache), the initial adds included.
	EngineCompactRead = "kwatch-compact-read"
)

// compactEngine runs one compact-store kwatch informer of *corev1.Pod.
type compactEngine struct {
	inf  *informer.Informer[*podFull]
	hold markerHold
}

// newKwatchCompact builds EngineCompact (read false) or EngineCompactRead
// (read true).
func newKwatchCompact(cfg Config, p *probe, read bool) (informerEngine, error) {
	c, err := kube.NewClient(&kube.Config{Host: cfg.Host, Encoding: kube.EncodingConfig{ContentType: kube.ContentTypeProtobuf}})
	if err != nil {
		return nil, fmt.Errorf("kwatch client: %w", err)
	}
	opts := informer.Options[*podFull]{
		Client:   c,
		Resource: kube.Pods,
		Logger:   slog.New(slog.NewTextHandler(logSink(), &slog.HandlerOptions{Level: slog.LevelWarn})),
		Tuning:   informer.Tuning{Store: informer.StoreCompact, PageSize: cfg.PageSize, Decoder: watch.DecoderOptions{Parallelism: cfg.Parallelism}},
	}
	if cfg.ListMode == "paged" {
		opts.ListMode = informer.ListPaged
	} else if cfg.ListMode != "" && cfg.ListMode != "auto" {
		return nil, fmt.Errorf("engine: unknown list mode %q (want auto or paged)", cfg.ListMode)
	}
	compactSnapshot(&opts)
	inf, err := informer.New(opts)
	if err != nil {
		return nil, err
	}
	e := &compactEngine{inf: inf}
	h := e.keyOnly(p)
	if read {
		h = e.reading(p)
	}
	reg, err := inf.AddHandler(informer.KeyHandler[*podFull](h), informer.HandlerOptions{})
	if err != nil {
		return nil, err
	}
	e.hold.reg = reg
	return e, nil
}

// keyOnly is the key-only consumer. A KeyHandler cannot tell an add from
// an update, so a key delivered while no phase is armed counts as an add:
// the harness writes nothing before the sync has every add, and arms each
// later phase before its first write. While a phase is armed, the probe
// gets the object's annotations from its stored metadata.
func (e *compactEngine) keyOnly(p *probe) func(string) {
	rs := e.inf.RawStore()
	return func(key string) {
		if p.cur.Load() == nil {
			p.add()
			return
		}
		var ann map[string]string
		if r, ok := rs.Get(key); ok {
			ann = r.GetAnnotations()
		}
		e.update(p, ann)
	}
}

// reading is the consumer that reads every changed object: a full decode
// into *corev1.Pod for every key, whether or not a phase is armed.
func (e *compactEngine) reading(p *probe) func(string) {
	st := e.inf.Store()
	return func(key string) {
		pod, ok := st.Get(key)
		if p.cur.Load() == nil {
			p.add()
			return
		}
		var ann map[string]string
		if ok {
			ann = pod.Annotations
		}
		e.update(p, ann)
	}
}

// update passes a delivery's annotations to the probe (see markerHold).
func (e *compactEngine) update(p *probe, ann map[string]string) { e.hold.update(p, ann) }

// run runs the informer, then logs how many objects it decoded (none for
// the key-only consumer outside measured phases) and whether it started
// from a snapshot.
func (e *compactEngine) run(ctx context.Context) error {
	err := e.inf.Run(ctx)
	s := e.inf.Stats()
	fmt.Fprintf(os.Stderr, "bench: compact store: decodes=%d decode-errors=%d restored=%t relists=%d snapshot-writes=%d\n",
		s.Decodes, s.DecodeErrors, s.Restored, s.Relists, s.SnapshotWrites)
	return err
}

func (e *compactEngine) synced() bool { return e.inf.HasSynced() }
func (e *compactEngine) len() int     { return e.inf.Store().Len() }
