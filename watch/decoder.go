package watch

import (
	"errors"
	"io"
)

// DefaultMaxFrameSize bounds one watch event's JSON. The API server refuses
// objects above about 1.5 MiB in etcd, so 16 MiB leaves room for any real
// object while stopping a hostile stream from growing memory without bound.
const DefaultMaxFrameSize = 16 << 20

// DecoderOptions bound a stream decoder. The zero value is the default.
type DecoderOptions struct {
	// MaxFrameSize is the largest event accepted, in bytes; 0 means DefaultMaxFrameSize.
	MaxFrameSize int
	// Parallelism is how many frames may be decoded at once; 0 or 1 decodes
	// on the caller's goroutine.
	Parallelism int
}

// Decoder is a placeholder replaced by the incremental decoder.
type Decoder[T Object] struct{ r io.Reader }

// NewDecoder returns a decoder of the watch events in r.
func NewDecoder[T Object](r io.Reader, opts DecoderOptions) *Decoder[T] { return &Decoder[T]{r: r} }

// Next returns the next event; io.EOF at a clean end of stream.
func (d *Decoder[T]) Next() (Event[T], error) { return Event[T]{}, errors.New("not implemented") }

// Close releases the decoder's resources.
func (d *Decoder[T]) Close() error { return nil }
