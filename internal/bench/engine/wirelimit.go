package engine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

// EngineWireLimit is the loopback limit of the throughput scenario: the
// same watch (protobuf) read from the socket and cut into its
// length-prefixed frames, nothing decoded. Its events/s is the most any
// informer could reach on this machine and server; an informer's events/s
// over it is how close it comes. It lists once (for the sync the harness
// waits for) and then watches from that list's resourceVersion, again
// from there after every broken watch: the harness runs it through the
// throughput scenario only (harness.Row.ThroughputOnly), whose events all
// follow the list.
const EngineWireLimit = "wire-limit"

// wireLimit is the EngineWireLimit engine.
type wireLimit struct {
	c     *kube.Client
	p     *probe
	rv    string
	count atomic.Int64
	ready atomic.Bool
}

func newWireLimit(cfg Config, p *probe) (informerEngine, error) {
	c, err := kube.NewClient(&kube.Config{Host: cfg.Host, Encoding: kube.EncodingConfig{ContentType: kube.ContentTypeProtobuf}})
	if err != nil {
		return nil, fmt.Errorf("wire-limit client: %w", err)
	}
	return &wireLimit{c: c, p: p}, nil
}

func (w *wireLimit) synced() bool { return w.ready.Load() }
func (w *wireLimit) len() int     { return int(w.count.Load()) }

// run lists, then reads watches until ctx ends.
func (w *wireLimit) run(ctx context.Context) error {
	meta, err := watch.ListEach(ctx, w.c, kube.Pods, kube.Scope{}, watch.ListOptions{}, func(*watch.Raw) error {
		w.count.Add(1)
		w.p.add()
		return nil
	})
	if err != nil {
		return fmt.Errorf("wire-limit: list: %w", err)
	}
	w.rv = meta.ResourceVersion
	w.ready.Store(true)
	for ctx.Err() == nil {
		if err := w.watchOnce(ctx); err != nil && ctx.Err() == nil {
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	return nil
}

// watchOnce reads one watch from the list's resourceVersion to its end.
func (w *wireLimit) watchOnce(ctx context.Context) error {
	resp, err := w.c.Send(ctx, kube.Request{
		Path:   "/api/v1/pods",
		Query:  url.Values{"watch": {"true"}, "resourceVersion": {w.rv}},
		Accept: kube.ContentTypeProtobuf,
	})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return w.frames(resp.Body)
}

// frames cuts r into frames and counts each as a delivery. A frame holding
// the armed phase's marker id is the phase's marker: finding it is the one
// look into the bytes.
func (w *wireLimit) frames(r io.Reader) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var frame []byte
	var hdr [4]byte
	for {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return err
		}
		n := int(binary.BigEndian.Uint32(hdr[:]))
		if n > 16<<20 {
			return fmt.Errorf("wire-limit: frame of %d bytes", n)
		}
		if cap(frame) < n {
			frame = make([]byte, n)
		}
		frame = frame[:n]
		if _, err := io.ReadFull(br, frame); err != nil {
			return err
		}
		w.deliver(frame)
	}
}

func (w *wireLimit) deliver(frame []byte) {
	ph := w.p.cur.Load()
	if ph == nil {
		return
	}
	var ann map[string]string
	if bytes.Contains(frame, ph.wireID) {
		ann = ph.marker
	}
	w.p.update(ann)
}
