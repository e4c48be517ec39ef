package snapfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"testing/synctest"

	"github.com/stretchr/testify/require"
)

// bigRecords are n records of varied sizes around a chunk's, about
// n*chunkSize/2 bytes in all, the i-th filled with byte i.
func bigRecords(n int) []Record {
	recs := make([]Record, n)
	for i := range recs {
		size := (i*7919)%(chunkSize+chunkSize/3) + i%5
		recs[i] = Record{Key: fmt.Sprintf("ns/big-%d", i), Data: bytes.Repeat([]byte{byte(i)}, size)}
	}
	return recs
}

// TestManyChunksFromThePrefaulter reads a file of many more chunks than
// the prefaulter may hold ready, keeping every Data: each holds its own
// record at the end, so no chunk was handed out twice or written after it
// was handed on, and every chunk the prefaulter allocated was used.
func TestManyChunksFromThePrefaulter(t *testing.T) {
	recs := bigRecords(6 * prefaultAhead)
	b := encodeBytes(t, testHeader(len(recs)), recs)
	opts, _ := ReadOptions{}.withDefaults()
	r, err := newReader("mem", bytes.NewReader(b), int64(len(b)), opts)
	require.NoError(t, err)
	want := len(b) / chunkSize
	require.Greater(t, want, 2*prefaultAhead)
	pre := newPrefaulter(r.d.r.left)
	var kept []Record
	require.NoError(t, r.records(func(rec Record) error {
		kept = append(kept, rec)
		return nil
	}, pre))
	require.Equal(t, normalize(recs), normalize(kept))
	for i, c := range pre.chunks {
		require.Nil(t, c, "chunk %d of %d was never handed out", i, want)
	}
}

// TestPrefaulterEndsWithRecords: however Records ends (each's error,
// damage, an I/O error, the end of the file), the prefaulter, which then
// still had chunks to hand out, has ended when it returns, its chunks
// drained; the bubble would also end in a deadlock with it blocked on its
// next chunk.
func TestPrefaulterEndsWithRecords(t *testing.T) {
	recs := bigRecords(4 * prefaultAhead)
	b := encodeBytes(t, testHeader(len(recs)), recs)
	damaged := bytes.Clone(b)
	at := bytes.Index(damaged, []byte(recs[3].Key))
	require.Positive(t, at)
	damaged[at] = 0xff
	errStop := errors.New("stop")
	errDisk := errors.New("disk")
	for _, tc := range []struct {
		name string
		src  io.Reader
		each func(Record) error
		want string // in the error, "" for none
	}{
		{"each fails", bytes.NewReader(b), func(Record) error { return errStop }, "stop"},
		{"damage", bytes.NewReader(damaged), func(Record) error { return nil }, "record 3: key is not valid UTF-8"},
		{"I/O error", io.MultiReader(bytes.NewReader(b[:len(b)/3]), iotest.ErrReader(errDisk)), func(Record) error { return nil }, "disk"},
		{"end of the file", bytes.NewReader(b), func(Record) error { return nil }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				opts, _ := ReadOptions{}.withDefaults()
				r, err := newReader("mem", tc.src, int64(len(b)), opts)
				require.NoError(t, err)
				pre := newPrefaulter(r.d.r.left)
				err = r.records(tc.each, pre)
				if tc.want == "" {
					require.NoError(t, err)
				} else {
					require.ErrorContains(t, err, tc.want)
				}
				select {
				case c, open := <-pre.ready:
					require.False(t, open, "a chunk was left in the prefaulter (%d bytes)", cap(c))
				default:
					t.Fatal("the prefaulter was still running when Records returned")
				}
			})
		})
	}
}

// TestEachPanicWaitsForTheReader: when each panics, Records unwinds only
// once its reader has ended, even when the reader is blocked reading
// (here on a source that blocks until released): nothing reads the file
// after Records is gone. The helper goroutine looks, once everything else
// is blocked, whether the panic got out before the reader was released.
func TestEachPanicWaitsForTheReader(t *testing.T) {
	recs := make([]Record, 2000)
	for i := range recs {
		recs[i] = Record{Key: fmt.Sprintf("ns/r%d", i), Data: bytes.Repeat([]byte{byte(i)}, 4096)}
	}
	b := encodeBytes(t, testHeader(len(recs)), recs)
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		src := &blockingReader{r: bytes.NewReader(b), after: 6, release: release}
		var unwound atomic.Bool
		early := make(chan bool, 1)
		go func() {
			synctest.Wait() // the reader blocked on its 7th read, the panicking goroutine wherever it waits
			early <- unwound.Load()
			close(release)
		}()
		func() {
			defer func() { require.Equal(t, "boom", recover()) }()
			_, _, _ = decodeEachFrom(src, int64(len(b)), func(Record) error { panic("boom") })
		}()
		unwound.Store(true)
		require.False(t, <-early, "the panic left Records while its reader was still reading")
	})
}

// blockingReader reads from r, its read after the first after blocking
// until release is closed.
type blockingReader struct {
	r       io.Reader
	after   int
	reads   int
	release <-chan struct{}
}

func (b *blockingReader) Read(p []byte) (int, error) {
	if b.reads++; b.reads > b.after {
		<-b.release
	}
	return b.r.Read(p)
}

// TestPrefaulterStops: a prefaulter hands out its chunks in order, empty
// and of chunkSize, then nil; stopped, it ends with chunks left and its
// drain returns.
func TestPrefaulterStops(t *testing.T) {
	p := newPrefaulter(3*chunkSize + 5)
	require.Len(t, p.chunks, 3, "the last, shorter, chunk is not the prefaulter's")
	synctest.Test(t, func(t *testing.T) {
		go p.run(make(chan struct{}))
		for range 3 {
			c := p.next()
			require.Equal(t, 0, len(c))
			require.Equal(t, chunkSize, cap(c))
			require.Equal(t, make([]byte, chunkSize), c[:chunkSize], "a faulted chunk is not all zeros")
		}
		require.Nil(t, p.next())
	})

	synctest.Test(t, func(t *testing.T) {
		// Made in the bubble, so that a wait on their channels is durable.
		p := newPrefaulter(4 * prefaultAhead * chunkSize)
		stop := make(chan struct{})
		go p.run(stop)
		require.NotNil(t, p.next())
		synctest.Wait() // the prefaulter is blocked with its chunks ahead faulted in
		taken := 0
		for _, c := range p.chunks {
			if c == nil {
				taken++
			}
		}
		require.Equal(t, 1+prefaultAhead, taken, "one chunk handed out, prefaultAhead faulted in ahead of the reader")
		close(stop)
		p.drain()
		require.NotNil(t, p.chunks[len(p.chunks)-1], "a stopped prefaulter handed out every chunk")
	})

	synctest.Test(t, func(t *testing.T) {
		p := newPrefaulter(4 * chunkSize)
		stop := make(chan struct{})
		close(stop)
		p.run(stop)
		for i, c := range p.chunks {
			require.NotNil(t, c, "chunk %d was faulted in after the stop", i)
		}
	})
}

// TestFaultKeepsZeros: faulting a buffer in, by either means, leaves it
// zeros.
func TestFaultKeepsZeros(t *testing.T) {
	for name, f := range map[string]func([]byte){"fault": fault, "touch": touch} {
		b := make([]byte, 5*4096+17)
		f(b)
		f(b[1:]) // not aligned to a page
		f(nil)
		require.Equal(t, make([]byte, len(b)), b, name)
	}
}
