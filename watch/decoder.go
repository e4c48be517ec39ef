package watch

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	jsoniter "github.com/json-iterator/go"
	"github.com/kwatch/kwatch/internal/pbwire"
	"github.com/kwatch/kwatch/kube"
)

// DefaultMaxFrameSize bounds one watch event's JSON. The API server refuses
// objects above about 1.5 MiB in etcd, so 16 MiB leaves room for any real
// object while stopping a hostile stream from growing memory without bound.
const DefaultMaxFrameSize = 16 << 20

// maxFrameLimit is the largest MaxFrameSize honoured; larger values are
// lowered to it so that buffer arithmetic cannot overflow.
const maxFrameLimit = 1 << 30

const (
	// framesPerWorker is how many buffered frames a batch holds per
	// decoding goroutine: enough to amortise starting the goroutines.
	framesPerWorker = 32
	// parallelBufferFactor bounds how many times initialBufferSize a
	// parallel decoder's buffer starts with (one per worker).
	parallelBufferFactor = 4
	// maxBatchFrames bounds the frames (and decoded objects) in flight in
	// one batch, whatever Parallelism says.
	maxBatchFrames = 1024
)

// ErrDecoderClosed is returned by Next after Close.
var ErrDecoderClosed = errors.New("watch: decoder closed")

// DecoderOptions bound a stream decoder. The zero value is the default.
type DecoderOptions struct {
	// MaxFrameSize is the largest event accepted, in bytes; 0 or less means
	// DefaultMaxFrameSize, and values above 1 GiB are lowered to 1 GiB.
	// The decoder's buffer never grows beyond MaxFrameSize+1 bytes.
	MaxFrameSize int
	// Parallelism is how many frames may be decoded at once; 0 or 1 decodes
	// on the caller's goroutine. With more, events already buffered are
	// decoded in batches of at most 32×Parallelism frames (never more than
	// 1024), still delivered in stream order, and the read buffer starts
	// at 64 KiB×min(Parallelism, 4) instead of 64 KiB.
	Parallelism int
}

// Decoder reads the watch events of one stream: it frames the JSON objects
// itself (chunk boundaries do not matter), bounds each by MaxFrameSize and
// MaxNestingDepth and decodes the object of each event into a fresh T.
//
// The first error ends the stream and Next returns it from then on: a
// clean end is io.EOF; an ERROR event is its *StatusError; bad input is a
// *DecodeError naming the offset and, once known, the event type. An event
// whose object does not decode into T ends the stream too rather than
// being skipped, so a consumer never silently misses a change: it restarts
// the watch from the last resourceVersion it applied.
//
// Parallel decoding (Parallelism > 1) works in batches, started and
// finished within one Next call, so no goroutine outlives Next and none
// is started by NewDecoder. When no decoded event is pending, Next takes
// the next frame (reading the network only if no complete frame is
// buffered), adds every further frame already complete in the buffer
// without reading, and decodes the batch on the caller's goroutine plus up
// to Parallelism-1 short-lived goroutines that claim frames by an atomic
// index; it waits for them and then delivers the batch in order. A batch
// never waits for data to fill it, so an event that has arrived is
// delivered at once. The frames alias the read buffer, which is not
// touched until the batch is decoded, so no bytes are copied.
//
// One goroutine calls Next. Close may be called from any goroutine, also
// while Next runs: it returns once no decoding goroutine is left, and the
// running Next releases the buffers on its way out. Close does not close
// the reader: to unblock a Next waiting on the network, close the reader
// (the response body) as well.
type Decoder[T Object] struct {
	// state is the lifecycle: stateIdle, stateBusy (in Next), stateClosing
	// (Close called during Next) or stateClosed. Only the goroutine that
	// moved it out of stateIdle or stateBusy touches the fields below.
	state atomic.Int32
	// decoding is held while a batch's goroutines run; Close takes it to
	// wait for them.
	decoding sync.Mutex

	f        *framer
	proto    *protoCodec[T] // non-nil for a protobuf stream
	workers  int
	maxBatch int
	iter     *jsoniter.Iterator // for the caller's goroutine; borrowed lazily
	err      error              // sticky: once set, Next returns it after the pending events
	// batch[next:] are the decoded events of the current batch not yet
	// delivered; an entry with err set ends the batch and the stream.
	batch []slot[T]
	next  int
}

// The states of a Decoder.
const (
	stateIdle int32 = iota
	stateBusy
	stateClosing
	stateClosed
)

