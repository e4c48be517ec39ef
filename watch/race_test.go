//go:build race

package watch

// raceEnabled: the race detector is on. It makes sync.Pool drop a random
// quarter of what is put back, so allocation counts are not exact.
const raceEnabled = true
