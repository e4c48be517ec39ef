package informer

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kwatch/kwatch/internal/snapfile"
	"github.com/kwatch/kwatch/store"
	"github.com/kwatch/kwatch/watch"
)

// BenchmarkSnapshotLoad stages a snapshot of 100,000 objects of about a
// harness pod's size (2.6 KB) and metadata (labels, an owner, managed
// fields) as a restart does: open, read, parse and key every record,
// verify the checksum. The protobuf case is a pod's; the JSON one is a
// custom resource's, which has no protobuf form.
func BenchmarkSnapshotLoad(b *testing.B) {
	for _, proto := range []bool{true, false} {
		name := map[bool]string{true: "protobuf", false: "json"}[proto]
		b.Run(name, func(b *testing.B) { benchSnapshotLoad(b, proto) })
	}
}

func benchSnapshotLoad(b *testing.B, proto bool) {
	const n = 100_000
	path := filepath.Join(b.TempDir(), "pods.snap")
	h := snapfile.Header{Version: "v1", Resource: "pods", Server: "s", ResourceVersion: "9", Encoding: "protobuf", Count: n}
	if !proto {
		h.Encoding = "json"
	}
	if err := snapfile.Write(context.Background(), path, h, benchRecords(n, 1700, proto), snapfile.WriteOptions{}); err != nil {
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

// benchRecords are n records of objects (protobuf or JSON) with a pod's
// metadata and pad bytes of annotation each.
func benchRecords(n, pad int, proto bool) iter.Seq2[snapfile.Record, error] {
	annotation := strings.Repeat("x", pad)
	return func(yield func(snapfile.Record, error) bool) {
		for i := range n {
			m := benchMeta(i, annotation)
			raw := new(watch.Raw)
			var err error
			if proto {
				var pb []byte
				if pb, err = m.Marshal(); err == nil {
					err = raw.Unmarshal(pb)
				}
			} else {
				var js []byte
				if js, err = json.Marshal(m); err == nil {
					err = raw.UnmarshalJSON(js)
				}
			}
			if !yield(snapfile.Record{Key: m.Namespace + "/" + m.Name, Data: raw.AppendRecord(nil)}, err) {
				return
			}
		}
	}
}

// benchMeta is the metadata of a pod of a ReplicaSet, as the harness's
// pods have it: five labels, an owner, two managedFields entries.
func benchMeta(i int, annotation string) *metav1.PartialObjectMetadata {
	fields := &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{".":{},"f:app":{},"f:tier":{}}},"f:spec":{"f:containers":{}}}`)}
	yes := true
	return &metav1.PartialObjectMetadata{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("web-7d4b9c8f5-%05d", i), Namespace: fmt.Sprintf("team-%d", i%50),
			ResourceVersion: fmt.Sprint(1000 + i), UID: types.UID(fmt.Sprintf("6f1c2b1e-0000-4000-8000-%012d", i)),
			Generation: 1, CreationTimestamp: metav1.Unix(1_700_000_000, 0),
			Labels: map[string]string{"app": "web", "tier": "frontend", "pod-template-hash": "7d4b9c8f5",
				"team": fmt.Sprint("team-", i%50), "release": "stable"},
			Annotations: map[string]string{"pad": annotation},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7d4b9c8f5",
				UID: "0b9d7e3a-0000-4000-8000-000000000001", Controller: &yes, BlockOwnerDeletion: &yes}},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
					FieldsType: "FieldsV1", FieldsV1: fields},
				{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
					FieldsType: "FieldsV1", FieldsV1: fields, Subresource: "status"},
			},
		}}
}
