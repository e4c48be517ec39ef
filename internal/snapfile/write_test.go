package snapfile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRoundTrip(t *testing.T) {
	large := Record{Key: "default/large", Data: bytes.Repeat([]byte("0123456789abcdef"), 5<<20/16+3)}
	tests := []struct {
		name string
		recs []Record
	}{
		{"zero records", nil},
		{"one record", testRecords(1)[:1]},
		{"one empty key and data", []Record{{Key: "", Data: nil}}},
		{"many records", testRecords(2000)},
		{"large records", []Record{testRecords(2)[1], large, {Key: "ünïcode/ключ", Data: large.Data[:bufferSize+1]}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			want := testHeader(len(tt.recs))
			path := writeFile(t, t.TempDir(), want, tt.recs)
			got, recs, err := readFile(t, path, ReadOptions{})
			require.NoError(t, err)
			if !got.Created.Equal(want.Created) {
				t.Errorf("Created: got %v, want %v", got.Created, want.Created)
			}
			got.Created = want.Created
			require.Equal(t, want, got, "header")
			require.Equal(t, normalize(tt.recs), normalize(recs), "records")

			st, err := os.Stat(path)
			require.NoError(t, err)
			if runtimeHasPermissions() && st.Mode().Perm() != 0o600 {
				t.Errorf("mode: got %v, want 0600", st.Mode().Perm())
			}
		})
	}
}

// TestDataIsNotReused checks that each may keep Record.Data: every slice
// still holds its record after the whole file is read.
func TestDataIsNotReused(t *testing.T) {
	recs := testRecords(300)
	path := writeFile(t, t.TempDir(), testHeader(len(recs)), recs)
	var kept [][]byte
	_, err := Read(path, ReadOptions{}, func(r Record) error {
		kept = append(kept, r.Data)
		return nil
	})
	require.NoError(t, err)
	for i, d := range kept {
		if !bytes.Equal(d, recs[i].Data) {
			t.Fatalf("record %d's data changed after it was passed on", i)
		}
	}
}

// TestRecordsAcrossChunks reads records of every size around the reader's
// chunk (records that end on a chunk's last byte, that span two chunks,
// that are larger than a chunk), keeps every Data, then appends to each:
// each kept Data holds its record, and an append never writes into the
// record after it (its capacity ends at its length).
func TestRecordsAcrossChunks(t *testing.T) {
	var recs []Record
	for i, size := range []int{chunkSize - 40, 1, 39, chunkSize, 0, 2*chunkSize + 7, 3, chunkSize/2 + 1, chunkSize/2 - 1, 5} {
		recs = append(recs, Record{Key: fmt.Sprintf("ns/r%d", i), Data: bytes.Repeat([]byte{byte('a' + i)}, size)})
	}
	path := writeFile(t, t.TempDir(), testHeader(len(recs)), recs)
	var kept []Record
	_, err := Read(path, ReadOptions{}, func(r Record) error {
		require.Equal(t, len(r.Data), cap(r.Data), "record %q: capacity past its length", r.Key)
		kept = append(kept, r)
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, normalize(recs), normalize(kept))
	for i := range kept {
		_ = append(kept[i].Data, '!')
	}
	require.Equal(t, normalize(recs), normalize(kept), "an append to one record's Data changed another's")
}

func TestWriteCreatedDefaultsToNow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := testHeader(0)
		h.Created = time.Time{}
		path := writeFile(t, t.TempDir(), h, nil)
		got, _, err := readFile(t, path, ReadOptions{})
		require.NoError(t, err)
		if !got.Created.Equal(time.Now()) {
			t.Errorf("Created: got %v, want the (fake) current time %v", got.Created, time.Now())
		}
	})
}

