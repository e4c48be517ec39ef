package kube_test

import (
	"fmt"

	"github.com/kwatch/kwatch/kube"
)

// A list at a resourceVersion the server has not reached gets 504 with
// cause ResourceVersionTooLarge (the real server's answer, as captured):
// the client holds an RV from before a restore and must relist from "".
func ExampleIsResourceVersionTooLarge() {
	err := &kube.StatusError{Code: 504, Reason: "Timeout",
		Message: "Timeout: Too large resource version: 100250, current: 250",
		Causes:  []kube.StatusCause{{Type: "ResourceVersionTooLarge", Message: "Too large resource version"}}}
	fmt.Println(kube.IsResourceVersionTooLarge(err), kube.IsGone(err))
	// Output: true false
}
