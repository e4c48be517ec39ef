package watch

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kwatch/kwatch/kube"
)

// Stream is one open watch. Next returns its events in order; Close ends
// it. A Stream is used by one goroutine, except Close, which may be called
// from any goroutine to unblock Next.
type Stream[T Object] struct {
	res    kube.Resource
	body   io.ReadCloser
	dec    *Decoder[T]
	cancel context.CancelFunc
	idle   *idleReader // nil without an idle deadline

	closeOnce sync.Once
}

// Watch opens a watch on the objects of res in sc (a namespace, "" for
// all, and the selectors, which the server judges). A
// non-2xx answer is returned as a *StatusError wrapped in an *OpError.
// Events then come from Stream.Next; an ERROR event ends the stream with its
// *StatusError (IsGone for a too-old resourceVersion).
//
// opts.IdleTimeout, when positive, ends the stream with ErrIdleTimeout
// after that long without a single byte from the server: a watch whose
// connection died without a FIN (or whose server stalled) is noticed even
// over HTTP/1.1, where there are no pings. Ask for bookmarks so a quiet
// resource still sends bytes.
func Watch[T Object](ctx context.Context, c *kube.Client, res kube.Resource, sc kube.Scope, opts WatchOptions) (*Stream[T], error) {
	idleTimeout := opts.IdleTimeout
	if err := opts.Form.check("WatchOptions.Form"); err != nil {
		return nil, err
	}
	enc := chooseEncoding[T](c, asked{form: opts.Form, json: opts.JSON}, acceptMetaWatch)
	ctx, cancel := context.WithCancel(ctx)
	var idle *idleReader
	if idleTimeout > 0 {
		// The deadline covers the wait for response headers too: a server
		// that accepts the connection and says nothing is as dead as one
		// that stops mid-stream.
		idle = newIdleReader(idleTimeout, cancel)
	}
	resp, err := c.Send(ctx, kube.Request{Path: res.Path(sc.Namespace), Query: opts.query(sc), Accept: enc.accept, NoRetry: true})
	if err != nil {
		cancel()
		if idle != nil && idle.expired() {
			err = ErrIdleTimeout
		}
		return nil, &kube.OpError{Op: "watch", Resource: res.String(), Err: err}
	}
	var body io.Reader = resp.Body
	if idle != nil {
		idle.r = resp.Body
		idle.touch()
		body = idle
	}
	proto, err := enc.protobuf(resp.Header.Get("Content-Type"))
	if err != nil {
		resp.Body.Close()
		cancel()
		if idle != nil {
			idle.stop()
		}
		return nil, &kube.OpError{Op: "watch", Resource: res.String(), Err: err}
	}
	var dec *Decoder[T]
	if proto {
		dec = newProtoDecoder(body, opts.Decoder, enc.codec)
	} else {
		dec = NewDecoder[T](body, opts.Decoder)
	}
	return &Stream[T]{
		res:    res,
		body:   resp.Body,
		dec:    dec,
		cancel: cancel,
		idle:   idle,
	}, nil
}

// Next returns the next event. At the end of the stream it returns io.EOF
// when the server closed it cleanly (timeoutSeconds, or the server ending
// the watch), ErrIdleTimeout when the idle deadline fired, or another error
// wrapped in an *OpError with Op "stream". An ERROR event is returned as its
// *StatusError, also wrapped.
func (s *Stream[T]) Next() (Event[T], error) {
	ev, err := s.dec.Next()
	if err == nil {
		return ev, nil
	}
	if s.idle != nil && s.idle.expired() {
		err = ErrIdleTimeout
	}
	if errors.Is(err, io.EOF) {
		return ev, io.EOF
	}
	return ev, &kube.OpError{Op: "stream", Resource: s.res.String(), Err: err}
}

// SetParallelism changes how many frames are decoded at once from now on
// (see Decoder.SetParallelism); call it from the goroutine that calls Next.
func (s *Stream[T]) SetParallelism(n int) { s.dec.SetParallelism(n) }

// Close ends the watch and releases its connection. It is safe to call more
// than once and from another goroutine than Next's.
func (s *Stream[T]) Close() error {
	s.closeOnce.Do(func() {
		s.cancel()
		if s.idle != nil {
			s.idle.stop()
		}
		s.body.Close()
		s.dec.Close()
	})
	return nil
}

// idleReader cancels the request when no byte arrives for longer than its
// timeout. Each Read that returns data pushes the deadline back; the timer
// is reset lazily to keep the per-read cost to an atomic store.
type idleReader struct {
	r       io.Reader
	timeout time.Duration
	cancel  context.CancelFunc
	timer   *time.Timer
	last    atomic.Int64 // unix nanos of the last byte received
	fired   atomic.Bool
	stopped atomic.Bool
}

func newIdleReader(timeout time.Duration, cancel context.CancelFunc) *idleReader {
	ir := &idleReader{timeout: timeout, cancel: cancel}
	ir.last.Store(time.Now().UnixNano())
	ir.timer = time.AfterFunc(timeout, ir.check)
	return ir
}

// check runs when the timer fires: if bytes came since, it re-arms for the
// rest of the window; otherwise it declares the connection dead.
func (ir *idleReader) check() {
	if ir.stopped.Load() {
		return
	}
	since := time.Since(time.Unix(0, ir.last.Load()))
	if since < ir.timeout {
		ir.timer.Reset(ir.timeout - since)
		return
	}
	ir.fired.Store(true)
	ir.cancel()
}

func (ir *idleReader) touch() { ir.last.Store(time.Now().UnixNano()) }

func (ir *idleReader) Read(p []byte) (int, error) {
	n, err := ir.r.Read(p)
	if n > 0 {
		ir.touch()
	}
	return n, err
}

func (ir *idleReader) expired() bool { return ir.fired.Load() }

func (ir *idleReader) stop() {
	ir.stopped.Store(true)
	ir.timer.Stop()
}

// ErrIdleTimeout ends a watch stream that received no bytes for longer than
// its idle deadline: the connection is presumed dead.
var ErrIdleTimeout = errors.New("watch stream idle for longer than its deadline; connection presumed dead")
