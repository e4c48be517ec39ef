package watch

import (
	"hash/maphash"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"

	jsoniter "github.com/json-iterator/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// jsonStringCases are bodies of JSON strings (between the quotes) that
// exercise invalid UTF-8 and escapes, with what Kubernetes' decoder makes of
// them.
var jsonStringCases = []struct {
	name, body, want string
}{
	{"plain", "abc", "abc"},
	{"valid multibyte", "é✓😀", "é✓😀"},
	{"one invalid byte", "a\xffb", "a\uFFFDb"},
	{"a run of invalid bytes is one U+FFFD each", "\xff\xfe\xfd", "\uFFFD\uFFFD\uFFFD"},
	{"truncated sequence", "\xe2\x82", "\uFFFD\uFFFD"},
	{"truncated at the end", "x\xc3", "x\uFFFD"},
	{"overlong NUL", "\xc0\x80", "\uFFFD\uFFFD"},
	{"surrogate half in UTF-8", "\xed\xa0\x80", "\uFFFD\uFFFD\uFFFD"},
	{"beyond U+10FFFF", "\xf4\x90\x80\x80", "\uFFFD\uFFFD\uFFFD\uFFFD"},
	{"escapes", `\"\\\/\b\f\n\r\t`, "\"\\/\b\f\n\r\t"},
	{"unicode escape", `\u00e9\u2713`, "é✓"},
	{"surrogate pair", `\ud83d\ude00`, "😀"},
	{"lone high surrogate", `\ud800`, "\uFFFD"},
	{"lone low surrogate", `\udc00x`, "\uFFFDx"},
	{"high then not a low", `\ud800\u0041`, "\uFFFDA"},
	{"high, high, low", `\ud800\ud800\udc00`, "\uFFFD\U00010000"},
	{"high then plain text", `\ud800abc`, "\uFFFDabc"},
	{"escape next to invalid bytes", "\\n\xff\\u0041\xc3", "\n\uFFFDA\uFFFD"},
}

func TestJSONStringsDecodeAsKubernetes(t *testing.T) {
	for _, tc := range jsonStringCases {
		t.Run(tc.name, func(t *testing.T) {
			raw := []byte(`"` + tc.body + `"`)
			var k8s string
			require.NoError(t, utiljson.Unmarshal(raw, &k8s))
			require.Equal(t, tc.want, k8s, "the case's want is Kubernetes' answer")
			var got string
			require.NoError(t, json.Unmarshal(raw, &got))
			assert.Equal(t, tc.want, got)
			var m map[string]string
			require.NoError(t, json.Unmarshal([]byte(`{`+string(raw)+`:`+string(raw)+`}`), &m))
			assert.Equal(t, map[string]string{tc.want: tc.want}, m, "map keys and values alike")
		})
	}
}

func TestJSONStringErrors(t *testing.T) {
	for _, body := range []string{`\x`, `\'`, `\u12`, `\u12g4`, "a\x01b", `\`} {
		var got string
		err := json.Unmarshal([]byte(`"`+body+`"`), &got)
		require.Error(t, err, "%q", body)
		assert.Error(t, utiljson.Unmarshal([]byte(`"`+body+`"`), &got), "%q: Kubernetes refuses it too", body)
	}
}

// TestJSONStringsInInterfaces: strings and keys inside interface{} values
// (a slim type's free-form field) are decoded the same way.
func TestJSONStringsInInterfaces(t *testing.T) {
	raw := []byte("{\"spec\":{\"k\xff\":[\"v\xfe\",1.5,true,null,{\"n\\ud800\":\"x\"}],\"e\":[],\"o\":{}}}")
	var got, want struct {
		Spec map[string]any `json:"spec"`
	}
	require.NoError(t, json.Unmarshal(raw, &got))
	require.NoError(t, utiljson.Unmarshal(raw, &want))
	assert.Equal(t, map[string]any{
		"k\uFFFD": []any{"v\uFFFD", 1.5, true, nil, map[string]any{"n\uFFFD": "x"}},
		"e":       []any{},
		"o":       map[string]any{},
	}, got.Spec)
	assert.Equal(t, want, got)

	var into any = &struct {
		S string `json:"s"`
	}{}
	require.NoError(t, json.Unmarshal([]byte("{\"s\":\"a\xff\"}"), &into))
	assert.Equal(t, &struct {
		S string `json:"s"`
	}{S: "a\uFFFD"}, into, "an interface holding a pointer decodes into it")
}

// TestInternTableHoldsValidUTF8Only: invalid bytes interned as they are
// (a protobuf string, a FieldsV1 set) are not stored, so a JSON string
// with the same bytes cannot find them and is replaced.
func TestInternTableHoldsValidUTF8Only(t *testing.T) {
	tbl := &internTable{seed: maphash.MakeSeed()}
	bad := "proto\xff"
	assert.Equal(t, bad, tbl.internString(bad), "protobuf strings are kept as sent")
	assert.Equal(t, bad, tbl.intern([]byte(bad)))
	assert.Equal(t, "proto\uFFFD", tbl.internJSON([]byte(bad)))
	long := strings.Repeat("x", maxLong+1) + "\xff"
	assert.Equal(t, long[:maxLong+1]+"\uFFFD", tbl.internJSON([]byte(long)), "strings too long for the table too")
	good := []byte("ok✓")
	first := tbl.internJSON(good)
	assert.Equal(t, "ok✓", first)
	assert.Equal(t, first, tbl.intern(good))
	for _, slots := range [][]internSlot{tbl.short[:], tbl.long[:]} {
		for i := range slots {
			if d := slots[i].data.Load(); d != nil {
				s := strings.Clone(unsafe.String(d, slots[i].n.Load()))
				assert.True(t, utf8.ValidString(s), "slot %d holds %q", i, s)
			}
		}
	}
}

// FuzzJSONString compares the decoding of any string body with
// Kubernetes' decoder: both refuse it, or both give the same string.
func FuzzJSONString(f *testing.F) {
	for _, tc := range jsonStringCases {
		f.Add(tc.body)
	}
	f.Fuzz(func(t *testing.T, body string) {
		if endsEarly(body) {
			t.Skip("an unescaped quote ends the string: a question for the framer, not for string decoding")
		}
		raw := []byte(`"` + body + `"`)
		var want, got string
		wantErr := utiljson.Unmarshal(raw, &want)
		gotErr := json.Unmarshal(raw, &got)
		if (wantErr != nil) != (gotErr != nil) {
			t.Fatalf("%s: Kubernetes: %v; kwatch: %v", strconv.Quote(body), wantErr, gotErr)
		}
		if wantErr == nil && got != want {
			t.Fatalf("%s: got %q, want %q as Kubernetes decodes it", strconv.Quote(body), got, want)
		}
		if gotErr == nil && !utf8.ValidString(got) {
			t.Fatalf("%s: decoded to invalid UTF-8 %q", strconv.Quote(body), got)
		}
	})
}

// endsEarly reports whether body holds an unescaped quote.
func endsEarly(body string) bool {
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '\\':
			i++
		case '"':
			return true
		}
	}
	return false
}

// TestJSONStringFromAReader: a string split across an io.Reader's buffer
// takes json-iterator's reading, then the replacement.
func TestJSONStringFromAReader(t *testing.T) {
	iter := jsoniter.Parse(json, strings.NewReader("{\"s\":\"a long string \\\"escaped\\\" and \xff invalid\"}"), 8)
	var got internProbe
	iter.ReadVal(&got)
	require.NoError(t, iter.Error)
	assert.Equal(t, "a long string \"escaped\" and \uFFFD invalid", got.S)
}
