package watch

import (
	stdjson "encoding/json"
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	jsoniter "github.com/json-iterator/go"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type phase string

type internProbe struct {
	S      string            `json:"s"`
	P      phase             `json:"p"`
	M      map[string]string `json:"m"`
	L      []string          `json:"l"`
	Keep   string            `json:"keep"`
	Fields *metav1.FieldsV1  `json:"fields,omitempty"`
}

func TestInternedDecodingMatchesEncodingJSON(t *testing.T) {
	long := strings.Repeat("x", maxLong+10)
	cases := []string{
		`{"s":"plain","p":"Running","m":{"app":"web","":"empty key"},"l":["a","b","a"],"keep":null}`,
		`{"s":"quote \" inside","p":"back\\slash","m":{"k\"ey":"v\nal"},"l":["\u00e9t\u00e9","😀","\ud83d\ude00"]}`,
		`{"s":"","p":"","m":{},"l":[]}`,
		`{"s":"` + long + `","l":["` + long + `"]}`,
		`{"s":"raw utf8 été 日本","fields":{"f:metadata":{"f:labels":{".":{}}}}}`,
		`{"fields":null}`,
	}
	for _, c := range cases {
		var want, got internProbe
		want.Keep, got.Keep = "before", "before"
		require.NoError(t, stdjson.Unmarshal([]byte(c), &want), c)
		require.NoError(t, json.Unmarshal([]byte(c), &got), c)
		require.Equal(t, want, got, c)
	}
}

func TestInternedDecodingRandomStrings(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []rune("ab\"\\\n\t/é日😀 \x01{}[]:,")
	for i := 0; i < 2000; i++ {
		var b strings.Builder
		for j := rng.IntN(40); j > 0; j-- {
			b.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		in := internProbe{S: b.String(), M: map[string]string{b.String(): b.String()}}
		raw, err := stdjson.Marshal(in)
		require.NoError(t, err)
		var got internProbe
		require.NoError(t, json.Unmarshal(raw, &got), string(raw))
		require.Equal(t, in.S, got.S, string(raw))
		require.Equal(t, in.M, got.M, string(raw))
	}
}

func TestInternedStringsAreShared(t *testing.T) {
	var a, b internProbe
	require.NoError(t, json.Unmarshal([]byte(`{"s":"registry.local/app:1.2","fields":{"f:spec":{}}}`), &a))
	require.NoError(t, json.Unmarshal([]byte(`{"s":"registry.local/app:1.2","fields":{"f:spec":{}}}`), &b))
	require.Equal(t, unsafe.StringData(a.S), unsafe.StringData(b.S), "one copy of a repeated string")
	require.Equal(t, unsafe.SliceData(a.Fields.Raw), unsafe.SliceData(b.Fields.Raw), "one copy of a repeated field set")
}

func TestInternedDecodingFromSmallReaderBuffer(t *testing.T) {
	// A reader-backed iterator with a tiny buffer: strings cross buffer
	// boundaries and take the ordinary path.
	raw := `{"s":"a fairly long string that crosses the buffer","m":{"key with \"escape\"":"value"},"l":["x","yy","zzz"]}`
	iter := jsoniter.Parse(json, strings.NewReader(raw), 8)
	var got, want internProbe
	iter.ReadVal(&got)
	require.NoError(t, iter.Error)
	require.NoError(t, stdjson.Unmarshal([]byte(raw), &want))
	require.Equal(t, want, got)
}

func TestInternedDecodingErrors(t *testing.T) {
	for _, c := range []string{`{"s":12}`, `{"s":"unterminated`, `{"m":{"k":3}}`, `{"s":"ctl` + "\x01" + `"}`} {
		var got internProbe
		err := json.Unmarshal([]byte(c), &got)
		require.Error(t, err, c)
	}
}

func TestInternTableBounds(t *testing.T) {
	tbl := &internTable{seed: maphash.MakeSeed()}
	huge := []byte(strings.Repeat("y", maxLong+1))
	require.Equal(t, string(huge), tbl.intern(huge))
	for i := 0; i < 3*shortSlots; i++ {
		s := fmt.Sprint("k", i)
		require.Equal(t, s, tbl.intern([]byte(s)))
	}
	n := 0
	for i := range tbl.short {
		if tbl.short[i].data.Load() != nil {
			n++
		}
	}
	require.LessOrEqual(t, n, shortSlots, "the table never grows")
}

func BenchmarkInternedPodDecode(b *testing.B) {
	frame := []byte(fmt.Sprintf(benchPodTemplate, "00001", 100001, 7))
	plain := jsoniter.Config{EscapeHTML: true, SortMapKeys: true, ValidateJsonRawMessage: true}.Froze()
	for _, c := range []struct {
		name string
		api  jsoniter.API
	}{{"plain", plain}, {"interned", json}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(frame)))
			for i := 0; i < b.N; i++ {
				var p *testPod
				if err := c.api.Unmarshal(frame, &p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

type timeProbe struct {
	T  metav1.Time  `json:"t"`
	P  *metav1.Time `json:"p"`
	Ts []metav1.Time
}

func TestTimeDecodingMatchesMetav1(t *testing.T) {
	for _, c := range []string{
		`{"t":"2026-11-30T10:15:02Z","p":"2026-11-30T10:15:09+02:00","Ts":["2026-01-02T03:04:05Z"]}`,
		`{"t":null,"p":null}`,
		`{"t":"2026-11-30T10:15:02\u005a"}`,
	} {
		var want, got timeProbe
		require.NoError(t, stdjson.Unmarshal([]byte(c), &want), c)
		require.NoError(t, json.Unmarshal([]byte(c), &got), c)
		require.True(t, want.T.Equal(&got.T), "%s: %v vs %v", c, want.T, got.T)
		require.Equal(t, want.P == nil, got.P == nil, c)
		if want.P != nil {
			require.True(t, want.P.Equal(got.P), c)
		}
		require.Equal(t, len(want.Ts), len(got.Ts))
	}
	var empty timeProbe
	require.NoError(t, json.Unmarshal([]byte(`{"t":""}`), &empty), "an empty time is read as zero, leniently")
	require.True(t, empty.T.IsZero())
	for _, bad := range []string{`{"t":"yesterday"}`, `{"t":12}`, `{"t":"2026-11-30T10:15:02Z`} {
		var got timeProbe
		require.Error(t, json.Unmarshal([]byte(bad), &got), bad)
	}
}

type quantityProbe struct {
	Q  resource.Quantity            `json:"q"`
	P  *resource.Quantity           `json:"p"`
	RL map[string]resource.Quantity `json:"rl"`
}

func TestQuantityDecodingMatchesApimachinery(t *testing.T) {
	for _, c := range []string{
		`{"q":"250m","p":"1Gi","rl":{"cpu":"500m","memory":"256Mi"}}`,
		`{"q":1,"p":2.5,"rl":{"pods":110}}`,
		`{"q":"0","p":null}`,
		`{"q":" 5 ","rl":{"x":"1e3"}}`,
		`{"q":"12\u0033"}`,
	} {
		var want, got quantityProbe
		wantErr := stdjson.Unmarshal([]byte(c), &want)
		gotErr := json.Unmarshal([]byte(c), &got)
		require.Equal(t, wantErr == nil, gotErr == nil, "%s: %v vs %v", c, wantErr, gotErr)
		if wantErr != nil {
			continue
		}
		require.Equal(t, want.Q.String(), got.Q.String(), c)
		require.Equal(t, want.P == nil, got.P == nil, c)
		if want.P != nil {
			require.Equal(t, want.P.String(), got.P.String(), c)
		}
		require.Equal(t, len(want.RL), len(got.RL), c)
		for k, v := range want.RL {
			g := got.RL[k]
			require.Equal(t, v.String(), g.String(), c)
		}
	}
	for _, bad := range []string{`{"q":"lots"}`, `{"q":"1Zi"}`, `{"q":true}`} {
		var got quantityProbe
		require.Error(t, json.Unmarshal([]byte(bad), &got), bad)
	}
}
