package snapfile_test

import (
	"context"
	"fmt"
	"log"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/kwatch/kwatch/internal/snapfile"
)

// An informer writes its store, then on start loads it only if it is its
// own and intact, staging the records until Read has verified the file.
func Example() {
	dir, err := os.MkdirTemp("", "snapfile-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "pods.snap")

	self := snapfile.Header{Version: "v1", Resource: "pods", Server: "https://cluster.example uid-1", Encoding: "protobuf"}
	store := map[string][]byte{"default/a": []byte("pod a"), "default/b": []byte("pod b")}

	h := self
	h.ResourceVersion = "4711"
	h.Created = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	h.Count = uint64(len(store))
	records := func(yield func(snapfile.Record, error) bool) {
		for _, k := range slices.Sorted(maps.Keys(store)) {
			if !yield(snapfile.Record{Key: k, Data: store[k]}, nil) {
				return
			}
		}
	}
	if err := snapfile.Write(context.Background(), path, h, records, snapfile.WriteOptions{BytesPerSecond: 32 << 20}); err != nil {
		log.Fatal(err)
	}

	r, err := snapfile.Open(path, snapfile.ReadOptions{})
	if err != nil {
		log.Fatal(err) // an informer logs it and lists
	}
	defer r.Close()
	if err := snapfile.Check(r.Header(), self); err != nil {
		log.Fatal(err)
	}
	staged := make(map[string][]byte, r.Header().Count)
	if err := r.Records(func(rec snapfile.Record) error {
		staged[rec.Key] = rec.Data // Data is the caller's to keep
		return nil
	}); err != nil {
		log.Fatal(err) // discard staged and list
	}
	fmt.Printf("resume the watch at %s with %d objects\n", r.Header().ResourceVersion, len(staged))

	other := self
	other.Server = "https://other.example uid-2"
	fmt.Println(snapfile.Check(r.Header(), other))
	// Output:
	// resume the watch at 4711 with 2 objects
	// snapshot is for another server: "https://cluster.example uid-1", not "https://other.example uid-2"
}
