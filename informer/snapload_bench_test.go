package informer

import (
	"context"
	"fmt"
	"iter"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/internal/snapfile"
	"github.com/kwatch/kwatch/store"
	"github.com/kwatch/kwatch/watch"
)

// BenchmarkSnapshotLoad stages a snapshot of 100,000 protobuf objects of
// about a harness pod's size (2.6 KB) as a restart does: open, read, parse
// and key every record, verify the checksum.
func BenchmarkSnapshotLoad(b *testing.B) {
	const n = 100_000
	path := filepath.Join(b.TempDir(), "pods.snap")
	h := snapfile.Header{Version: "v1", Resource: "pods", Server: "s", ResourceVersion: "9", Encoding: "protobuf", Count: n}
	if err := snapfile.Write(context.Background(), path, h, benchRecords(n, 2500), snapfile.WriteOptions{}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		st := store.New(store.Options[*watch.Raw]{})
		r, err := snapfile.Open(path, snapfile.ReadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		repl, err := stageRecords(r, st)
		r.Close()
		if err != nil {
			b.Fatal(err)
		}
		st.Commit(repl, h.ResourceVersion)
	}
}

// benchRecords are n records of protobuf objects with pad bytes of
// annotation each.
func benchRecords(n, pad int) iter.Seq2[snapfile.Record, error] {
	annotation := strings.Repeat("x", pad)
	return func(yield func(snapfile.Record, error) bool) {
		for i := range n {
			m := metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
				Name: fmt.Sprintf("pod-%d", i), Namespace: fmt.Sprintf("ns-%d", i%50), ResourceVersion: fmt.Sprint(1000 + i),
				UID: "uid", Labels: map[string]string{"app": "a"}, Annotations: map[string]string{"pad": annotation}}}
			pb, err := m.Marshal()
			raw := new(watch.Raw)
			if err == nil {
				err = raw.Unmarshal(pb)
			}
			if !yield(snapfile.Record{Key: m.Namespace + "/" + m.Name, Data: raw.AppendRecord(nil)}, err) {
				return
			}
		}
	}
}
