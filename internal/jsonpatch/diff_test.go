package jsonpatch

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDiff(t *testing.T) {
	tests := []struct {
		name          string
		before, after string
		want          string
	}{
		{"equal", `{"a":1,"b":[1,2]}`, `{"b":[1,2],"a":1}`, `null`},
		{"add member", `{"a":1}`, `{"a":1,"b":{"c":"x"}}`, `[{"op":"add","path":"/b","value":{"c":"x"}}]`},
		{"remove member", `{"a":1,"b":2}`, `{"a":1}`, `[{"op":"remove","path":"/b"}]`},
		{"replace scalar", `{"a":1}`, `{"a":"1"}`, `[{"op":"replace","path":"/a","value":"1"}]`},
		{"nested", `{"m":{"l":{"x":"1"}}}`, `{"m":{"l":{"x":"1","y":"2"}}}`, `[{"op":"add","path":"/m/l/y","value":"2"}]`},
		{"array same length", `{"a":[1,{"b":2}]}`, `{"a":[1,{"b":3}]}`, `[{"op":"replace","path":"/a/1/b","value":3}]`},
		{"array grows", `{"a":[1]}`, `{"a":[1,2]}`, `[{"op":"replace","path":"/a","value":[1,2]}]`},
		{"escaped key", `{"l":{}}`, `{"l":{"a/b~c":"v"}}`, `[{"op":"add","path":"/l/a~1b~0c","value":"v"}]`},
		{"null value", `{"a":1}`, `{"a":null}`, `[{"op":"replace","path":"/a","value":null}]`},
		{"numbers by text", `{"a":1.0}`, `{"a":1.0}`, `null`},
		{"root type change", `{"a":1}`, `[1]`, `[{"op":"replace","path":"","value":[1]}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := decodeNumbers([]byte(tt.before))
			require.NoError(t, err)
			a, err := decodeNumbers([]byte(tt.after))
			require.NoError(t, err)
			got, err := json.Marshal(Diff(b, a))
			require.NoError(t, err)
			if string(got) != tt.want {
				t.Errorf("Diff(%s, %s) = %s, want %s", tt.before, tt.after, got, tt.want)
			}
		})
	}
}

// TestDiffProperty applies the patch of random pairs of documents to the
// first and checks that it yields the second.
func TestDiffProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		before := randomDoc(rng, 3)
		after := mutateDoc(rng, deepCopy(before), 3)
		b, _ := json.Marshal(before)
		a, _ := json.Marshal(after)
		ops := Diff(decodeJSON(t, b), decodeJSON(t, a))
		got, err := Apply(decodeJSON(t, b), ops)
		require.NoError(t, err, "case %d: %s -> %s: %v", i, b, a, ops)
		if !reflect.DeepEqual(normalize(got), normalize(decodeJSON(t, a))) {
			t.Fatalf("case %d: patch %v of %s gives %v, want %s", i, ops, b, got, a)
		}
	}
}

func randomDoc(rng *rand.Rand, depth int) any {
	switch k := rng.IntN(6); {
	case depth == 0 || k < 2:
		return randomScalar(rng)
	case k < 4:
		m := map[string]any{}
		for range rng.IntN(4) {
			m[randomKey(rng)] = randomDoc(rng, depth-1)
		}
		return m
	default:
		s := []any{}
		for range rng.IntN(3) {
			s = append(s, randomDoc(rng, depth-1))
		}
		return s
	}
}

func randomScalar(rng *rand.Rand) any {
	switch rng.IntN(4) {
	case 0:
		return float64(rng.IntN(3))
	case 1:
		return "s" + strconv.Itoa(rng.IntN(3))
	case 2:
		return rng.IntN(2) == 0
	}
	return nil
}

func randomKey(rng *rand.Rand) string {
	return []string{"a", "b", "c", "x/y", "t~1", ""}[rng.IntN(6)]
}

func mutateDoc(rng *rand.Rand, v any, depth int) any {
	if rng.IntN(5) == 0 {
		return randomDoc(rng, depth)
	}
	switch c := v.(type) {
	case map[string]any:
		for k := range c {
			switch rng.IntN(4) {
			case 0:
				delete(c, k)
			case 1:
				c[k] = mutateDoc(rng, c[k], depth-1)
			}
		}
		if rng.IntN(2) == 0 {
			c[randomKey(rng)] = randomDoc(rng, depth-1)
		}
	case []any:
		for i := range c {
			if rng.IntN(2) == 0 {
				c[i] = mutateDoc(rng, c[i], depth-1)
			}
		}
		if rng.IntN(3) == 0 {
			return append(c, randomScalar(rng))
		}
	}
	return v
}

func deepCopy(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func decodeJSON(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(b, &v))
	return v
}

// decodeNumbers decodes as the webhook's diff does: numbers by their text.
func decodeNumbers(b []byte) (any, error) {
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}

// normalize passes v through JSON, numbers kept by their text.
func normalize(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	out, err := decodeNumbers(b)
	if err != nil {
		panic(err)
	}
	return out
}
