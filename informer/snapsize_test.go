package informer

import "testing"

func TestSizeHintIsBoundedByTheFile(t *testing.T) {
	for _, tt := range []struct {
		count uint64
		size  int64
		want  int
	}{
		{100, 1 << 20, 100},
		{10_000_000, 64 << 10, 64 << 10 / minRecordSize}, // a damaged count in a small file
		{5, -1, 0},
	} {
		if got := sizeHint(tt.count, tt.size); got != tt.want {
			t.Errorf("sizeHint(%d, %d) = %d, want %d", tt.count, tt.size, got, tt.want)
		}
	}
}
