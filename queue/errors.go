package queue

import (
	"errors"
	"fmt"
)

// ErrAlreadyStarted is returned by Runner.Run when the runner has been run
// before. A Runner owns one queue and runs once: once its context is
// cancelled the queue is shut down and cannot take keys again.
var ErrAlreadyStarted = errors.New("queue: runner already started")

// ErrDrainTimeout is wrapped by the error Runner.Run returns when in-flight
// reconciles did not finish within the drain timeout and had their context
// cancelled.
var ErrDrainTimeout = errors.New("in-flight work did not finish within the drain timeout")

// OptionError reports an invalid field of an Options struct passed to a
// constructor. Field names the struct and field, Reason says what is wrong
// and what was given.
type OptionError struct {
	Field  string // such as "RunnerOptions.Workers"
	Reason string // such as "must be >= 0, got -1"
}

func (e *OptionError) Error() string {
	return fmt.Sprintf("queue: invalid option %s: %s", e.Field, e.Reason)
}

// optionErrorf builds an *OptionError for field with a formatted reason.
func optionErrorf(field, format string, args ...any) error {
	return &OptionError{Field: field, Reason: fmt.Sprintf(format, args...)}
}