// TestWriteFailureKeepsOldFile fails Write in every way it can fail midway
// and checks that the previous snapshot at path is untouched and that no
// temporary file is left.
func TestWriteFailureKeepsOldFile(t *testing.T) {
	recs := testRecords(10)
	errBoom := errors.New("store closed")
	failing := func(yield func(Record, error) bool) {
		for i, r := range recs {
			if i == 5 {
				yield(Record{}, errBoom)
				return
			}
			if !yield(r, nil) {
				return
			}
		}
	}
	tests := []struct {
		name    string
		h       Header
		records func(cancel context.CancelFunc) iter.Seq2[Record, error]
		wantIs  error
	}{
		{"records error", testHeader(len(recs)), func(context.CancelFunc) iter.Seq2[Record, error] { return failing }, errBoom},
		{"ctx cancelled midway", testHeader(len(recs)), func(cancel context.CancelFunc) iter.Seq2[Record, error] {
			return func(yield func(Record, error) bool) {
				for i, r := range recs {
					if i == 3 {
						cancel()
					}
					if !yield(r, nil) {
						return
					}
				}
			}
		}, context.Canceled},
		{"more records than Count", testHeader(len(recs) - 1), func(context.CancelFunc) iter.Seq2[Record, error] { return seq(recs) }, nil},
		{"fewer records than Count", testHeader(len(recs) + 1), func(context.CancelFunc) iter.Seq2[Record, error] { return seq(recs) }, nil},
		{"key not UTF-8", testHeader(1), func(context.CancelFunc) iter.Seq2[Record, error] {
			return seq([]Record{{Key: "a\xffb"}})
		}, nil},
		{"no resource version", Header{Count: 0}, func(context.CancelFunc) iter.Seq2[Record, error] { return seq(nil) }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := writeFile(t, dir, testHeader(2), testRecords(2))
			before, err := os.ReadFile(path)
			require.NoError(t, err)

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			err = Write(ctx, path, tt.h, tt.records(cancel), WriteOptions{})
			require.Error(t, err)
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("error: got %v, want one wrapping %v", err, tt.wantIs)
			}
			after, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, before, after, "the old snapshot changed")
			require.Equal(t, []string{"pods.snap"}, dirNames(t, dir), "files in the directory")
		})
	}
}

func TestWriteCancelledBeforeStart(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := Write(ctx, filepath.Join(dir, "x.snap"), testHeader(1), seq(testRecords(1)), WriteOptions{})
	require.ErrorIs(t, err, context.Canceled)
	require.Empty(t, dirNames(t, dir))
}

func TestWriteBadOptionsAndPaths(t *testing.T) {
	dir := t.TempDir()
	err := Write(context.Background(), filepath.Join(dir, "x.snap"), testHeader(0), seq(nil), WriteOptions{BytesPerSecond: -1})
	require.ErrorContains(t, err, "BytesPerSecond")
	err = Write(context.Background(), filepath.Join(dir, "missing", "x.snap"), testHeader(0), seq(nil), WriteOptions{})
	require.ErrorIs(t, err, os.ErrNotExist)
	h := testHeader(0)
	h.Server = string(bytes.Repeat([]byte("s"), maxHeaderSize))
	err = Write(context.Background(), filepath.Join(dir, "x.snap"), h, seq(nil), WriteOptions{})
	require.ErrorContains(t, err, "header is")
	require.Empty(t, dirNames(t, dir))
}

