package watch_test

import (
	"fmt"

	"github.com/kwatch/kwatch/watch"
)

// A list at a resourceVersion the server has not reached gets 504 with
// cause ResourceVersionTooLarge (the real server's answer, as captured):
// the client holds an RV from before a restore and must relist from "".
func ExampleIsResourceVersionTooLarge() {
	err := &watch.StatusError{Code: 504, Reason: "Timeout",
		Message: "Timeout: Too large resource version: 100250, current: 250",
		Causes:  []string{"Too large resource version"}}
	fmt.Println(watch.IsResourceVersionTooLarge(err), watch.IsGone(err))
	// Output: true false
}
