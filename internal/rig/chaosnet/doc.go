// Package chaosnet is a loopback TCP proxy that breaks connections the way
// networks do, for tests and the soak: it can freeze every open connection
// (bytes stop in both directions but nothing is closed: a half-open, dead
// peer), cut them all (a server restart), or refuse new ones for a while.
// Fired counts each fault by the connections it was applied to, so a test
// can tell a fault that happened from one that was only asked for.
package chaosnet
