package watch

import (
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/kwatch/kwatch/kube"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecoderErrors(t *testing.T) {
	ok := podEvent(Added, 1, 0)
	n := int64(len(ok))
	deepPrefix := `{"type":"ADDED","object":{"x":`
	tests := []struct {
		name       string
		in         string
		maxFrame   int
		wantEvents int
		wantIs     error    // nil: only the text is checked
		wantOffset int64    // checked for *DecodeError
		wantText   []string // substrings of the error
	}{
		{name: "frame over the limit", in: ok + podEvent(Added, 2, 2000), maxFrame: 1000, wantEvents: 1,
			wantIs: ErrFrameTooLarge, wantOffset: n, wantText: []string{"1000-byte limit", "MaxFrameSize", "offset " + itoa(n)}},
		{name: "endless frame over the limit", in: "\n{" + strings.Repeat(`"a":1,`, 1000), maxFrame: 1000,
			wantIs: ErrFrameTooLarge, wantOffset: 1, wantText: []string{"1000-byte limit"}},
		{name: "frame one byte over the limit", in: ok, maxFrame: len(ok) - 1,
			wantIs: ErrFrameTooLarge, wantText: []string{itoa(n-1) + "-byte limit"}},
		{name: "truncated frame", in: ok + ok[:50], wantEvents: 1,
			wantIs: io.ErrUnexpectedEOF, wantOffset: n, wantText: []string{"50 bytes into it"}},
		{name: "truncated in a string", in: `{"type":"ADD`, wantIs: io.ErrUnexpectedEOF},
		{name: "truncated after a backslash", in: `{"type":"A\`, wantIs: io.ErrUnexpectedEOF},
		{name: "truncated after an escaped quote", in: `{"type":"A\"}`, wantIs: io.ErrUnexpectedEOF},
		{name: "garbage between events", in: ok + "x", wantEvents: 1,
			wantIs: ErrUnexpectedByte, wantOffset: n, wantText: []string{`'x' (0x78)`, "want '{'"}},
		{name: "stray closing bracket", in: ok + "\n]", wantEvents: 1, wantIs: ErrUnexpectedByte, wantOffset: n + 1,
			wantText: []string{`']'`}},
		{name: "array at the top", in: `[1]`, wantIs: ErrUnexpectedByte, wantText: []string{`'['`}},
		{name: "invalid UTF-8 between events", in: ok + "\xff", wantEvents: 1, wantIs: ErrUnexpectedByte,
			wantOffset: n, wantText: []string{"0xff"}},
		{name: "unknown type", in: ok + `{"type":"FOO","object":{}}`, wantEvents: 1,
			wantIs: ErrUnknownEventType, wantOffset: n, wantText: []string{`"FOO"`}},
		{name: "unknown type, object first", in: `{"object":{},"type":"FOO"}`, wantIs: ErrUnknownEventType,
			wantText: []string{`"FOO"`}},
		{name: "missing type", in: `{"object":{"metadata":{}}}`, wantIs: ErrUnknownEventType, wantText: []string{"no type"}},
		{name: "type not a string", in: `{"type":5,"object":{}}`, wantText: []string{"watch event at offset 0"}},
		{name: "empty key", in: `{"":1,"type":"ADDED","object":{}}`, wantIs: ErrUnknownEventType},
		{name: "duplicate type", in: `{"type":"ADDED","type":"DELETED","object":{}}`, wantText: []string{`duplicate "type"`}},
		{name: "missing object", in: `{"type":"ADDED"}`, wantText: []string{"ADDED event at offset 0", "no object"}},
		{name: "null object", in: `{"type":"ADDED","object":null}`, wantText: []string{"object is null"}},
		{name: "wrong shape", in: ok + `{"type":"MODIFIED","object":{"metadata":"oops"}}`, wantEvents: 1, wantOffset: n,
			wantText: []string{"MODIFIED event at offset " + itoa(n), "does not decode into *watch.testPod"}},
		{name: "array object", in: `{"type":"DELETED","object":[]}`, wantText: []string{"DELETED event", "does not decode"}},
		{name: "huge exponent", in: `{"type":"ADDED","object":{"metadata":{"generation":1e999}}}`,
			wantText: []string{"ADDED event", "does not decode"}},
		{name: "huge integer", in: `{"type":"ADDED","object":{"metadata":{"generation":99999999999999999999999}}}`,
			wantText: []string{"ADDED event", "does not decode"}},
		{name: "malformed envelope", in: `{"type":"ADDED","object":{"metadata":{}} "x"}`,
			wantText: []string{"ADDED event", "malformed event"}},
		{name: "control character in a string", in: "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\x01\"}}}",
			wantText: []string{"ADDED event", "control character"}},
		{name: "mismatched brackets", in: `{"type":"ADDED","object":{"metadata":{]}}`, wantText: []string{"ADDED event"}},
		{name: "too deep", in: deepPrefix + strings.Repeat("[", 1200), wantIs: ErrNestingTooDeep,
			wantOffset: int64(len(deepPrefix) + 998), wantText: []string{"more than 1000 levels"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var first string
			for _, par := range []int{1, 3} {
				for _, oneByte := range []bool{false, true} {
					var r io.Reader = strings.NewReader(tt.in)
					if oneByte {
						r = iotest.OneByteReader(r)
					}
					evs, err := decodeAll[*testPod](r, DecoderOptions{MaxFrameSize: tt.maxFrame, Parallelism: par})
					require.Error(t, err)
					require.NotErrorIs(t, err, io.EOF, "got a clean end, want an error")
					assert.Len(t, evs, tt.wantEvents, "events before the error")
					if tt.wantIs != nil {
						assert.ErrorIs(t, err, tt.wantIs)
					}
					var de *DecodeError
					if assert.ErrorAs(t, err, &de) && tt.wantOffset != 0 {
						assert.Equal(t, tt.wantOffset, de.Offset, "offset in %q", err)
					}
					for _, s := range tt.wantText {
						assert.Contains(t, err.Error(), s)
					}
					if first == "" {
						first = err.Error()
					}
					assert.Equal(t, first, err.Error(), "par=%d oneByte=%v: the error must not depend on chunking", par, oneByte)
				}
			}
		})
	}
}

func TestDecoderNestingAtTheLimit(t *testing.T) {
	// The envelope and the object take two levels; 998 more reach the limit exactly.
	in := `{"type":"ADDED","object":{"x":` + strings.Repeat("[", 998) + strings.Repeat("]", 998) + `,"metadata":{"name":"deep"}}}`
	evs, err := decodeAll[*testPod](strings.NewReader(in), DecoderOptions{})
	require.ErrorIs(t, err, io.EOF)
	require.Len(t, evs, 1)
	assert.Equal(t, "deep", evs[0].Object.Name)
}

func TestDecoderErrorEvents(t *testing.T) {
	tests := []struct {
		name, in   string
		wantCode   int32
		wantReason string
	}{
		{"status", `{"type":"ERROR","object":{"kind":"Status","code":500,"reason":"InternalError","message":"etcd"}}`, 500, "InternalError"},
		{"gone", `{"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Gone"}}`, 410, "Gone"},
		{"not a status", `{"type":"ERROR","object":"x"}`, 500, "InternalError"},
		{"no object", `{"type":"ERROR"}`, 500, "InternalError"},
	}
	for _, tt := range tests {
		_, err := decodeAll[*testPod](strings.NewReader(tt.in), DecoderOptions{})
		se, ok := kube.AsStatus(err)
		require.True(t, ok, "%s: got %v, want a *StatusError", tt.name, err)
		assert.Equal(t, tt.wantCode, se.Code, tt.name)
		assert.Equal(t, tt.wantReason, se.Reason, tt.name)
	}
}

// TestDecoderHostileNumbersDoNotPanic feeds numbers jsoniter finds hard in
// fields it decodes and in fields it skips.
func TestDecoderHostileNumbersDoNotPanic(t *testing.T) {
	nums := []string{"1e99999", "-1e-99999", "123456789012345678901234567890", "-", "1.", "01", "1e", "--1", "0.0.0", "1E+"}
	for _, num := range nums {
		for _, field := range []string{`"metadata":{"generation":%s}`, `"unknown":%s`, `"spec":{"containers":[{"ports":[{"containerPort":%s}]}]}`} {
			in := `{"type":"ADDED","object":{` + strings.Replace(field, "%s", num, 1) + `}}`
			_, err := decodeAll[*testPod](strings.NewReader(in), DecoderOptions{})
			require.Error(t, err, in)
			var de *DecodeError
			if !errors.Is(err, io.EOF) {
				assert.ErrorAs(t, err, &de, "%s: got %v", in, err)
			}
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
