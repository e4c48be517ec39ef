package kube

import (
	"net/http"
	"strings"
)

// tooLargeRV is the text the API server puts in the message, and in its
// one cause, of a request from a resourceVersion it has not reached
// (list-pods-future-rv.txt: 504 Timeout, cause ResourceVersionTooLarge,
// "Timeout: Too large resource version: 100250, current: 250").
const tooLargeRV = "Too large resource version"

// IsResourceVersionTooLarge reports a 504 answered because the request's
// resourceVersion is ahead of the server: a list or a streaming list from
// an RV the server has not reached within about 3 s. A client that holds
// such an RV is ahead of the server's history (the server was restored to
// an older state) and must relist from the latest state.
//
// The cause is recognised by its type or by the message the server sends
// with it, as client-go also does for servers that predate the cause type.
func IsResourceVersionTooLarge(err error) bool {
	se, ok := AsStatus(err)
	if !ok || se.Code != http.StatusGatewayTimeout {
		return false
	}
	if strings.Contains(se.Message, tooLargeRV) {
		return true
	}
	for _, c := range se.Causes {
		if c.Type == "ResourceVersionTooLarge" || strings.Contains(c.Message, tooLargeRV) {
			return true
		}
	}
	return false
}
