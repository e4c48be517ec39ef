package kube

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestStatusErrorEscapesTerminalControls: a server's message is shown with
// its control characters escaped, ordinary text (UTF-8 included) as sent,
// and the fields keep the words as sent.
func TestStatusErrorEscapesTerminalControls(t *testing.T) {
	body := []byte(`{"kind":"Status","status":"Failure","reason":"Forbidden","code":403,` +
		`"message":"pods \"wéb\" is forbidden\u001b[2J\u001b]0;pwned\u0007\r"}`)
	se := statusFromResponse(http.StatusForbidden, http.Header{}, body)
	assert.Equal(t, `server answered 403 Forbidden: pods "wéb" is forbidden\x1b[2J\x1b]0;pwned\x07\x0d`, se.Error())
	assert.Equal(t, "pods \"wéb\" is forbidden\x1b[2J\x1b]0;pwned\x07\r", se.Message)
	notStatus := statusFromResponse(http.StatusBadGateway, http.Header{}, []byte("<html>\x1b[5mbad gateway"))
	assert.NotContains(t, notStatus.Error(), "\x1b")
}