// errConcurrentNext reports a misuse: two goroutines calling Next at once.
var errConcurrentNext = errors.New("watch: Decoder.Next called concurrently")

// slot is one frame of a batch and what it decoded to.
type slot[T Object] struct {
	frame []byte
	off   int64
	ev    Event[T]
	err   error
}

// NewDecoder returns a decoder of the watch events in r. It does not read
// r and starts no goroutine; Close does not close r.
func NewDecoder[T Object](r io.Reader, opts DecoderOptions) *Decoder[T] {
	limit := opts.MaxFrameSize
	if limit <= 0 {
		limit = DefaultMaxFrameSize
	}
	limit = min(limit, maxFrameLimit)
	workers := max(opts.Parallelism, 1)
	f := newFramer(r, limit, "MaxFrameSize", "watch event")
	if workers > 1 {
		// A larger buffer lets a busy stream fill larger batches, which
		// amortises the helpers' start-up.
		f.bufSize = initialBufferSize * min(workers, parallelBufferFactor)
	}
	return &Decoder[T]{f: f, workers: workers, maxBatch: min(workers*framesPerWorker, maxBatchFrames)}
}

// newProtoDecoder returns a decoder of a protobuf watch stream
// (Content-Type application/vnd.kubernetes.protobuf;stream=watch).
func newProtoDecoder[T Object](r io.Reader, opts DecoderOptions, c *protoCodec[T]) *Decoder[T] {
	d := NewDecoder[T](r, opts)
	d.f.lengthPrefixed, d.proto = true, c
	return d
}

// SetParallelism changes how many frames later batches decode at once
// (0 or 1: on the caller's goroutine). Call it only from the goroutine
// that calls Next, between calls: an informer decodes a streaming list's
// initial events on one core, leaving the other to the garbage collector
// while its cache grows, then watches with more.
func (d *Decoder[T]) SetParallelism(n int) {
	d.workers = max(n, 1)
	d.maxBatch = min(d.workers*framesPerWorker, maxBatchFrames)
}

// Next returns the next event in stream order; io.EOF at a clean end of
// stream. See Decoder for the errors that end a stream.
func (d *Decoder[T]) Next() (Event[T], error) {
	if !d.state.CompareAndSwap(stateIdle, stateBusy) {
		if d.state.Load() == stateBusy {
			return Event[T]{}, errConcurrentNext
		}
		return Event[T]{}, ErrDecoderClosed
	}
	ev, err := d.step()
	if !d.state.CompareAndSwap(stateBusy, stateIdle) {
		// Close was called meanwhile and left the release to us.
		d.state.Store(stateClosed)
		d.release()
	}
	return ev, err
}

// step is Next once the state is stateBusy.
func (d *Decoder[T]) step() (Event[T], error) {
	if d.next < len(d.batch) {
		return d.deliver()
	}
	if d.err != nil {
		return Event[T]{}, d.err
	}
	if d.iter == nil {
		d.iter = json.BorrowIterator(nil)
	}
	if d.workers == 1 {
		frame, off, err := d.f.frame(true)
		if err == nil {
			var ev Event[T]
			if ev, err = d.decodeFrame(d.iter, frame, off); err == nil {
				return ev, nil
			}
		}
		d.err = err
		return Event[T]{}, err
	}
	d.decodeBatch()
	return d.deliver()
}

// Close ends the decoder: Next then returns ErrDecoderClosed. It returns
// once no goroutine of the decoder runs. It does not close the reader. It
// is idempotent and safe to call while Next runs.
func (d *Decoder[T]) Close() error {
	for {
		switch d.state.Load() {
		case stateIdle:
			if d.state.CompareAndSwap(stateIdle, stateClosed) {
				d.release()
				return nil
			}
		case stateBusy:
			if d.state.CompareAndSwap(stateBusy, stateClosing) {
				d.decoding.Lock() // wait for a batch being decoded, if any
				d.decoding.Unlock()
				return nil
			}
		default:
			return nil
		}
	}
}

// release drops the buffers and returns the iterator to its pool.
func (d *Decoder[T]) release() {
	if d.iter != nil {
		d.iter.ResetBytes(nil)
		json.ReturnIterator(d.iter)
		d.iter = nil
	}
	d.f.buf, d.f.r = nil, nil
	d.batch, d.next = nil, 0
	d.err = ErrDecoderClosed
}

