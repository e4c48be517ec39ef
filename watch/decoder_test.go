package watch

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/kwatch/kwatch/kube"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

func TestDecoderStreamingListCapture(t *testing.T) {
	data := readCapture(t, "watch-streaming-list.jsonl")
	for _, par := range []int{0, 1, 2, 4} {
		for _, oneByte := range []bool{false, true} {
			var r io.Reader = bytes.NewReader(data)
			if oneByte {
				r = iotest.OneByteReader(r)
			}
			evs, err := decodeAll[*testPod](r, DecoderOptions{Parallelism: par})
			require.ErrorIs(t, err, io.EOF, "par=%d oneByte=%v", par, oneByte)
			require.Len(t, evs, 7)
			for i, ev := range evs[:6] {
				assert.Equal(t, Added, ev.Type, "event %d type", i)
				assert.Equal(t, "demo", ev.Object.Namespace, "event %d namespace", i)
			}
			web := evs[0].Object
			assert.Equal(t, "web-7d4b9c", web.Name)
			assert.Equal(t, "217", web.ResourceVersion)
			assert.Equal(t, map[string]string{"app": "web", "tier": "frontend"}, web.Labels)
			assert.Equal(t, `unicode ✓ and "quotes"`, web.Annotations["example.com/note"])
			require.Len(t, web.Spec.Containers, 2)
			assert.Equal(t, "app", web.Spec.Containers[0].Name)
			assert.Equal(t, "128Mi", web.Spec.Containers[0].Resources.Requests["memory"])
			assert.NotEmpty(t, web.ManagedFields)

			bm := evs[6]
			assert.Equal(t, Bookmark, bm.Type)
			assert.Equal(t, "235", bm.Object.GetResourceVersion())
			assert.Equal(t, "true", bm.Object.GetAnnotations()[InitialEventsEndAnnotation])
		}
	}
}

func TestDecoderGoneCapture(t *testing.T) {
	for _, par := range []int{1, 3} {
		d := NewDecoder[*testPod](bytes.NewReader(readCapture(t, "watch-410-too-old-rv.jsonl")), DecoderOptions{Parallelism: par})
		_, err := d.Next()
		se, ok := kube.AsStatus(err)
		require.True(t, ok, "got %v, want a *StatusError", err)
		assert.Equal(t, int32(410), se.Code)
		assert.Equal(t, "Expired", se.Reason)
		assert.Contains(t, se.Message, "too old")
		assert.True(t, kube.IsGone(err))
		_, again := d.Next()
		assert.Same(t, se, again.(*kube.StatusError), "the stream is over: Next repeats its error")
		require.NoError(t, d.Close())
	}
}

func TestDecoderMetadataOnlyCapture(t *testing.T) {
	evs, err := decodeAll[*metav1.PartialObjectMetadata](bytes.NewReader(readCapture(t, "watch-metadata-only.jsonl")), DecoderOptions{})
	require.ErrorIs(t, err, io.EOF)
	require.Len(t, evs, 4)
	assert.Equal(t, Added, evs[0].Type)
	assert.Equal(t, "temp", evs[0].Object.Name)
	assert.Equal(t, "PartialObjectMetadata", evs[0].Object.Kind)
	assert.Equal(t, "228", evs[0].Object.ResourceVersion)
	assert.Equal(t, Deleted, evs[3].Type)
}

// TestDecoderHTTP1ChunkedCapture un-chunks the raw HTTP/1.1 capture with
// net/http and decodes the body.
func TestDecoderHTTP1ChunkedCapture(t *testing.T) {
	raw := readCapture(t, "watch-http1-raw-chunked.txt")
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, []string{"chunked"}, resp.TransferEncoding)
	evs, err := decodeAll[*testPod](resp.Body, DecoderOptions{Parallelism: 2})
	require.ErrorIs(t, err, io.EOF)
	var got []string
	for _, ev := range evs {
		got = append(got, string(ev.Type)+" "+ev.Object.Name+" "+ev.Object.ResourceVersion)
	}
	want := []string{"ADDED temp 228", "MODIFIED temp 229", "MODIFIED temp 230", "DELETED temp 231",
		"BOOKMARK  231", "BOOKMARK  231"}
	assert.Equal(t, want, got)
	assert.Equal(t, "canary", evs[1].Object.Labels["stage"], "the label set by the first MODIFIED")
	assert.NotNil(t, evs[2].Object.DeletionTimestamp, "the second MODIFIED sets deletionTimestamp")
}

// allCaptures is the concatenation of the capture streams that end cleanly.
func allCaptures(t testing.TB) []byte {
	var b bytes.Buffer
	b.Write(readCapture(t, "watch-streaming-list.jsonl"))
	b.Write(readCapture(t, "watch-metadata-only.jsonl"))
	return b.Bytes()
}

