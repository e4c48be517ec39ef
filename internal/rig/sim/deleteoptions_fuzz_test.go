package sim

import (
	"net/url"
	"testing"
)

// FuzzDeleteOptions: any DELETE body, JSON or protobuf, gives options or a
// Status error, never a panic; a policy that parses is one of the real ones.
func FuzzDeleteOptions(f *testing.F) {
	for _, seed := range []string{
		``, `{}`, `{"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":0}`,
		`{"propagationPolicy":"Foreground","preconditions":{"uid":"u","resourceVersion":"7"}}`,
		`{"orphanDependents":true}`, `{"propagationPolicy":"Sideways"}`, `{bad`,
		// protobuf: magic, runtime.Unknown{typeMeta{"v1","DeleteOptions"}, raw{gracePeriodSeconds: 10}}
		"k8s\x00\x0a\x11\x0a\x02v1\x12\x0bDeleteOptions\x12\x02\x08\x0a",
		// raw{propagationPolicy: "Orphan"} (field 6)
		"k8s\x00\x0a\x11\x0a\x02v1\x12\x0bDeleteOptions\x12\x08\x32\x06Orphan",
		"k8s\x00\x0a\x05\x0a\x02v1", "k8s\x00\x12\xff", "k8s\x00",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		o, serr := parseDeleteOptions(body, url.Values{})
		if serr != nil {
			if code := serr.Code(); code != 400 && code != 422 {
				t.Fatalf("error code %d for %q", code, body)
			}
			return
		}
		switch o.policy {
		case "", "Foreground", "Background", "Orphan":
		default:
			t.Fatalf("policy %q parsed from %q", o.policy, body)
		}
	})
}