// deliver returns batch[next], which must exist.
func (d *Decoder[T]) deliver() (Event[T], error) {
	s := &d.batch[d.next]
	d.next++
	ev, err := s.ev, s.err
	*s = slot[T]{} // drop the reference to the object
	if d.next == len(d.batch) || err != nil {
		d.batch, d.next = d.batch[:0], 0
	}
	if err != nil {
		d.err = err
	}
	return ev, err
}

// decodeBatch gathers the next frame and those already buffered after it,
// and decodes them; see Decoder for the design.
func (d *Decoder[T]) decodeBatch() {
	d.batch, d.next = d.batch[:0], 0
	frame, off, err := d.f.frame(true)
	for err == nil && frame != nil {
		d.batch = append(d.batch, slot[T]{frame: frame, off: off})
		if len(d.batch) == d.maxBatch {
			break
		}
		frame, off, err = d.f.frame(false)
	}
	n := len(d.batch)
	d.decoding.Lock()
	defer d.decoding.Unlock()
	if n > 1 && d.state.Load() != stateBusy {
		// Close has returned or waits for this lock: start no goroutine.
		d.batch = append(d.batch[:0], slot[T]{err: ErrDecoderClosed})
		return
	}
	if err != nil {
		d.batch = append(d.batch, slot[T]{err: err})
	}
	var claimed atomic.Int64
	work := func(iter *jsoniter.Iterator) {
		for {
			i := int(claimed.Add(1) - 1)
			if i >= n {
				return
			}
			s := &d.batch[i]
			s.ev, s.err = d.decodeFrame(iter, s.frame, s.off)
			s.frame = nil
		}
	}
	var wg sync.WaitGroup
	for range min(d.workers, n) - 1 {
		wg.Go(func() {
			iter := json.BorrowIterator(nil)
			work(iter)
			iter.ResetBytes(nil)
			json.ReturnIterator(iter)
		})
	}
	work(d.iter)
	wg.Wait()
}

// decodeFrame decodes one frame in the stream's encoding.
func (d *Decoder[T]) decodeFrame(iter *jsoniter.Iterator, frame []byte, off int64) (Event[T], error) {
	if d.proto != nil {
		return decodeProtoEvent(d.proto, frame, off)
	}
	return decodeEvent[T](iter, frame, off)
}

// envelope collects the fields of one event as they are read.
type envelope[T Object] struct {
	off     int64
	typ     EventType
	hasType bool
	obj     T
	hasObj  bool
	raw     []byte // the object when it is a Status or came before the type
	err     error
}

// decodeEvent decodes one framed event with iter. The usual envelope start,
// {"type":"T","object":, is matched by hand so that no key is allocated;
// anything else goes through jsoniter's general object reader.
func decodeEvent[T Object](iter *jsoniter.Iterator, frame []byte, off int64) (ev Event[T], err error) {
	// jsoniter and the caller's UnmarshalJSON methods are third-party code
	// fed hostile input; a panic in them must end the stream, not the process.
	defer func() {
		if p := recover(); p != nil {
			ev, err = Event[T]{}, &DecodeError{Offset: off, What: "watch event", Err: fmt.Errorf("JSON decoder panicked: %v", p)}
		}
	}()
	e := envelope[T]{off: off}
	iter.Error = nil
	if typ, obj, ok := envelopePrefix(frame); ok {
		e.setType(typ)
		if n, isRaw := e.readRawObject(frame[obj:]); isRaw {
			iter.ResetBytes(frame[obj+n:])
		} else {
			iter.ResetBytes(frame[obj:])
			e.readObject(iter)
		}
	} else {
		iter.ResetBytes(frame)
	}
	e.readFields(iter)
	ev, err = e.result(iter)
	iter.ResetBytes(nil)
	return ev, err
}

// readFields reads the envelope's remaining fields. jsoniter's ReadObject
// returns "" both for the end and for an empty key; an empty key therefore
// ends the envelope early, which can only cost a "missing type/object"
// error, never a silently accepted event.
func (e *envelope[T]) readFields(iter *jsoniter.Iterator) {
	for e.err == nil && iter.Error == nil {
		switch key := iter.ReadObject(); key {
		case "":
			return
		case "type":
			if e.hasType {
				e.err = errors.New(`duplicate "type" field`)
				return
			}
			e.setType(EventType(iter.ReadString()))
		case "object":
			if e.hasObj {
				e.err = errors.New(`duplicate "object" field`)
				return
			}
			e.readObject(iter)
		default:
			iter.Skip()
		}
	}
}

func (e *envelope[T]) setType(t EventType) {
	e.typ, e.hasType = t, true
	if !t.Valid() {
		e.err = fmt.Errorf("%w %q", ErrUnknownEventType, clip(string(t)))
	}
}

