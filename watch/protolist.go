package watch

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/kwatch/kwatch/internal/pbwire"
	"github.com/kwatch/kwatch/kube"
)

// decodeProtoList is DecodeList for a protobuf list body: the enveloped
// list message is read field by field from r, so that only the item being
// decoded is held in memory; each item and each other field is bounded by
// maxItemSize bytes.
func decodeProtoList[T Object](r io.Reader, maxItemSize int, c *protoCodec[T], each func(T) error) (ListMeta, error) {
	if maxItemSize <= 0 {
		maxItemSize = DefaultMaxFrameSize
	}
	s := &protoStream{r: bufio.NewReaderSize(r, initialBufferSize), limit: min(maxItemSize, maxFrameLimit)}
	var meta ListMeta
	var magic [4]byte
	if err := s.full(magic[:]); err != nil {
		return meta, s.fail("list body", err)
	}
	if magic != pbwire.Magic {
		return meta, s.fail("list body", errors.New(`protobuf body does not start with the "k8s\x00" magic`))
	}
	var kind string
	sawRaw := false
	for {
		num, wire, err := s.tag()
		if err == io.EOF {
			break
		}
		if err != nil {
			return meta, s.fail("list body", err)
		}
		switch {
		case num == 1 && wire == pbwire.Bytes:
			b, err := s.field("list type")
			if err != nil {
				return meta, err
			}
			_, kind = pbwire.ReadTypeMeta(b)
		case num == 2 && wire == pbwire.Bytes && kind == "Status":
			return meta, s.statusBody()
		case num == 2 && wire == pbwire.Bytes:
			if !listKindOK(kind) {
				return meta, s.fail("list body", fmt.Errorf("%w: the body is a %q", ErrNotList, clip(kind)))
			}
			sawRaw = true
			if err := listMessage(s, &meta, c, each); err != nil {
				return meta, err
			}
		default:
			if err := s.skipField(wire, "list body"); err != nil {
				return meta, err
			}
		}
	}
	if !sawRaw {
		return meta, s.fail("list body", fmt.Errorf("%w: the envelope holds no object", ErrNotList))
	}
	return meta, nil
}

// listMessage reads the envelope's raw field, a list message: its
// metadata, and its items one by one into each.
func listMessage[T Object](s *protoStream, meta *ListMeta, c *protoCodec[T], each func(T) error) error {
	n, err := s.varint()
	if err != nil {
		return s.fail("list body", err)
	}
	end := s.off + int64(n)
	for i := 0; s.off < end; {
		num, wire, err := s.tag()
		if err != nil {
			return s.fail("list body", noEOF(err))
		}
		switch {
		case num == 1 && wire == pbwire.Bytes:
			b, err := s.field("list metadata")
			if err == nil {
				err = readListMeta(b, meta)
			}
			if err != nil {
				return s.fail("list metadata", err)
			}
		case num == 2 && wire == pbwire.Bytes:
			what := fmt.Sprintf("list item %d", i)
			at := s.off
			b, err := s.field(what)
			if err != nil {
				return err
			}
			obj, err := c.decode(b)
			if err != nil {
				return &DecodeError{Offset: at, What: what, Err: err}
			}
			if err := each(obj); err != nil {
				return err
			}
			i++
		default:
			if err := s.skipField(wire, "list body"); err != nil {
				return err
			}
		}
	}
	if s.off != end {
		return s.fail("list body", errors.New("a field runs past the end of the list message"))
	}
	return nil
}

// protoStream reads protobuf fields from a stream, keeping the offset for
// errors and bounding every length-delimited field it buffers.
type protoStream struct {
	r     *bufio.Reader
	off   int64
	limit int
	buf   []byte // reused for each field read whole
}

func (s *protoStream) fail(what string, err error) error {
	return &DecodeError{Offset: s.off, What: what, Err: err}
}

func (s *protoStream) full(b []byte) error {
	n, err := io.ReadFull(s.r, b)
	s.off += int64(n)
	return noEOF(err)
}

// tag reads a field's tag; io.EOF means a clean end before it.
func (s *protoStream) tag() (num, wire int, err error) {
	if _, err := s.r.Peek(1); err == io.EOF {
		return 0, 0, io.EOF
	}
	v, err := s.varint()
	if err != nil {
		return 0, 0, err
	}
	if v>>3 == 0 || v>>3 > 1<<29 {
		return 0, 0, fmt.Errorf("protobuf field number %d out of range", v>>3)
	}
	return int(v >> 3), int(v & 7), nil
}

func (s *protoStream) varint() (uint64, error) {
	var v uint64
	for i := 0; i < 10; i++ {
		c, err := s.r.ReadByte()
		if err != nil {
			return 0, noEOF(err)
		}
		s.off++
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, nil
		}
	}
	return 0, errors.New("protobuf varint longer than 10 bytes")
}

// field reads a length-delimited field's content whole, bounded by the
// limit. The result is valid until the next call.
func (s *protoStream) field(what string) ([]byte, error) {
	at := s.off
	n, err := s.varint()
	if err != nil {
		return nil, s.fail(what, err)
	}
	if n > uint64(s.limit) {
		return nil, &DecodeError{Offset: at, What: what,
			Err: fmt.Errorf("%w: %d bytes exceed the %d-byte limit (maxItemSize)", ErrFrameTooLarge, n, s.limit)}
	}
	if cap(s.buf) < int(n) {
		s.buf = make([]byte, n)
	}
	b := s.buf[:n]
	if err := s.full(b); err != nil {
		return nil, s.fail(what, err)
	}
	return b, nil
}

// skipField skips a field's value of the given wire type.
func (s *protoStream) skipField(wire int, what string) error {
	var n uint64
	switch wire {
	case pbwire.Varint:
		_, err := s.varint()
		return s.failIf(what, err)
	case pbwire.Fixed64:
		n = 8
	case pbwire.Fixed32:
		n = 4
	case pbwire.Bytes:
		var err error
		if n, err = s.varint(); err != nil {
			return s.fail(what, err)
		}
	default:
		return s.fail(what, fmt.Errorf("protobuf wire type %d not supported", wire))
	}
	d, err := s.r.Discard(int(min(n, 1<<40)))
	s.off += int64(d)
	return s.failIf(what, noEOF(err))
}

func (s *protoStream) failIf(what string, err error) error {
	if err != nil {
		return s.fail(what, err)
	}
	return nil
}

// statusBody reads the Status a list body holds instead of a list.
func (s *protoStream) statusBody() error {
	b, err := s.field("list body")
	if err != nil {
		return err
	}
	se, err := kube.DecodeStatus(b, true)
	if err != nil {
		return s.fail("list body", err)
	}
	return fmt.Errorf("%w: the body is a Status: %w", ErrNotList, se)
}

// noEOF turns an end of input inside a value into io.ErrUnexpectedEOF.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
