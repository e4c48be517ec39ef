package sim

import (
	"encoding/base64"
	"fmt"
	"path"
	"strings"
)

// continueToken is the real server's continue token: base64url (unpadded) of
// {"v":"meta.k8s.io/v1","rv":<list RV or -1>,"start":"<key after the list prefix>\u0000"}.
// rv -1 marks a token handed out with a 410: it continues at the newest state.
type continueToken struct {
	Version string `json:"v"`
	RV      int64  `json:"rv"`
	Start   string `json:"start"`
}

const continueVersion = "meta.k8s.io/v1"

// encodeContinue builds the token for the page after lastKey of a list of t.
func encodeContinue(t target, rv int64, lastKey string) string {
	start := lastKey
	if t.ns != "" {
		start = "/" + strings.TrimPrefix(lastKey, t.ns+"/")
	}
	b, _ := json.Marshal(continueToken{Version: continueVersion, RV: rv, Start: start + "\x00"})
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeContinue parses a token into its resourceVersion and the first store key of
// the next page. Errors name what was wrong with the token.
func decodeContinue(t target, token string) (rv int64, startKey string, err error) {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return 0, "", fmt.Errorf("continue key is not valid: %v", err)
	}
	var c continueToken
	if err := json.Unmarshal(raw, &c); err != nil {
		return 0, "", fmt.Errorf("continue key is not valid: %v", err)
	}
	if c.Version != continueVersion {
		return 0, "", fmt.Errorf("continue key is not valid: server does not recognize this encoded version %q", c.Version)
	}
	if c.RV == 0 || c.RV < -1 {
		return 0, "", fmt.Errorf("continue key is not valid: incorrect encoded start resourceVersion (version %s)", continueVersion)
	}
	if c.Start == "" {
		return 0, "", fmt.Errorf("continue key is not valid: encoded start key empty (version %s)", continueVersion)
	}
	key := c.Start
	if !strings.HasPrefix(key, "/") {
		key = "/" + key
	}
	if path.Clean(key) != key {
		return 0, "", fmt.Errorf("continue key is not valid: %s", c.Start)
	}
	rel := key[1:]
	if t.ns != "" {
		return c.RV, t.ns + "/" + rel, nil
	}
	return c.RV, rel, nil
}

// restartToken is the token a 410 offers: the same position at the newest state.
func restartToken(t target, startKey string) string {
	rel := startKey
	if t.ns != "" {
		rel = strings.TrimPrefix(startKey, t.ns+"/")
	}
	b, _ := json.Marshal(continueToken{Version: continueVersion, RV: -1, Start: rel})
	return base64.RawURLEncoding.EncodeToString(b)
}