// readObject decodes the object into T when the type is known and not
// ERROR; otherwise it keeps a copy of the raw bytes for later.
func (e *envelope[T]) readObject(iter *jsoniter.Iterator) {
	e.hasObj = true
	if e.err != nil {
		return
	}
	if !e.hasType || e.typ == Error {
		e.raw = iter.SkipAndReturnBytes()
		return
	}
	e.decode(iter)
}

// readRawObject reads the object at the start of b when T is *Raw, with
// Raw's own scanner (jsoniter's capturing skip allocates every string it
// passes), and returns the bytes it read. isRaw is false when T is not
// *Raw or the object is not one to decode now (an ERROR's Status, null):
// the general path reads it then.
func (e *envelope[T]) readRawObject(b []byte) (n int, isRaw bool) {
	dst, ok := any(&e.obj).(**Raw)
	if !ok || e.err != nil || e.typ == Error {
		return 0, false
	}
	s := jscan{b: b}
	s.ws()
	if s.i >= len(b) || b[s.i] != '{' {
		return 0, false
	}
	e.hasObj = true
	r, end, err := scanRawJSON(b, s.i)
	if err != nil {
		e.err = fmt.Errorf("object does not decode into %T: %w", e.obj, err)
		return 0, true
	}
	*dst = r
	return end, true
}

func (e *envelope[T]) decode(iter *jsoniter.Iterator) {
	if iter.WhatIsNext() == jsoniter.NilValue {
		e.err = errors.New("object is null")
		return
	}
	iter.ReadVal(&e.obj)
	if iter.Error != nil {
		e.err = fmt.Errorf("object does not decode into %T: %w", e.obj, iter.Error)
		iter.Error = nil
	}
}

func (e *envelope[T]) result(iter *jsoniter.Iterator) (Event[T], error) {
	if e.err == nil && iter.Error != nil {
		e.err = fmt.Errorf("malformed event: %w", iter.Error)
	}
	if e.err == nil && !e.hasType {
		e.err = fmt.Errorf("%w: the event has no type", ErrUnknownEventType)
	}
	if e.err == nil && e.typ == Error {
		return Event[T]{}, kube.EventStatus(e.raw, false)
	}
	if e.err == nil && !e.hasObj {
		e.err = errors.New("the event has no object")
	}
	if e.err == nil && e.raw != nil {
		iter.ResetBytes(e.raw)
		e.decode(iter)
	}
	if e.err != nil {
		what := "watch event"
		if e.typ.Valid() {
			what = string(e.typ) + " event"
		}
		return Event[T]{}, &DecodeError{Offset: e.off, What: what, Err: e.err}
	}
	return Event[T]{Type: e.typ, Object: e.obj}, nil
}

// envelopePrefix matches {"type":"T","object": with any whitespace and
// returns T and the index of the object's value. T must hold no escape.
func envelopePrefix(b []byte) (EventType, int, bool) {
	c := prefixCursor{b: b}
	if !c.lit(`{`) || !c.lit(`"type"`) || !c.lit(`:`) || !c.lit(`"`) {
		return "", 0, false
	}
	start := c.i
	for c.i < len(b) && b[c.i] != '"' && b[c.i] != '\\' {
		c.i++
	}
	if c.i == len(b) || b[c.i] != '"' {
		return "", 0, false
	}
	typ := internType(b[start:c.i])
	c.i++
	if !c.lit(`,`) || !c.lit(`"object"`) || !c.lit(`:`) {
		return "", 0, false
	}
	return typ, c.i, true
}

type prefixCursor struct {
	b []byte
	i int
}

// lit skips whitespace and then s, reporting whether s was there.
func (c *prefixCursor) lit(s string) bool {
	for c.i < len(c.b) {
		switch c.b[c.i] {
		case ' ', '\t', '\n', '\r':
			c.i++
			continue
		}
		break
	}
	if len(c.b)-c.i < len(s) || string(c.b[c.i:c.i+len(s)]) != s {
		return false
	}
	c.i += len(s)
	return true
}

// internType returns the constant for a known type without allocating.
func internType(b []byte) EventType {
	switch string(b) {
	case "ADDED":
		return Added
	case "MODIFIED":
		return Modified
	case "DELETED":
		return Deleted
	case "BOOKMARK":
		return Bookmark
	case "ERROR":
		return Error
	}
	return EventType(b)
}

// clip shortens s for an error message.
func clip(s string) string { return pbwire.Clip(s) }