// TestWritePacing writes a file of known size at a known rate in a
// synctest bubble, whose fake clock advances only while Write waits for
// the limiter: the elapsed fake time is the pacing itself.
func TestWritePacing(t *testing.T) {
	recs := []Record{{Key: "a/big", Data: bytes.Repeat([]byte{7}, 1<<20)}, {Key: "a/small", Data: []byte("x")}}
	size := int64(len(encodeBytes(t, testHeader(len(recs)), recs)))
	// The bucket starts full with min(64 KiB, rate) tokens; the rest of
	// the file waits for tokens at the rate.
	paced := func(bps int) time.Duration {
		burst := int64(min(bufferSize, bps))
		return time.Duration(float64(size-burst) / float64(bps) * float64(time.Second))
	}
	tests := []struct {
		bps  int
		want time.Duration
	}{
		{0, 0},
		{256 << 10, paced(256 << 10)},
		{10 << 10, paced(10 << 10)},
		{1 << 30, paced(1 << 30)},
	}
	for _, tt := range tests {
		synctest.Test(t, func(t *testing.T) {
			dir := t.TempDir()
			start := time.Now()
			err := Write(context.Background(), filepath.Join(dir, "p.snap"), testHeader(len(recs)), seq(recs), WriteOptions{BytesPerSecond: tt.bps})
			require.NoError(t, err)
			got := time.Since(start)
			if got < tt.want-time.Millisecond || got > tt.want+time.Millisecond {
				t.Errorf("BytesPerSecond %d, %d bytes: took %v, want %v", tt.bps, size, got, tt.want)
			}
		})
	}
}

// TestWritePacingCancelled cancels a paced Write while it waits for the
// limiter: it stops then, not when the file would be done, and leaves
// nothing behind.
func TestWritePacingCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		recs := []Record{{Key: "a/big", Data: make([]byte, 1<<20)}}
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			time.Sleep(2 * time.Second)
			cancel()
		}()
		start := time.Now()
		err := Write(ctx, filepath.Join(dir, "p.snap"), testHeader(1), seq(recs), WriteOptions{BytesPerSecond: 64 << 10})
		require.ErrorIs(t, err, context.Canceled)
		if got := time.Since(start); got != 2*time.Second {
			t.Errorf("cancelled after 2s, returned after %v", got)
		}
		require.Empty(t, dirNames(t, dir))
	})
}

func TestCheck(t *testing.T) {
	want := testHeader(3)
	tests := []struct {
		name   string
		change func(*Header)
		field  string
		msg    string
	}{
		{"same", func(*Header) {}, "", ""},
		{"other RV, time and count", func(h *Header) { h.ResourceVersion = "1"; h.Created = time.Time{}; h.Count = 9 }, "", ""},
		{"server", func(h *Header) { h.Server = "https://other" }, FieldServer,
			`snapshot is for another server: "https://other", not "https://cluster.example:6443 uid-1234"`},
		{"group", func(h *Header) { h.Group = "" }, FieldResource, "snapshot is of another resource: v1 deployments, not apps/v1 deployments"},
		{"version", func(h *Header) { h.Version = "v1beta1" }, FieldResource, "snapshot is of another resource: apps/v1beta1 deployments, not apps/v1 deployments"},
		{"resource", func(h *Header) { h.Resource = "replicasets" }, FieldResource, "snapshot is of another resource: apps/v1 replicasets, not apps/v1 deployments"},
		{"namespace", func(h *Header) { h.Namespace = "" }, FieldNamespace, `snapshot is of all namespaces, not namespace "kube-system"`},
		{"label selector", func(h *Header) { h.LabelSelector = "" }, FieldLabelSelector, `snapshot was taken with label selector "", not "app=web,tier!=db"`},
		{"field selector", func(h *Header) { h.FieldSelector = "a=b" }, FieldFieldSelector, `snapshot was taken with field selector "a=b", not "metadata.name!=x"`},
		{"encoding", func(h *Header) { h.Encoding = "json" }, FieldEncoding, `snapshot holds objects encoded as "json", not "protobuf"`},
		{"server before encoding", func(h *Header) { h.Encoding = "json"; h.Server = "x" }, FieldServer, `snapshot is for another server: "x", not "https://cluster.example:6443 uid-1234"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := want
			tt.change(&got)
			err := Check(got, want)
			if tt.field == "" {
				require.NoError(t, err)
				return
			}
			var me *MismatchError
			require.ErrorAs(t, err, &me)
			if me.Field != tt.field || err.Error() != tt.msg {
				t.Errorf("got field %q, %q; want %q, %q", me.Field, err, tt.field, tt.msg)
			}
		})
	}
}
