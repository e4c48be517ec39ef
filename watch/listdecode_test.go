package watch

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/kwatch/kwatch/kube"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// collect decodes a list body and returns its metadata and item names.
func collect[T Object](r io.Reader, max int) (ListMeta, []string, error) {
	var names []string
	meta, err := DecodeList(r, max, func(obj T) error {
		names = append(names, obj.GetName())
		return nil
	})
	return meta, names, err
}

func TestDecodeListCaptures(t *testing.T) {
	all := []string{"web-7d4b9c", "worker-1", "worker-2", "worker-3", "worker-4", "worker-5"}
	tests := []struct {
		file          string
		wantRV        string
		wantContinue  string
		wantRemaining int64 // -1: absent
		wantNames     []string
	}{
		{"list-pods-page1.json", "224", "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MjI0LCJzdGFydCI6Ii93b3JrZXItMVx1MDAwMCJ9", 4, all[:2]},
		{"list-pods-page2.json", "224", "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MjI0LCJzdGFydCI6Ii93b3JrZXItM1x1MDAwMCJ9", 2, all[2:4]},
		{"list-pods-rv0.json", "224", "", -1, all},
		{"list-pods-rv0-limit2.json", "224", "", -1, all},
		{"list-pods-selectors.json", "224", "", -1, all[1:]},
		{"list-pods-metadata-only.json", "224", "", -1, all},
	}
	for _, tt := range tests {
		data := readCapture(t, tt.file)
		for _, oneByte := range []bool{false, true} {
			var r io.Reader = bytes.NewReader(data)
			if oneByte {
				r = iotest.OneByteReader(r)
			}
			meta, names, err := collect[*testPod](r, 0)
			require.NoError(t, err, tt.file)
			assert.Equal(t, tt.wantNames, names, "%s: item names", tt.file)
			assert.Equal(t, tt.wantRV, meta.ResourceVersion, tt.file)
			assert.Equal(t, tt.wantContinue, meta.Continue, tt.file)
			if tt.wantRemaining < 0 {
				assert.Nil(t, meta.RemainingItemCount, tt.file)
			} else if assert.NotNil(t, meta.RemainingItemCount, tt.file) {
				assert.Equal(t, tt.wantRemaining, *meta.RemainingItemCount, tt.file)
			}
		}
	}
}

func TestDecodeListItemsAreComplete(t *testing.T) {
	var pods []*testPod
	_, err := DecodeList(bytes.NewReader(readCapture(t, "list-pods-page1.json")), 0, func(p *testPod) error {
		pods = append(pods, p)
		return nil
	})
	require.NoError(t, err)
	require.Len(t, pods, 2)
	assert.Equal(t, `unicode ✓ and "quotes"`, pods[0].Annotations["example.com/note"])
	assert.Len(t, pods[0].Spec.Containers, 2)
	assert.Equal(t, "Pending", pods[1].Status.Phase)

	var metas []*metav1.PartialObjectMetadata
	_, err = DecodeList(bytes.NewReader(readCapture(t, "list-pods-metadata-only.json")), 0, func(p *metav1.PartialObjectMetadata) error {
		metas = append(metas, p)
		return nil
	})
	require.NoError(t, err)
	require.Len(t, metas, 6)
	assert.Equal(t, "PartialObjectMetadata", metas[0].Kind)
}

func TestDecodeListRandomChunks(t *testing.T) {
	data := readCapture(t, "list-pods-rv0.json")
	wantMeta, want, err := collect[*testPod](bytes.NewReader(data), 0)
	require.NoError(t, err)
	for seed := range uint64(30) {
		meta, got, err := collect[*testPod](newChunkReader(data, seed, 1+int(seed)*50), 0)
		require.NoError(t, err, "seed %d", seed)
		assert.Equal(t, want, got, "seed %d", seed)
		assert.Equal(t, wantMeta, meta, "seed %d", seed)
	}
}

func TestDecodeListFieldOrder(t *testing.T) {
	tests := []struct{ name, in string }{
		{"items first", `{"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}],"metadata":{"resourceVersion":"7"},"kind":"PodList"}`},
		{"unknown fields", `{"apiVersion":"v1","x":[1,{"y":"]"}],"n":-1.5e3,"t":true,"z":null,"kind":"PodList","metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"a"}} , {"metadata":{"name":"b"}}]}`},
		{"whitespace", " \n{ \"kind\" : \"PodList\" ,\r\n\t\"metadata\" : { \"resourceVersion\" : \"7\" } , \"items\" : [ \n{\"metadata\":{\"name\":\"a\"}} ,\n {\"metadata\":{\"name\":\"b\"}}\n ] }\n\n"},
		{"escaped keys", `{"kind":"Pod\u004cist","\u006detadata":{"resourceVersion":"7"},"item\u0073":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]}`},
	}
	for _, tt := range tests {
		meta, names, err := collect[*testPod](strings.NewReader(tt.in), 0)
		require.NoError(t, err, tt.name)
		assert.Equal(t, []string{"a", "b"}, names, tt.name)
		assert.Equal(t, "7", meta.ResourceVersion, tt.name)
	}
}

func TestDecodeListEmpty(t *testing.T) {
	for _, in := range []string{
		`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"3"},"items":[]}`,
		`{"kind":"PodList","metadata":{"resourceVersion":"3"},"items":null}`,
	} {
		meta, names, err := collect[*testPod](strings.NewReader(in), 0)
		require.NoError(t, err, in)
		assert.Empty(t, names, in)
		assert.Equal(t, "3", meta.ResourceVersion, in)
	}
}

