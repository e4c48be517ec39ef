package snapfile

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
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

// TestPrefaulterEndsWithRecords: however Records ends early (each's
// error, a panic in each, damage), it returns only once the prefaulter,
// which then still had chunks to hand out, has ended: the bubble would
// end in a deadlock with it blocked on its next chunk.
func TestPrefaulterEndsWithRecords(t *testing.T) {
	recs := bigRecords(4 * prefaultAhead)
	b := encodeBytes(t, testHeader(len(recs)), recs)
	damaged := bytes.Clone(b)
	at := bytes.Index(damaged, []byte(recs[3].Key))
	require.Positive(t, at)
	damaged[at] = 0xff
	errStop := errors.New("stop")
	for _, tc := range []struct {
		name string
		file []byte
		each func(Record) error
		want string
	}{
		{"each fails", b, func(Record) error { return errStop }, "stop"},
		{"damage", damaged, func(Record) error { return nil }, "record 3: key is not valid UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				_, _, err := decodeEach(tc.file, tc.each)
				require.ErrorContains(t, err, tc.want)
			})
		})
	}
	t.Run("each panics", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			defer func() { require.Equal(t, "boom", recover()) }()
			_, _, _ = decodeEach(b, func(Record) error { panic("boom") })
		})
	})
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
		synctest.Wait() // the prefaulter is blocked with prefaultAhead chunks ready
		close(stop)
		p.drain()
		require.NotNil(t, p.chunks[len(p.chunks)-1], "a stopped prefaulter handed out every chunk")
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
