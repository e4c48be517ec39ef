package watch

import (
	"strconv"
	"testing"
)

// BenchmarkIntern interns a stream shaped like a pod cache's strings:
// 3,000 distinct repeated strings of 4-60 bytes and one unique string in
// ten, each interned from a fresh byte slice.
func BenchmarkIntern(b *testing.B) {
	common := make([][]byte, 3000)
	for i := range common {
		common[i] = []byte(("label-value-" + strconv.Itoa(i) + "-abcdefghijklmnopqrstuvwxyz-abcdefghijklmnopqrstuvwxyz")[:4+i%40])
	}
	unique := make([][]byte, 1<<16)
	for i := range unique {
		unique[i] = []byte("3f1c2a9e-uid-" + strconv.Itoa(i*7919))
	}
	tab := &internTable{seed: interned.seed}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if i%10 == 9 {
			tab.intern(unique[i&(len(unique)-1)])
		} else {
			tab.intern(common[(i*31)%len(common)])
		}
	}
}
