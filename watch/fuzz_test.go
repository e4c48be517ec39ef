package watch

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kwatch/kwatch/internal/pbwire"
	"github.com/kwatch/kwatch/kube"
	"github.com/stretchr/testify/require"
)

// fuzzSeeds are the real captures and hand-made edge cases.
func fuzzSeeds(f *testing.F, glob string) [][]byte {
	files, err := filepath.Glob(filepath.Join(captureDir, glob))
	require.NoError(f, err)
	require.NotEmpty(f, files, "captures matching %s", glob)
	var seeds [][]byte
	for _, file := range files {
		b, err := os.ReadFile(file)
		require.NoError(f, err)
		seeds = append(seeds, b)
	}
	for _, s := range []string{
		``, ` `, `{}`, `{`, `}`, `x`, `[]`, `{"type":"ADDED","object":{}}`,
		`{"type":"ERROR","object":{"code":410}}`, `{"object":{},"type":"BOOKMARK"}`,
		`{"a":"\\\"}"}`, `{"a":"\`, "{\"a\":\"\xff\"}", `{"type":"ADDED","object":{"metadata":{"generation":1e999}}}`,
		`{"kind":"PodList","items":[{"metadata":{"name":"a"}}]}`, `{"items":null}`,
		`{"type":"ADDED","object":{"x":` + strings.Repeat("[", 1001),
	} {
		seeds = append(seeds, []byte(s))
	}
	return seeds
}

// FuzzFramer checks that framing never panics or hangs and does not depend
// on chunk boundaries: the same frames, offsets and error either way.
func FuzzFramer(f *testing.F) {
	for i, s := range fuzzSeeds(f, "watch-*.jsonl") {
		f.Add(s, uint64(i), uint16(1+i*7))
	}
	f.Fuzz(func(t *testing.T, data []byte, seed uint64, maxChunk uint16) {
		limit := 1 << 12
		if seed%2 == 0 {
			limit = 64
		}
		want, wantOffs, wantErr := frameAll(bytes.NewReader(data), limit)
		got, gotOffs, gotErr := frameAll(newChunkReader(data, seed, 1+int(maxChunk)), limit)
		if wantErr == nil || gotErr == nil {
			t.Fatal("framing ended without an error or io.EOF")
		}
		if wantErr.Error() != gotErr.Error() {
			t.Fatalf("error depends on chunking: whole %q, chunked %q", wantErr, gotErr)
		}
		require.Equal(t, want, got, "frames depend on chunking")
		require.Equal(t, wantOffs, gotOffs)
		for i, fr := range got {
			off := gotOffs[i]
			if fr[0] != '{' || len(fr) > limit || string(data[off:off+int64(len(fr))]) != fr {
				t.Fatalf("frame %d at %d is not a bounded slice of the input starting with '{': %q", i, off, fr)
			}
		}
	})
}

// FuzzDecoder checks that decoding never panics or hangs, always ends in an
// error or io.EOF, and gives the same events and error sequentially on the
// whole input as in parallel on arbitrary chunks.
func FuzzDecoder(f *testing.F) {
	for i, s := range fuzzSeeds(f, "watch-*.jsonl") {
		f.Add(s, uint64(i), uint16(1+i*13), uint8(i))
	}
	f.Fuzz(func(t *testing.T, data []byte, seed uint64, maxChunk uint16, par uint8) {
		opts := DecoderOptions{MaxFrameSize: 1 << 14}
		want, wantErr := decodeAll[*testPod](bytes.NewReader(data), opts)
		opts.Parallelism = int(par%4) + 1
		got, gotErr := decodeAll[*testPod](newChunkReader(data, seed, 1+int(maxChunk)), opts)
		if wantErr == nil || gotErr == nil {
			t.Fatal("decoding ended without an error or io.EOF")
		}
		if wantErr.Error() != gotErr.Error() {
			t.Fatalf("error depends on chunking or parallelism: %q vs %q", wantErr, gotErr)
		}
		require.Equal(t, summaries(want), summaries(got))
		var de *DecodeError
		var se *kube.StatusError
		if gotErr != io.EOF && !errors.As(gotErr, &de) && !errors.As(gotErr, &se) {
			t.Fatalf("error %q (%T) is neither a DecodeError nor a StatusError", gotErr, gotErr)
		}
		// The compact store's Raw, on its own scanner: the same independence.
		opts.Parallelism = 1
		rawWant, rawWantErr := decodeAll[*Raw](bytes.NewReader(data), opts)
		opts.Parallelism = int(par%4) + 1
		rawGot, rawGotErr := decodeAll[*Raw](newChunkReader(data, seed, 1+int(maxChunk)), opts)
		if rawWantErr == nil || rawGotErr == nil || rawWantErr.Error() != rawGotErr.Error() {
			t.Fatalf("Raw: error depends on chunking or parallelism: %v vs %v", rawWantErr, rawGotErr)
		}
		require.Equal(t, rawSummaries(rawWant), rawSummaries(rawGot))
	})
}

func rawSummaries(evs []Event[*Raw]) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		if ev.Object == nil {
			out[i] = string(ev.Type)
			continue
		}
		out[i] = fmt.Sprintf("%s %s/%s@%s %q", ev.Type, ev.Object.GetNamespace(), ev.Object.GetName(),
			ev.Object.GetResourceVersion(), ev.Object.Body())
	}
	return out
}

// FuzzDecodeList checks the list decoder the same way.
func FuzzDecodeList(f *testing.F) {
	for i, s := range fuzzSeeds(f, "list-*.json") {
		f.Add(s, uint64(i), uint16(1+i*11))
	}
	for i, s := range fuzzSeeds(f, "table-*.json") { // Tables: rows handed over as one-row Tables
		f.Add(s, uint64(100+i), uint16(1+i*17))
	}
	f.Fuzz(func(t *testing.T, data []byte, seed uint64, maxChunk uint16) {
		wantMeta, want, wantErr := collect[*testPod](bytes.NewReader(data), 1<<14)
		gotMeta, got, gotErr := collect[*testPod](newChunkReader(data, seed, 1+int(maxChunk)), 1<<14)
		if (wantErr == nil) != (gotErr == nil) || wantErr != nil && wantErr.Error() != gotErr.Error() {
			t.Fatalf("error depends on chunking: %v vs %v", wantErr, gotErr)
		}
		require.Equal(t, want, got)
		require.Equal(t, wantMeta, gotMeta)
	})
}

// FuzzProtobuf feeds arbitrary bytes to the protobuf watch decoder and the
// protobuf list decoder: neither may panic or hang, every event decoded
// must carry an object, and the result must not depend on chunk
// boundaries.
func FuzzProtobuf(f *testing.F) {
	f.Add(watchFrame(Added, "Pod", podMsg("ns", "a", "1")), uint64(1))
	f.Add(watchFrame(Error, "Status", statusMsg(410, "Expired", "gone", "", 0)), uint64(2))
	f.Add(protoBody("PodList", listMsg("5", "c", 3, podMsg("ns", "a", "1"), podMsg("ns", "b", "2"))), uint64(3))
	f.Add(protoBody("Status", statusMsg(500, "InternalError", "x", "", 1)), uint64(4))
	f.Add([]byte{0, 0, 0, 2, 0x0a, 0x80}, uint64(5))
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		codec := newProtoCodec[*protoPod](false)
		decodeAll := func(r io.Reader) (n int, err error) {
			d := newProtoDecoder(r, DecoderOptions{MaxFrameSize: 1 << 12, Parallelism: int(seed%3) + 1}, codec)
			defer d.Close()
			for {
				ev, err := d.Next()
				if err != nil {
					return n, err
				}
				if ev.Object == nil {
					t.Fatalf("%s event without an object", ev.Type)
				}
				n++
			}
		}
		n1, err1 := decodeAll(bytes.NewReader(data))
		n2, err2 := decodeAll(newChunkReader(data, seed, 1+int(seed%97)))
		require.Equal(t, n1, n2)
		require.Equal(t, err1.Error(), err2.Error())

		items := 0
		_, err := decodeProtoList(newChunkReader(data, seed, 64), 1<<12, codec, func(p *protoPod) error {
			items++
			return nil
		})
		if err == nil && !bytes.HasPrefix(data, pbwire.Magic[:]) {
			t.Fatal("a list without the magic was accepted")
		}
	})
}
