package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// awaitGone waits, within wait, until every process that carries marker
// (NAME=value) in its environment has exited: it finds them in /proc and
// waits on a pidfd of each, which becomes readable when the process exits.
func awaitGone(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for _, pid := range carrying(t, marker) {
		fd, err := unix.PidfdOpen(pid, 0)
		if errors.Is(err, unix.ESRCH) {
			continue // already gone
		}
		if err != nil {
			t.Errorf("pidfd of the pane's process %d: %v", pid, err)
			continue
		}
		if !exited(fd, time.Until(deadline)) {
			t.Errorf("the pane's process %d is still running %s after its server was killed", pid, wait)
		}
		unix.Close(fd)
	}
}

// exited waits up to d for the process of pidfd fd to exit.
func exited(fd int, d time.Duration) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, int(max(d, 0).Milliseconds()))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err == nil && n == 1
	}
}

// carrying lists the processes whose environment holds marker.
func carrying(t *testing.T, marker string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Errorf("listing processes: %v", err)
		return nil
	}
	want := []byte(marker + "\x00")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && bytes.Contains(env, want) {
			pids = append(pids, pid) // else gone, or not ours
		}
	}
	return pids
}
