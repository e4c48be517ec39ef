package snapfile

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
)

// benchRecords are n records of about the size of a Pod in protobuf.
func benchRecords(n int) []Record {
	data := make([]byte, 4<<10)
	recs := make([]Record, n)
	for i := range recs {
		recs[i] = Record{Key: fmt.Sprintf("namespace-%d/pod-%d", i%50, i), Data: data}
	}
	return recs
}

func BenchmarkWrite(b *testing.B) {
	recs := benchRecords(10_000)
	path := filepath.Join(b.TempDir(), "bench.snap")
	b.SetBytes(int64(len(encodeBytes(b, testHeader(len(recs)), recs))))
	for b.Loop() {
		if err := Write(context.Background(), path, testHeader(len(recs)), seq(recs), WriteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRead(b *testing.B) {
	recs := benchRecords(10_000)
	path := filepath.Join(b.TempDir(), "bench.snap")
	if err := Write(context.Background(), path, testHeader(len(recs)), seq(recs), WriteOptions{}); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(encodeBytes(b, testHeader(len(recs)), recs))))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Read(path, ReadOptions{}, func(Record) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}
