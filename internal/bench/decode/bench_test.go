package decode

import (
	"reflect"
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"

	"github.com/kwatch/kwatch/internal/protodec"
)

// BenchmarkPodDecode decodes the harness's pods with the generated
// Unmarshal and with the table, copying and aliasing strings.
func BenchmarkPodDecode(b *testing.B) {
	pods := harnessPods(b, 64)
	size := 0
	for _, p := range pods {
		size += len(p)
	}
	b.Run("generated", func(b *testing.B) {
		b.SetBytes(int64(size / len(pods)))
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			p := new(corev1.Pod)
			if err := p.Unmarshal(pods[i%len(pods)]); err != nil {
				b.Fatal(err)
			}
		}
	})
	plan := protodec.For(reflect.TypeFor[corev1.Pod]())
	for _, alias := range []bool{false, true} {
		name := "table"
		if alias {
			name = "table-alias"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(size / len(pods)))
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				p := new(corev1.Pod)
				if err := plan.Decode(pods[i%len(pods)], unsafe.Pointer(p), alias); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