func TestDecodeListStatusBody(t *testing.T) {
	_, names, err := collect[*testPod](bytes.NewReader(readCapture(t, "status-410-expired-continue.json")), 0)
	assert.Empty(t, names)
	require.ErrorIs(t, err, ErrNotList)
	se, ok := kube.AsStatus(err)
	require.True(t, ok, "got %v, want the Status as a *kube.StatusError too", err)
	assert.Equal(t, int32(410), se.Code)
	assert.Equal(t, "Expired", se.Reason)
	assert.NotEmpty(t, se.Continue, "the fresh continue token in the Status")

	// A field name with invalid UTF-8 is decoded like any JSON string, so
	// the Status copied from the body still reads.
	body := "{\"kind\":\"Status\",\"x\xff\":1,\"code\":410,\"reason\":\"Expired\",\"message\":\"too old \xfe\"}"
	_, _, err = collect[*testPod](strings.NewReader(body), 0)
	se, ok = kube.AsStatus(err)
	require.True(t, ok, "got %v, want the Status as a *StatusError", err)
	assert.Equal(t, "Expired", se.Reason)
	assert.Equal(t, "too old \uFFFD", se.Message)
}

func TestDecodeListErrors(t *testing.T) {
	item := `{"metadata":{"name":"a"}}`
	tests := []struct {
		name      string
		in        string
		max       int
		wantNames int
		wantIs    error
		wantText  []string
	}{
		{name: "table without rows", in: `{"kind":"Table","metadata":{},"columnDefinitions":[]}`, wantIs: ErrNotList, wantText: []string{"no items"}},
		{name: "another kind", in: `{"kind":"Pod","items":[]}`, wantIs: ErrNotList, wantText: []string{`kind "Pod"`}},
		{name: "no items", in: `{"kind":"PodList","metadata":{}}`, wantIs: ErrNotList, wantText: []string{"no items"}},
		{name: "not an object", in: `[1,2]`, wantIs: ErrUnexpectedByte, wantText: []string{"offset 0", "want '{'"}},
		{name: "empty body", in: ``, wantIs: io.ErrUnexpectedEOF},
		{name: "truncated in items", in: `{"kind":"PodList","items":[` + item + `,{"metadata":`, wantNames: 1, wantIs: io.ErrUnexpectedEOF,
			wantText: []string{"list item 1 at offset 53"}},
		{name: "truncated after items", in: `{"kind":"PodList","items":[` + item + `]`, wantNames: 1, wantIs: io.ErrUnexpectedEOF},
		{name: "item too large", in: `{"kind":"PodList","items":[` + item + `,{"metadata":{"name":"` + strings.Repeat("x", 200) + `"}}]}`,
			max: 100, wantNames: 1, wantIs: ErrFrameTooLarge, wantText: []string{"list item 1 at offset 53", "100-byte limit", "maxItemSize"}},
		{name: "item not an object", in: `{"kind":"PodList","items":[` + item + `,"x"]}`, wantNames: 1, wantIs: ErrUnexpectedByte,
			wantText: []string{"list item 1", "want an object"}},
		{name: "item wrong shape", in: `{"kind":"PodList","items":[{"metadata":{"name":5}}]}`, wantText: []string{"list item 0", "does not decode"}},
		{name: "missing comma", in: `{"kind":"PodList","items":[` + item + item + `]}`, wantNames: 1, wantIs: ErrUnexpectedByte,
			wantText: []string{"want ','"}},
		{name: "trailing data", in: `{"kind":"PodList","items":[]} {}`, wantIs: ErrUnexpectedByte, wantText: []string{"after the end"}},
		{name: "key not a string", in: `{kind:"PodList"}`, wantIs: ErrUnexpectedByte},
		{name: "missing colon", in: `{"kind" "PodList"}`, wantIs: ErrUnexpectedByte, wantText: []string{"want ':'"}},
		{name: "items not an array", in: `{"items":{}}`, wantIs: ErrUnexpectedByte, wantText: []string{"want '['"}},
		{name: "bad metadata", in: `{"metadata":{"resourceVersion":5},"items":[]}`, wantText: []string{"list metadata"}},
		{name: "too deep", in: `{"items":[` + strings.Repeat("[", 2000), wantIs: ErrNestingTooDeep,
			wantText: []string{"list item 0 at offset 1010"}},
	}
	for _, tt := range tests {
		for _, oneByte := range []bool{false, true} {
			var r io.Reader = strings.NewReader(tt.in)
			if oneByte {
				r = iotest.OneByteReader(r)
			}
			_, names, err := collect[*testPod](r, tt.max)
			require.Error(t, err, tt.name)
			assert.Len(t, names, tt.wantNames, tt.name)
			if tt.wantIs != nil {
				assert.ErrorIs(t, err, tt.wantIs, tt.name)
			}
			for _, s := range tt.wantText {
				assert.Contains(t, err.Error(), s, tt.name)
			}
		}
	}
}

func TestDecodeListCallbackErrorStops(t *testing.T) {
	stop := errors.New("store full")
	calls := 0
	_, err := DecodeList(bytes.NewReader(readCapture(t, "list-pods-rv0.json")), 0, func(*testPod) error {
		calls++
		if calls == 2 {
			return stop
		}
		return nil
	})
	assert.Same(t, stop, err, "the callback's error comes back unchanged")
	assert.Equal(t, 2, calls, "no item after the failing one")
}

func TestDecodeListReadError(t *testing.T) {
	data := readCapture(t, "list-pods-rv0.json")
	_, names, err := collect[*testPod](&errReader{data: data[:len(data)/2], err: errBoom}, 0)
	assert.ErrorIs(t, err, errBoom)
	assert.NotEmpty(t, names)
}
