package kube

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// The server address: one parser for Config.Host, NewClient and a
// kubeconfig's clusters[].cluster.server, so that all three refuse the same
// addresses with the same words.
//
// User info in the address ("https://user:password@host") is refused, not
// taken for basic auth. net/http would turn it into an Authorization
// header before any of this package's transports sees the request, so the
// checks that keep credentials off plain http to a remote host could not
// apply; and an address is printed in errors, logs, snapshot headers and
// the exec plugin's KUBERNETES_EXEC_INFO, where a credential inside it
// would leak. Basic auth has its own fields (Config.Auth.Username and
// Password, a kubeconfig user's username and password), under the same
// rules as every other credential.

// errServerUserInfo refuses user info in a server address.
var errServerUserInfo = errors.New("holds user info (credentials); put them in the user's credentials (username and password, or a token), not in the address")

// parseServer checks a server address: http or https (https when it names
// none, as kubectl reads a kubeconfig), a host, no user info. Errors show
// the address with its user info redacted, never what url.Parse quotes.
func parseServer(s string) (*url.URL, error) {
	if s == "" {
		return nil, errors.New("is empty")
	}
	if !strings.Contains(s, "://") {
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		if strings.Contains(s, "@") {
			return nil, errors.New("is not a valid URL (and may hold credentials, so it is not shown)")
		}
		return nil, fmt.Errorf("%q is not a valid URL", s)
	}
	if u.User != nil {
		return nil, fmt.Errorf("%q %w", redactedURL(u), errServerUserInfo)
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return nil, fmt.Errorf("%q has scheme %q; want https or http", s, u.Scheme)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("%q has no host", s)
	}
	return u, nil
}

// redactedURL is u with its whole user info, user name included (often a
// token), shown as "<redacted>".
func redactedURL(u *url.URL) string {
	if u.User == nil {
		return u.String()
	}
	c := *u
	c.User = nil
	s := c.String()
	if i := strings.Index(s, "//"); i >= 0 {
		return s[:i+2] + redacted + "@" + s[i+2:]
	}
	return redacted + "@" + s
}

// redactURL is the string s with any user info redacted.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		if strings.Contains(s, "@") {
			return redacted
		}
		return s
	}
	return redactedURL(u)
}