func TestDecoderRandomChunkBoundaries(t *testing.T) {
	data := append(allCaptures(t), syntheticStream(150, 7)...)
	want, err := decodeAll[*testPod](bytes.NewReader(data), DecoderOptions{})
	require.ErrorIs(t, err, io.EOF)
	require.Len(t, want, 161)
	wantSum := summaries(want)
	for seed := range uint64(16) {
		for _, maxChunk := range []int{1, 3, 17, 4096, 100_000} {
			if maxChunk < 4096 && seed > 3 {
				continue // one byte per read is slow under -race; a few seeds suffice
			}
			par := int(seed % 4)
			got, err := decodeAll[*testPod](newChunkReader(data, seed, maxChunk), DecoderOptions{Parallelism: par})
			require.ErrorIs(t, err, io.EOF, "seed=%d max=%d par=%d", seed, maxChunk, par)
			require.Equal(t, wantSum, summaries(got), "seed=%d max=%d par=%d", seed, maxChunk, par)
		}
	}
}

func TestDecoderWhitespace(t *testing.T) {
	ev := `{ "type" : "ADDED" ,` + "\n\t" + `"object" :` + "\r\n" + ` { "metadata" : { "name" : "a" , "resourceVersion" : "5" } } }`
	tests := []struct {
		name, in string
		want     int
	}{
		{"empty stream", "", 0},
		{"only whitespace", " \n\r\t  \n", 0},
		{"inside", ev, 1},
		{"leading and trailing", "\n\n  " + ev + "\r\n\t ", 1},
		{"between", ev + "\n" + ev + "\r\n" + ev + " \t " + ev, 4},
		{"none between", ev + ev + ev, 3},
		{"compact", podEvent(Added, 1, 0) + podEvent(Deleted, 1, 0), 2},
	}
	for _, tt := range tests {
		for _, par := range []int{1, 2} {
			evs, err := decodeAll[*testPod](strings.NewReader(tt.in), DecoderOptions{Parallelism: par})
			require.ErrorIs(t, err, io.EOF, tt.name)
			assert.Len(t, evs, tt.want, "%s par=%d: got %d events, want %d", tt.name, par, len(evs), tt.want)
		}
	}
}

func TestDecoderObjectBeforeType(t *testing.T) {
	in := `{"object":{"metadata":{"name":"a","resourceVersion":"9"}},"type":"MODIFIED"}` +
		`{"extra":[1,{"x":"}"}],"object":{"kind":"Status","code":410,"reason":"Gone","message":"m"},"type":"ERROR"}`
	d := NewDecoder[*testPod](strings.NewReader(in), DecoderOptions{})
	ev, err := d.Next()
	require.NoError(t, err)
	assert.Equal(t, Modified, ev.Type)
	assert.Equal(t, "a", ev.Object.Name)
	assert.Equal(t, "9", ev.Object.ResourceVersion)
	_, err = d.Next()
	assert.True(t, kube.IsGone(err), "got %v, want the ERROR event's 410", err)
}

func TestDecoderEscapedType(t *testing.T) {
	in := `{"type":"\u0041DDED","object":{"metadata":{"name":"a"}}}`
	evs, err := decodeAll[*testPod](strings.NewReader(in), DecoderOptions{})
	require.ErrorIs(t, err, io.EOF)
	require.Len(t, evs, 1)
	assert.Equal(t, Added, evs[0].Type)
}

// TestDecoderInvalidUTF8: a pod with invalid UTF-8 in a field, a label key
// and value and an annotation (with escapes) decodes as Kubernetes' own JSON
// decoder decodes it: each invalid byte becomes U+FFFD. The stream goes on.
func TestDecoderInvalidUTF8(t *testing.T) {
	obj := "{\"metadata\":{\"name\":\"bad\xff\xfe\xc3\",\"labels\":{\"\xe2\x82\":\"\x80\",\"ok\":\"v\xedx\"}," +
		"\"annotations\":{\"note\":\"\\\"q\\\" \xf4\x90\x80\x80 \\ud800\"}},\"spec\":{\"containers\":[{\"name\":\"c\\u00e9\xc0\x80\",\"image\":\"i\"}]}}"
	in := `{"type":"ADDED","object":` + obj + `}` + podEvent(Modified, 1, 3)
	evs, err := decodeAll[*testPod](strings.NewReader(in), DecoderOptions{})
	require.ErrorIs(t, err, io.EOF, "invalid UTF-8 inside strings is replaced, not fatal")
	require.Len(t, evs, 2)
	got := evs[0].Object
	assert.Equal(t, "bad\uFFFD\uFFFD\uFFFD", got.Name)
	assert.Equal(t, map[string]string{"\uFFFD\uFFFD": "\uFFFD", "ok": "v\uFFFDx"}, got.Labels)
	assert.Equal(t, map[string]string{"note": "\"q\" \uFFFD\uFFFD\uFFFD\uFFFD \uFFFD"}, got.Annotations)
	assert.Equal(t, "c\u00e9\uFFFD\uFFFD", got.Spec.Containers[0].Name)

	var want testPod
	require.NoError(t, utiljson.Unmarshal([]byte(obj), &want))
	assert.Equal(t, &want, got, "the same as Kubernetes' decoder")
}

