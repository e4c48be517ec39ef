package watch

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// frameAll frames r until the first error and returns the frames (copied),
// their offsets and the error.
func frameAll(r io.Reader, limit int) ([]string, []int64, error) {
	f := newFramer(r, limit, "MaxFrameSize", "watch event")
	var frames []string
	var offs []int64
	for {
		fr, off, err := f.frame(true)
		if err != nil {
			return frames, offs, err
		}
		frames = append(frames, string(fr))
		offs = append(offs, off)
	}
}

func TestFramerSplitsObjects(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", nil},
		{"one", `{}`, []string{`{}`}},
		{"adjacent", `{}{"a":1}`, []string{`{}`, `{"a":1}`}},
		{"braces in strings", `{"a":"}{]["}{"b":"{"}`, []string{`{"a":"}{]["}`, `{"b":"{"}`}},
		{"escaped quote", `{"a":"\"}"}{}`, []string{`{"a":"\"}"}`, `{}`}},
		{"escaped backslash before quote", `{"a":"\\"}{}`, []string{`{"a":"\\"}`, `{}`}},
		{"three backslashes", `{"a":"\\\"}"}{}`, []string{`{"a":"\\\"}"}`, `{}`}},
		{"backslash run", `{"a":"` + strings.Repeat(`\\`, 100) + `"}{}`, []string{`{"a":"` + strings.Repeat(`\\`, 100) + `"}`, `{}`}},
		{"escaped key quote", `{"a\"}":{"b":[{},[]]}}`, []string{`{"a\"}":{"b":[{},[]]}}`}},
		{"unicode", `{"a":"✓ \u00e9"} {"b":"\ud83d\ude00"}`, []string{`{"a":"✓ \u00e9"}`, `{"b":"\ud83d\ude00"}`}},
		{"whitespace", " \t\r\n{ \"a\" : [ 1 , 2 ] }\n\n{\n}\r\n", []string{`{ "a" : [ 1 , 2 ] }`, "{\n}"}},
	}
	for _, tt := range tests {
		for _, oneByte := range []bool{false, true} {
			var r io.Reader = strings.NewReader(tt.in)
			if oneByte {
				r = iotest.OneByteReader(r)
			}
			got, offs, err := frameAll(r, 1<<20)
			assert.Equal(t, io.EOF, err, "%s: a clean end is a bare io.EOF", tt.name)
			assert.Equal(t, tt.want, got, "%s oneByte=%v", tt.name, oneByte)
			for i, off := range offs {
				assert.Equal(t, got[i], tt.in[off:off+int64(len(got[i]))], "%s: frame %d offset %d", tt.name, i, off)
			}
		}
	}
}

func TestFramerOffsetsAcrossCompaction(t *testing.T) {
	data := syntheticStream(150, 9)
	for seed := range uint64(6) {
		frames, offs, err := frameAll(newChunkReader(data, seed, 9000), DefaultMaxFrameSize)
		require.Equal(t, io.EOF, err)
		require.Len(t, frames, 150)
		for i, off := range offs {
			require.Equal(t, frames[i], string(data[off:off+int64(len(frames[i]))]), "seed %d frame %d", seed, i)
		}
	}
}

func TestFramerLimitBoundary(t *testing.T) {
	ev := `{"a":"` + strings.Repeat("x", 94) + `"}` // 102 bytes
	require.Len(t, ev, 102)
	for _, tt := range []struct {
		limit   int
		wantErr error
	}{{101, ErrFrameTooLarge}, {102, io.EOF}, {103, io.EOF}} {
		frames, _, err := frameAll(strings.NewReader(ev+ev), tt.limit)
		assert.ErrorIs(t, err, tt.wantErr, "limit %d", tt.limit)
		if tt.wantErr == io.EOF {
			assert.Len(t, frames, 2, "limit %d", tt.limit)
		}
	}
}

func TestFramerBufferGrowsAndShrinks(t *testing.T) {
	big := `{"a":"` + strings.Repeat("y", 300_000) + `"}`
	var b strings.Builder
	b.WriteString(big)
	for range shrinkAfter + 5 {
		b.WriteString(`{"small":true}`)
	}
	b.WriteString(big)
	f := newFramer(iotest.HalfReader(strings.NewReader(b.String())), DefaultMaxFrameSize, "MaxFrameSize", "watch event")
	fr, _, err := f.frame(true)
	require.NoError(t, err)
	assert.Len(t, fr, len(big))
	assert.Greater(t, len(f.buf), initialBufferSize, "grown for the large frame")
	for range shrinkAfter + 5 {
		_, _, err = f.frame(true)
		require.NoError(t, err)
	}
	// The next read finds the buffer drained after many small frames.
	fr, _, err = f.frame(true)
	require.NoError(t, err)
	assert.Len(t, fr, len(big))
	_, _, err = f.frame(true)
	assert.Equal(t, io.EOF, err)
	assert.LessOrEqual(t, len(f.buf), DefaultMaxFrameSize+1, "the buffer never exceeds the limit")
}

