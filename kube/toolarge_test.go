package kube

import (
	"bufio"
	"bytes"
	"net/http"
	"os"
	"testing"
)

// TestIsResourceVersionTooLargeOnCaptures reads the real server's 504
// answers to a list from a future resourceVersion.
func TestIsResourceVersionTooLargeOnCaptures(t *testing.T) {
	for _, name := range []string{"list-pods-future-rv.txt", "list-pods-future-rv-notolderthan.txt"} {
		raw, err := os.ReadFile("../internal/testdata/real-apiserver/" + name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(bytes.Replace(raw, []byte("HTTP/2 "), []byte("HTTP/1.1 "), 1))), nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := readStatus(resp)
		if !IsResourceVersionTooLarge(got) {
			t.Errorf("%s: IsResourceVersionTooLarge(%v) = false, want true", name, got)
		}
		if IsGone(got) {
			t.Errorf("%s: IsGone = true for a 504", name)
		}
	}
	for _, err := range []error{
		&StatusError{Code: 504, Reason: "Timeout", Message: "Timeout: request did not complete within requested timeout"},
		&StatusError{Code: 500, Message: "Too large resource version"},
		nil,
	} {
		if IsResourceVersionTooLarge(err) {
			t.Errorf("IsResourceVersionTooLarge(%v) = true, want false", err)
		}
	}
}
