//go:build !race

package watch

// raceEnabled: the race detector is off.
const raceEnabled = false
