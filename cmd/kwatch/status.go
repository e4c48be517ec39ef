package main

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// statusLine is the line at the bottom of a terminal that says the watch
// is reconnecting: drawn on stderr in place ("\r" and erase-line), erased
// before anything else is printed to the same terminal (statusClearing
// wraps stdout for that), redrawn at the next update. Without a terminal
// it draws nothing; Println still prints. Its methods are safe for
// concurrent use. The zero value (with w set) is ready.
type statusLine struct {
	w   io.Writer // stderr
	tty bool      // w is a terminal: draw the line

	mu    sync.Mutex
	shown bool // a line is on the screen
}

// Show draws text as the status line, replacing the one shown.
func (s *statusLine) Show(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.tty {
		return
	}
	fmt.Fprint(s.w, "\r\x1b[K"+text)
	s.shown = true
}

// Clear erases the status line, if one is shown.
func (s *statusLine) Clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clearLocked()
}

func (s *statusLine) clearLocked() {
	if s.shown {
		fmt.Fprint(s.w, "\r\x1b[K")
		s.shown = false
	}
}

// Println erases the status line and prints line for good.
func (s *statusLine) Println(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clearLocked()
	fmt.Fprintln(s.w, line)
}

// statusClearing is stdout when stdout and stderr are one terminal: each
// write first erases the status line, so rows never land after it.
type statusClearing struct {
	w      io.Writer
	status *statusLine
}

func (c statusClearing) Write(p []byte) (int, error) {
	c.status.mu.Lock()
	defer c.status.mu.Unlock()
	c.status.clearLocked()
	return c.w.Write(p)
}

// reconnectText is the status line while the watch is down.
func reconnectText(since, now time.Time, lastErr error) string {
	text := fmt.Sprintf("kwatch: reconnecting since %s (%s)", since.Format("15:04:05"), now.Sub(since).Round(time.Second))
	if lastErr != nil {
		text += ", last error: " + oneLine(lastErr.Error())
	}
	return text
}

// resumedText is the line printed when the watch is back.
func resumedText(since, now time.Time) string {
	return fmt.Sprintf("kwatch: watching again after %s (down since %s)", now.Sub(since).Round(time.Second), since.Format("15:04:05"))
}
