package watch

import (
	stdjson "encoding/json"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkJSONStrings measures the two string paths whose cost the
// UTF-8 handling changes: a string with escapes (a 2 KiB
// kubectl.kubernetes.io/last-applied-configuration annotation, decoded
// outside json-iterator) and plain strings that miss the intern table
// (unique names, the only strings whose UTF-8 is checked).
func BenchmarkJSONStrings(b *testing.B) {
	b.Run("escaped-2KiB", func(b *testing.B) {
		applied, err := stdjson.Marshal(fmt.Sprintf(benchPodTemplate, "00001", 100001, 7)[:2048])
		if err != nil {
			b.Fatal(err)
		}
		frame := []byte(`{"m":{"kubectl.kubernetes.io/last-applied-configuration":` + string(applied) + `}}`)
		b.SetBytes(int64(len(frame)))
		b.ReportAllocs()
		for b.Loop() {
			var p internProbe
			if err := json.Unmarshal(frame, &p); err != nil || len(p.M) != 1 {
				b.Fatal(err)
			}
		}
	})
	b.Run("intern-miss", func(b *testing.B) {
		const n = 1 << 17 // more distinct strings than the table has slots
		frames := make([][]byte, n)
		for i := range frames {
			frames[i] = []byte(fmt.Sprintf(`{"s":"3f1c2a9e-7b4d-4e8a-9c61-%012x","l":["10.244.%d.%d"]}`, i*7919, i%256, i/256))
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			var p internProbe
			if err := json.Unmarshal(frames[i%n], &p); err != nil || !strings.HasPrefix(p.S, "3f1c") {
				b.Fatal(err)
			}
			i++
		}
	})
}
