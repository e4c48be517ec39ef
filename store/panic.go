package store

import (
	"fmt"
	"runtime/debug"
)

// PanicError is a key or index function's panic, as an error: the write
// that called it is refused as on the function's error (Upsert and
// Replacement.Add return it wrapped, with nothing applied), and the store
// stays consistent; a panic while an old version's index values are
// recomputed scrubs its key from that index, as an error does. The
// informer treats a Transform's panic the same way.
type PanicError struct {
	Func  string // what panicked: "key function", `index "byNode"`, "Transform"
	Value any    // the value it panicked with
	Stack []byte // the panicking goroutine's stack
}

func (e *PanicError) Error() string { return fmt.Sprintf("%s panicked: %v", e.Func, e.Value) }

// recoveredIndex, deferred by a call of index name's function, makes its
// panic an *PanicError in *err. (The name, not a closure, is passed: it
// costs nothing on a write that does not panic.)
func recoveredIndex(name string, err *error) {
	if r := recover(); r != nil {
		*err = &PanicError{Func: fmt.Sprintf("index %q", name), Value: r, Stack: debug.Stack()}
	}
}

// recoveredKey is recoveredIndex for the key function.
func recoveredKey(err *error) {
	if r := recover(); r != nil {
		*err = &PanicError{Func: "key function", Value: r, Stack: debug.Stack()}
	}
}
