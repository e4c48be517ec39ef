package snapfile

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// testHeader is a header with every field set.
func testHeader(count int) Header {
	return Header{
		Group: "apps", Version: "v1", Resource: "deployments",
		Namespace: "kube-system", LabelSelector: "app=web,tier!=db", FieldSelector: "metadata.name!=x",
		Server: "https://cluster.example:6443 uid-1234", ResourceVersion: "123456789", Encoding: "protobuf",
		Created: time.Date(2026, 12, 1, 15, 4, 5, 123456789, time.UTC), Count: uint64(count),
	}
}

// testRecords are n records of varied sizes, the i-th data (i%100)*7 bytes.
func testRecords(n int) []Record {
	recs := make([]Record, n)
	for i := range recs {
		data := bytes.Repeat([]byte{byte(i)}, (i%100)*7)
		recs[i] = Record{Key: fmt.Sprintf("ns-%d/pod-%d", i%3, i), Data: data}
	}
	return recs
}

// seq yields recs.
func seq(recs []Record) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		for _, r := range recs {
			if !yield(r, nil) {
				return
			}
		}
	}
}

// encodeBytes is Write's layout in memory, for fuzz seeds and crafted
// files.
func encodeBytes(t testing.TB, h Header, recs []Record) []byte {
	t.Helper()
	hdr, err := encodeHeader(nil, h)
	require.NoError(t, err)
	var buf bytes.Buffer
	enc := &encoder{w: bufio.NewWriter(&buf)}
	require.NoError(t, writeBody(context.Background(), enc, hdr, h.Count, seq(recs)))
	require.NoError(t, enc.w.Flush())
	return buf.Bytes()
}

// decodeBytes reads a snapshot from memory as Read reads a file, with the
// records it passed on before any error.
func decodeBytes(b []byte, opts ReadOptions) (Header, []Record, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return Header{}, nil, err
	}
	r, err := newReader("mem", bytes.NewReader(b), int64(len(b)), opts)
	if err != nil {
		return Header{}, nil, err
	}
	var recs []Record
	err = r.Records(func(rec Record) error {
		recs = append(recs, rec)
		return nil
	})
	return r.Header(), recs, err
}

// readFile reads the snapshot at path, with the records it passed on.
func readFile(t *testing.T, path string, opts ReadOptions) (Header, []Record, error) {
	t.Helper()
	var recs []Record
	h, err := Read(path, opts, func(rec Record) error {
		recs = append(recs, rec)
		return nil
	})
	return h, recs, err
}

// dirNames lists dir, to see that no temporary file was left behind.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// normalize makes empty Data nil, as Write does not tell them apart.
func normalize(recs []Record) []Record {
	out := make([]Record, len(recs))
	for i, r := range recs {
		if len(r.Data) == 0 {
			r.Data = nil
		}
		out[i] = r
	}
	return out
}

func writeFile(t *testing.T, dir string, h Header, recs []Record) string {
	t.Helper()
	path := filepath.Join(dir, "pods.snap")
	require.NoError(t, Write(context.Background(), path, h, seq(recs), WriteOptions{}))
	return path
}

// runtimeHasPermissions says whether file modes mean anything here.
func runtimeHasPermissions() bool { return runtime.GOOS != "windows" }
