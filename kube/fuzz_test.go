package kube

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzStatusFromResponse feeds the response-to-error path any code,
// Content-Type, Retry-After and body: it must never panic, keep the HTTP
// code, bound what it keeps, and say something.
func FuzzStatusFromResponse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "internal", "testdata", "real-apiserver", "status-*.json"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(409, "application/json", "", b)
		}
	}
	f.Add(429, "application/json", "3", []byte(`{"kind":"Status","code":429,"details":{"retryAfterSeconds":2}}`))
	f.Add(500, "application/vnd.kubernetes.protobuf", "", []byte("k8s\x00\x0a\x0c\x0a\x02v1\x12\x06Status\x12\x04\x1a\x02hi"))
	f.Add(404, "text/html", "Wed, 21 Oct 2015 07:28:00 GMT", []byte("<html>not found</html>"))
	f.Add(422, "application/json", "", []byte(`{"kind":"Status","details":{"causes":[{"field":"a"},{"reason":"b"}]}}`))
	f.Fuzz(func(t *testing.T, code int, contentType, retryAfter string, body []byte) {
		if code < 100 || code > 999 || len(body) > maxErrorBody {
			return
		}
		h := http.Header{}
		h.Set("Content-Type", contentType)
		h.Set("Retry-After", retryAfter)
		se := statusFromResponse(code, h, body)
		if se.Code != int32(code) {
			t.Fatalf("code %d, want the HTTP code %d", se.Code, code)
		}
		if len(se.Causes) > maxStatusCauses {
			t.Fatalf("%d causes kept, want at most %d", len(se.Causes), maxStatusCauses)
		}
		if se.RetryAfter < 0 || se.RetryAfter > maxRetryAfter {
			t.Fatalf("RetryAfter %v out of bounds", se.RetryAfter)
		}
		msg := se.Error()
		if msg == "" || !strings.HasPrefix(msg, "server answered ") {
			t.Fatalf("error %q", msg)
		}
		// A JSON or other body: the message is the Status's, or the start of a body that is not
		// one (with "..." when cut): never more than the body said. Counted in runes: JSON
		// decoding turns each byte of invalid UTF-8 into U+FFFD, three bytes.
		if n := utf8.RuneCountInString(se.Message); !IsProtobuf(contentType) && n > len(body)+len("...") {
			t.Fatalf("message of %d runes from a body of %d bytes", n, len(body))
		}
		_ = se.Fields()
		if _, err := DecodeStatus(body, IsProtobuf(contentType)); err == nil {
			_ = EventStatus(body, IsProtobuf(contentType))
		}
	})
}
