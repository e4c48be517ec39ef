package kube

import (
	stdjson "encoding/json"
	"strings"
	"testing"
	"time"
)

// FuzzParseExecCredential feeds the exec plugin's output parser anything a
// plugin could print: it must never panic, an error must be short and
// never quote a long token or the key, and a credential it accepts is the
// one the output holds, usable as a header.
func FuzzParseExecCredential(f *testing.F) {
	for _, s := range []string{
		`{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"tok-1"}}`,
		`{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t","expirationTimestamp":"2030-01-02T03:04:05Z"}}`,
		`{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"clientCertificateData":"x","clientKeyData":"y"}}`,
		`{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"a b"}}`,
		`{"apiVersion":"client.authentication.k8s.io/v1","kind":"` + strings.Repeat("K", 600) + `"}`,
		`{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":7}}`,
		`{"kind":"ExecCredential"`, ``, `null`, `[]`,
	} {
		f.Add([]byte(s))
	}
	obtained := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, out []byte) {
		cred, err := parseExecCredential(out, execAPIv1, obtained)
		var in execOutputJSON
		parsed := stdjson.Unmarshal(out, &in) == nil && in.Status != nil
		if err != nil {
			msg := err.Error()
			if len(msg) > 512 {
				t.Fatalf("an error of %d bytes: %.80q...", len(msg), msg)
			}
			if parsed && len(in.Status.Token) > maxQuotedField && strings.Contains(msg, in.Status.Token) {
				t.Fatalf("the error %q quotes the token", msg)
			}
			if parsed && len(in.Status.ClientKeyData) > 8 && strings.Contains(msg, in.Status.ClientKeyData) {
				t.Fatalf("the error %q quotes the key", msg)
			}
			return
		}
		if !parsed || cred.token != in.Status.Token {
			t.Fatalf("accepted token %q, the output holds %+v", cred.token, in.Status)
		}
		if cred.token == "" && cred.cert == nil {
			t.Fatal("accepted a credential with neither token nor certificate")
		}
		if cred.token != "" && !validToken(cred.token) {
			t.Fatalf("accepted token %q, not valid in a header", cred.token)
		}
		if !cred.obtained.Equal(obtained) {
			t.Fatal("obtained time lost")
		}
	})
}
