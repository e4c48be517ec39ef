package decode

import (
	"reflect"
	"testing"
	"time"
	"unsafe"

	corev1 "k8s.io/api/core/v1"

	"github.com/kwatch/kwatch/internal/pbwire"
	"github.com/kwatch/kwatch/internal/protodec"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
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

// BenchmarkPodDecodeRatio decodes the harness's pods with the generated
// Unmarshal and with the table (strings aliased) taking turns, 500 pods of
// each per op, and reports the table's time over the generated code's: the
// machine's spread, which moved BenchmarkPodDecode's runs by 2x on one day,
// moves a ratio taken this way far less.
func BenchmarkPodDecodeRatio(b *testing.B) {
	pods := harnessPods(b, 64)
	plan := protodec.For(reflect.TypeFor[corev1.Pod]())
	const block = 500
	var generated, table time.Duration
	for b.Loop() {
		t0 := time.Now()
		for i := range block {
			p := new(corev1.Pod)
			if err := p.Unmarshal(pods[i%len(pods)]); err != nil {
				b.Fatal(err)
			}
		}
		t1 := time.Now()
		for i := range block {
			p := new(corev1.Pod)
			if err := plan.Decode(pods[i%len(pods)], unsafe.Pointer(p), true); err != nil {
				b.Fatal(err)
			}
		}
		generated, table = generated+t1.Sub(t0), table+time.Since(t1)
	}
	b.ReportMetric(float64(table)/float64(generated), "table/generated")
}

// BenchmarkAnswerDecode decodes the harness's pods as the write client
// decodes an answer in protobuf (an enveloped object): DecodeObject (the
// generated Unmarshal, strings interned) and DecodeObjectAliasing (the
// table, strings in the answer), which the client uses.
func BenchmarkAnswerDecode(b *testing.B) {
	pods := harnessPods(b, 64)
	answers := make([][]byte, len(pods))
	size := 0
	for i, p := range pods {
		answers[i] = pbwire.Wrap(nil, "v1", "Pod", p)
		size += len(answers[i])
	}
	c, err := kube.NewClient(&kube.Config{Host: "http://127.0.0.1:1"})
	if err != nil {
		b.Fatal(err)
	}
	for name, decode := range map[string]func(*kube.Client, []byte, string) (*corev1.Pod, error){
		"DecodeObject":         watch.DecodeObject[*corev1.Pod],
		"DecodeObjectAliasing": watch.DecodeObjectAliasing[*corev1.Pod],
	} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(size / len(answers)))
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := decode(c, answers[i%len(answers)], kube.ContentTypeProtobuf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
