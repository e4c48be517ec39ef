package snapfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
)

// TestDamageAfterManyBatches: a key that is not UTF-8 at record 700 of
// 2,000 (batches of batchLen read ahead) ends Records with the damage, after
// each has seen exactly the 700 records before it, in order.
func TestDamageAfterManyBatches(t *testing.T) {
	recs := testRecords(2000)
	b := encodeBytes(t, testHeader(len(recs)), recs)
	at := bytes.Index(b, []byte(recs[700].Key))
	require.Positive(t, at)
	b[at] = 0xff
	_, got, err := decodeBytes(b, ReadOptions{})
	var ce *CorruptError
	require.ErrorAs(t, err, &ce)
	require.Contains(t, ce.What, "record 700: key is not valid UTF-8")
	require.Equal(t, normalize(recs[:700]), normalize(got))
}

// TestEachErrorAfterManyBatches: each's error at record 600 stops the
// reading there, names record 599's index and key, and no record after it
// is passed on.
func TestEachErrorAfterManyBatches(t *testing.T) {
	recs := testRecords(2000)
	path := writeFile(t, t.TempDir(), testHeader(len(recs)), recs)
	errStop := errors.New("stop")
	n := 0
	_, err := Read(path, ReadOptions{}, func(r Record) error {
		require.Equal(t, recs[n].Key, r.Key, "records out of order")
		if n++; n == 600 {
			return errStop
		}
		return nil
	})
	require.ErrorIs(t, err, errStop)
	require.ErrorContains(t, err, fmt.Sprintf("record 599 (%q)", recs[599].Key))
	require.Equal(t, 600, n)
}

// TestEachPanicLetsTheReaderGo: a panic in each leaves no reading
// goroutine behind (the bubble would end in a deadlock with one blocked on
// its next batch).
func TestEachPanicLetsTheReaderGo(t *testing.T) {
	recs := testRecords(2000)
	b := encodeBytes(t, testHeader(len(recs)), recs)
	synctest.Test(t, func(t *testing.T) {
		defer func() { require.Equal(t, "boom", recover()) }()
		_, _, _ = decodeEach(b, func(Record) error { panic("boom") })
	})
}

// decodeEach reads a snapshot from memory with each.
func decodeEach(b []byte, each func(Record) error) (Header, []Record, error) {
	return decodeEachFrom(bytes.NewReader(b), int64(len(b)), each)
}

// decodeEachFrom reads a snapshot of size bytes from src with each.
func decodeEachFrom(src io.Reader, size int64, each func(Record) error) (Header, []Record, error) {
	opts, _ := ReadOptions{}.withDefaults()
	r, err := newReader("mem", src, size, opts)
	if err != nil {
		return Header{}, nil, err
	}
	return r.Header(), nil, r.Records(each)
}