func TestFramerShrinksWhenIdle(t *testing.T) {
	big := `{"a":"` + strings.Repeat("y", 300_000) + `"}`
	in := big + strings.Repeat(`{"small":true}`, shrinkAfter+1)
	r := &errReader{data: []byte(in), err: errBoom}
	f := newFramer(r, DefaultMaxFrameSize, "MaxFrameSize", "watch event")
	for range shrinkAfter + 2 {
		_, _, err := f.frame(true)
		require.NoError(t, err)
	}
	_, _, err := f.frame(true) // drained: the framer makes room to read and shrinks
	require.ErrorIs(t, err, errBoom)
	assert.Equal(t, initialBufferSize, len(f.buf), "shrunk back after many small frames")
}

func TestFramerValues(t *testing.T) {
	in := ` "a\"b" -1.5e3 true null {"x":[1]} [[],{}] "" 0`
	f := newFramer(strings.NewReader(in), 1<<10, "maxItemSize", "list body")
	want := []string{`"a\"b"`, `-1.5e3`, `true`, `null`, `{"x":[1]}`, `[[],{}]`, `""`}
	for _, w := range want {
		v, off, err := f.value()
		require.NoError(t, err, w)
		assert.Equal(t, w, string(v))
		assert.Equal(t, w, in[off:off+int64(len(v))])
	}
	_, _, err := f.value() // "0" at the very end: a list body never ends in a scalar
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
}

func TestFramerValueRejects(t *testing.T) {
	for _, in := range []string{"}", "]", ":", ",", "#", "\x00"} {
		_, _, err := newFramer(strings.NewReader(in), 1<<10, "maxItemSize", "list body").value()
		assert.ErrorIs(t, err, ErrUnexpectedByte, "%q", in)
	}
}

func TestFramerErrorIsSticky(t *testing.T) {
	f := newFramer(strings.NewReader(`{}x{}`), 1<<10, "MaxFrameSize", "watch event")
	_, _, err := f.frame(true)
	require.NoError(t, err)
	_, _, err1 := f.frame(true)
	_, _, err2 := f.frame(true)
	require.ErrorIs(t, err1, ErrUnexpectedByte)
	assert.Same(t, err1, err2)
	var de *DecodeError
	require.True(t, errors.As(err1, &de))
	assert.Equal(t, int64(2), de.Offset)
}

func TestFramerBufferedOnly(t *testing.T) {
	f := newFramer(strings.NewReader(`{"a":1}{"b":2}{"c"`), 1<<10, "MaxFrameSize", "watch event")
	fr, _, err := f.frame(false)
	require.NoError(t, err)
	assert.Nil(t, fr, "nothing buffered yet: no frame and no read")
	fr, _, err = f.frame(true)
	require.NoError(t, err)
	assert.Equal(t, `{"a":1}`, string(fr))
	fr2, _, err := f.frame(false)
	require.NoError(t, err)
	assert.Equal(t, `{"b":2}`, string(fr2))
	assert.Equal(t, `{"a":1}`, string(fr), "frames taken without reading stay valid together")
	fr, _, err = f.frame(false)
	require.NoError(t, err)
	assert.Nil(t, fr, "the incomplete third frame waits for a read")
	_, _, err = f.frame(true)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
}

// badCountReader claims more bytes than it was given.
type badCountReader struct{}

func (badCountReader) Read(p []byte) (int, error) { return len(p) + 1, nil }

func TestFramerBadReaderCount(t *testing.T) {
	_, _, err := newFramer(badCountReader{}, 1<<10, "MaxFrameSize", "watch event").frame(true)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "reader returned")
}

func TestEscapedQuote(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want bool
	}{{`"a"`, false}, {`"\"`, true}, {`"\\"`, false}, {`"\\\"`, true}, {`\"`, true}} {
		b := []byte(tt.s)
		assert.Equal(t, tt.want, escapedQuote(b, bytes.LastIndexByte(b, '"')), "%s", tt.s)
	}
}