// TestDecoderObjectsOwnTheirMemory checks that a decoded object does not
// alias the read buffer, which later events overwrite.
func TestDecoderObjectsOwnTheirMemory(t *testing.T) {
	data := syntheticStream(200, 3)
	want, err := decodeAll[*testPod](bytes.NewReader(data), DecoderOptions{})
	require.ErrorIs(t, err, io.EOF)
	for _, par := range []int{1, 4} {
		d := NewDecoder[*testPod](newChunkReader(data, 5, 700), DecoderOptions{Parallelism: par})
		first, err := d.Next()
		require.NoError(t, err)
		for err == nil {
			_, err = d.Next()
		}
		require.ErrorIs(t, err, io.EOF)
		assert.Equal(t, summary(want[0]), summary(first), "par=%d: first event changed after the buffer was reused", par)
		assert.Equal(t, want[0].Object.Annotations, first.Object.Annotations)
		require.NoError(t, d.Close())
	}
}

func TestDecoderReadError(t *testing.T) {
	data := []byte(podEvent(Added, 1, 10) + podEvent(Added, 2, 10))
	for _, par := range []int{1, 2} {
		for cut, wantEvents := range map[int]int{len(data): 2, len(data) - 5: 1} {
			evs, err := decodeAll[*testPod](&errReader{data: data[:cut], err: errBoom}, DecoderOptions{Parallelism: par})
			assert.ErrorIs(t, err, errBoom, "par=%d cut=%d", par, cut)
			assert.Len(t, evs, wantEvents, "par=%d cut=%d", par, cut)
		}
	}
}

// stuckReader returns (0, nil) forever.
type stuckReader struct{}

func (stuckReader) Read([]byte) (int, error) { return 0, nil }

func TestDecoderNoProgress(t *testing.T) {
	_, err := NewDecoder[*testPod](stuckReader{}, DecoderOptions{}).Next()
	assert.ErrorIs(t, err, io.ErrNoProgress)
}

func TestDecoderDataErrReader(t *testing.T) {
	data := readCapture(t, "watch-streaming-list.jsonl")
	evs, err := decodeAll[*testPod](iotest.DataErrReader(bytes.NewReader(data)), DecoderOptions{Parallelism: 2})
	require.ErrorIs(t, err, io.EOF)
	assert.Len(t, evs, 7)
}

func TestDecoderNextAfterClose(t *testing.T) {
	d := NewDecoder[*testPod](bytes.NewReader(allCaptures(t)), DecoderOptions{Parallelism: 2})
	_, err := d.Next()
	require.NoError(t, err)
	require.NoError(t, d.Close())
	require.NoError(t, d.Close(), "Close is idempotent")
	_, err = d.Next()
	assert.ErrorIs(t, err, ErrDecoderClosed)
}

func TestDecoderBadFrameSizeOptions(t *testing.T) {
	for _, max := range []int{-1, 0, 1 << 62} {
		evs, err := decodeAll[*testPod](bytes.NewReader(allCaptures(t)), DecoderOptions{MaxFrameSize: max})
		require.ErrorIs(t, err, io.EOF, "MaxFrameSize=%d", max)
		assert.Len(t, evs, 11, "MaxFrameSize=%d", max)
	}
}

func TestDecoderErrorIsSticky(t *testing.T) {
	in := podEvent(Added, 1, 0) + `{"type":"NOPE","object":{}}` + podEvent(Added, 2, 0)
	for _, par := range []int{1, 4} {
		d := NewDecoder[*testPod](strings.NewReader(in), DecoderOptions{Parallelism: par})
		_, err := d.Next()
		require.NoError(t, err)
		_, err1 := d.Next()
		require.ErrorIs(t, err1, ErrUnknownEventType)
		_, err2 := d.Next()
		assert.Same(t, err1, err2, "par=%d: the stream stays over; no event after a bad one", par)
	}
}

func TestDecodeErrorMessage(t *testing.T) {
	err := error(&DecodeError{Offset: 42, What: "ADDED event", Err: errors.New("object is null")})
	assert.Equal(t, "ADDED event at offset 42: object is null", err.Error())
}
