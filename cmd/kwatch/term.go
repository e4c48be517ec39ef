package main

import (
	"errors"
	"io"
	"os"
	"syscall"

	"golang.org/x/term"
)

// isTerminal reports whether w is a character device (a terminal), without
// a terminal library: pipes and files are not.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// useColor: colour only on a terminal, and never with NO_COLOR set (to any
// non-empty value, as no-color.org asks) or TERM=dumb.
func (e *env) useColor() bool {
	return e.outTTY && e.getenv("NO_COLOR") == "" && e.getenv("TERM") != "dumb"
}

// isEPIPE reports a write to a pipe whose reader has gone.
func isEPIPE(err error) bool { return errors.Is(err, syscall.EPIPE) }

// terminalWidth is w's width in columns, 0 when w is not a terminal or
// its size is unknown.
func terminalWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return width
}
