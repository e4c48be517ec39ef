package snapfile

import (
	"io"
)

// chunkSize is how much a chunkReader reads at a time, and so about how
// many bytes of its neighbours one kept record's Data holds on to.
const chunkSize = 256 << 10

// A chunkReader reads its source chunkSize bytes at a time into chunks
// that it never reuses, so that view can hand out the bytes in place: a
// record's data is read by the kernel into its final place and nowhere
// else, and a chunk of records is one allocation without pointers, which
// the garbage collector does not scan. A chunk stays alive while any view
// of it does.
type chunkReader struct {
	src  io.Reader
	buf  []byte // the current chunk; buf[pos:] is read but not consumed
	pos  int
	left int64       // bytes of src not yet read into a chunk
	err  error       // the error that ended the source, returned once buf is used up
	pre  *prefaulter // where chunks of chunkSize come from while it has some; nil when it has none
}

func newChunkReader(src io.Reader, size int64) *chunkReader {
	return &chunkReader{src: src, left: size}
}

// fill makes at least n bytes available at buf[pos:], starting a new chunk
// when the current one has no room for them (the unconsumed tail moves to
// the new chunk). It reads no more than the source holds, so a chunk is
// never larger than what is left of the file. When fewer than n bytes are
// left it reads them all and returns io.ErrUnexpectedEOF (or the source's
// error).
func (c *chunkReader) fill(n int) error {
	have := len(c.buf) - c.pos
	if have >= n {
		return nil
	}
	if c.err != nil {
		return c.err
	}
	short := int64(n-have) > c.left
	if short {
		n = have + int(c.left)
	}
	if c.pos+n > cap(c.buf) {
		size := int(min(int64(max(n, chunkSize)), int64(have)+c.left))
		next := c.chunk(size)[:have]
		copy(next, c.buf[c.pos:])
		c.buf, c.pos = next, 0
	}
	if end := len(c.buf); c.pos+n > end {
		got, err := io.ReadAtLeast(c.src, c.buf[end:cap(c.buf)], c.pos+n-end)
		c.buf = c.buf[:end+got]
		c.left -= int64(got)
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			c.err = err
			return err
		}
	}
	if short {
		c.err = io.ErrUnexpectedEOF
		return c.err
	}
	return nil
}

// chunk returns an empty chunk of capacity size: the prefaulter's next one
// when size is chunkSize and it has one left, otherwise a new one.
func (c *chunkReader) chunk(size int) []byte {
	if c.pre != nil && size == chunkSize {
		if b := c.pre.next(); b != nil {
			return b
		}
		c.pre = nil
	}
	return make([]byte, 0, size)
}

// ReadByte consumes one byte.
func (c *chunkReader) ReadByte() (byte, error) {
	if err := c.fill(1); err != nil {
		return 0, err
	}
	b := c.buf[c.pos]
	c.pos++
	return b, nil
}

// view consumes n bytes and returns them in place, capacity n: the caller
// may keep them and must not write to them. On a short source it consumes
// what is left and returns the source's error (io.ErrUnexpectedEOF).
func (c *chunkReader) view(n int) ([]byte, error) {
	if err := c.fill(n); err != nil {
		rest := c.buf[c.pos:]
		c.pos = len(c.buf)
		return rest, err
	}
	v := c.buf[c.pos : c.pos+n : c.pos+n]
	c.pos += n
	return v, nil
}
