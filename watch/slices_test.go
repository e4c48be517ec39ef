package watch

import (
	stdjson "encoding/json"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

type sliceTree struct {
	Name     string      `json:"name"`
	Children []sliceTree `json:"children"` // a recursive slice type
	Ports    []int32     `json:"ports"`
	Data     []byte      `json:"data"`
	Ptrs     []*sliceTree
}

func TestSlicesDecodeToExactLength(t *testing.T) {
	for _, c := range []string{
		`{"name":"root","children":[{"name":"a","ports":[1,2,3]},{"name":"b","children":[{"name":"c"}]},{"name":"d"}],"ports":[80,443,8080,9090,9091],"data":"aGVsbG8="}`,
		`{"children":[],"ports":null,"Ptrs":[{"name":"p"},null]}`,
		`{"children":[` + repeatJSON(`{"name":"x","ports":[1]}`, 300) + `]}`, // past the pooled scratch size
	} {
		var want, got sliceTree
		require.NoError(t, stdjson.Unmarshal([]byte(c), &want), c)
		require.NoError(t, json.Unmarshal([]byte(c), &got), c)
		require.Equal(t, want, got, c)
		if n := len(got.Children); n > 0 {
			// Only the allocator's rounding (size classes, pages above 32 KiB) adds room.
			size := int(unsafe.Sizeof(got.Children[0]))
			require.LessOrEqual(t, cap(got.Children)*size, n*size+8192, "capacity %d for %d children", cap(got.Children), n)
		}
	}
	var got sliceTree
	require.NoError(t, json.Unmarshal([]byte(`{"ports":[1,2,3,4,5]}`), &got))
	require.Less(t, cap(got.Ports), 8, "doubling would leave room for 8; only the size class (24 bytes) rounds it")
}

func TestSliceDecodeErrors(t *testing.T) {
	for _, c := range []string{`{"ports":[1,"x"]}`, `{"ports":{}}`, `{"children":[{"name":1}]}`, `{"ports":[1,2`} {
		var got sliceTree
		require.Error(t, json.Unmarshal([]byte(c), &got), c)
	}
	// The decoder is reused after an error and still right.
	var got sliceTree
	require.NoError(t, json.Unmarshal([]byte(`{"ports":[7,8]}`), &got))
	require.Equal(t, []int32{7, 8}, got.Ports)
}

func repeatJSON(s string, n int) string {
	out := s
	for range n - 1 {
		out += "," + s
	}
	return out
}

func TestFieldNamesMatchAsKubernetesMatchesThem(t *testing.T) {
	decode := func(s string) (*testPod, error) {
		var p *testPod
		err := json.Unmarshal([]byte(s), &p)
		return p, err
	}
	p, err := decode(`{"metadata":{"Name":"upper","name":"web","labels":{"a\u0062c":"d\"e"}}}`)
	require.NoError(t, err)
	require.Equal(t, "web", p.Name, "case-sensitive: Name is not name")
	require.Equal(t, map[string]string{"abc": `d"e`}, p.Labels, "map keys and values are unescaped")

	p, err = decode(`{"metadata":{"n\u0061me":"escaped","namespace":"ns"}}`)
	require.NoError(t, err)
	require.Equal(t, "", p.Name, "an escaped field name is not recognised")
	require.Equal(t, "ns", p.Namespace, "and the fields after it still decode")

	_, err = decode(`{"metadata":{"na\"me":"x"}}`)
	require.Error(t, err, "an escaped quote in a field name is an error, not a silent mismatch")
}
