package kube

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Config says how to reach and authenticate to one API server. Build it with
// LoadKubeconfig, InClusterConfig or by hand: a hand-built Config usually
// sets Host and Auth and leaves every other group zero. The zero value of
// each field, in every group, is the documented default. A Config is not
// modified by the client; share it read-only.
type Config struct {
	// Host is the server's base URL: "https://10.0.0.1:6443". Required.
	Host string
	// Namespace is the default namespace from the kubeconfig context (or the
	// service account's); "" means "default".
	Namespace string

	// Auth is who the client is: a bearer token (or token file), basic
	// auth or an exec plugin, at most one of them. Zero sends no
	// credentials (a client certificate in TLS may still identify it).
	Auth AuthConfig
	// TLS verifies the server and may present a client certificate. Zero
	// verifies against the system roots and presents none.
	TLS TLSConfig
	// RateLimit is the client-side token bucket and the retries after the
	// server's own throttling. Zero means DefaultQPS, DefaultBurst and
	// DefaultMaxRetries.
	RateLimit RateLimitConfig
	// Encoding chooses protobuf or JSON for lists and watches. Zero asks
	// for protobuf where the object type decodes it, with interning.
	Encoding EncodingConfig
	// HTTP is the transport: proxy, User-Agent, request timeout, HTTP/2
	// health pings, or a transport of the caller's own. Zero uses the
	// environment's proxy, no timeout but the caller's context, and pings.
	HTTP HTTPConfig
}

// AuthConfig is the credentials part of Config. At most one of bearer token
// (or file), basic auth and Exec may be set; NewClient and RoundTripper
// refuse more, so that no credential is silently ignored. The zero value
// sends none.
type AuthConfig struct {
	// BearerToken is sent as "Authorization: Bearer ...". Never logged.
	BearerToken string
	// BearerTokenFile is re-read when it changes (service-account token
	// rotation), looked at no more than once a second; it wins over
	// BearerToken, which is used only while the file has never been read
	// successfully. A failed or empty re-read keeps the last good token.
	BearerTokenFile string
	// Username and Password are basic auth, for old clusters.
	Username, Password string
	// Exec runs a client.authentication.k8s.io/v1 credential plugin.
	Exec *ExecConfig

	// AllowInsecureToken permits sending credentials over plain HTTP to a
	// host that is not loopback. Off by default: a token on the wire in clear
	// text is a leak.
	AllowInsecureToken bool
}

// RateLimitConfig is the client-side rate limit of Config and the retries
// after the server's flow control. The zero value is the defaults.
type RateLimitConfig struct {
	// QPS and Burst are the client-side rate limit: a token bucket shared
	// by every request of the Client (lists, watch opens, discovery,
	// writes). Zero means DefaultQPS and DefaultBurst; a negative QPS turns
	// the limit off (the server's own flow control still applies).
	QPS   float32
	Burst int
	// MaxRetries is how often a repeatable request (a GET, or a write
	// guarded by a precondition) answered 429, or 503 with Retry-After, is
	// sent again after the wait the server names. Zero means
	// DefaultMaxRetries, negative none.
	MaxRetries int
}

// EncodingConfig is the wire encoding part of Config. The zero value asks
// for protobuf where it can and interns decoded strings.
type EncodingConfig struct {
	// ContentType is the encoding asked for lists and watches. "" or
	// ContentTypeProtobuf ask for protobuf (falling back to JSON) when the
	// object type implements ProtobufObject, as every k8s.io/api type does,
	// and the request is not metadata-only, like client-go's typed clients;
	// the server answers JSON for what it cannot encode so (custom
	// resources), and the client decodes either. ContentTypeJSON always asks
	// for JSON. Protobuf costs less CPU per object than JSON (about half
	// with NoProtobufIntern); the heap of the decoded objects is about the
	// same, both being interned.
	ContentType string
	// NoProtobufIntern skips interning the strings of protobuf-decoded
	// objects. A generated Unmarshal allocates every string anew; by
	// default the client then swaps each for a shared copy, which makes a
	// cache of objects about 15% smaller but costs about a third more CPU
	// per object. Set it when objects are not kept or the event rate, not
	// memory, is the constraint.
	NoProtobufIntern bool
}

// HTTPConfig is the transport part of Config. The zero value is a
// transport built by the client, with the environment's proxy.
type HTTPConfig struct {
	// Proxy chooses a proxy for each request; nil uses the environment
	// (HTTPS_PROXY, HTTP_PROXY, NO_PROXY).
	Proxy func(*http.Request) (*url.URL, error)

	// UserAgent defaults to "kwatch/<version>".
	UserAgent string

	// Timeout bounds each request that is not a watch (a list page,
	// discovery, Client.Do of a non-watch), from sending it to reading the
	// last byte of its body. Watches are not bounded by it: a healthy one
	// lasts until the server's timeoutSeconds; WatchOptions.IdleTimeout
	// notices a dead one. Zero means no bound other than the caller's
	// context.
	Timeout time.Duration

	// ReadIdleTimeout is how long an HTTP/2 connection may receive no frame
	// before a health ping is sent. Zero means 30 s; negative disables pings.
	ReadIdleTimeout time.Duration
	// PingTimeout is how long to wait for the ping's answer before the
	// connection is closed. Zero means 15 s.
	PingTimeout time.Duration

	// Transport, when set, replaces the transport built from Proxy, the
	// HTTP/2 settings above and Config.TLS; the credentials, the User-Agent
	// and Timeout still apply. For tests and special needs.
	Transport http.RoundTripper
}

// TLSConfig is the TLS part of Config. The zero value verifies the server
// against the system roots and presents no client certificate.
type TLSConfig struct {
	// Insecure skips verification of the server's certificate. Off by default.
	Insecure   bool
	ServerName string // overrides the name checked in the server certificate
	CAFile     string
	CAData     []byte // PEM; wins over CAFile
	CertFile   string
	CertData   []byte // PEM; wins over CertFile
	KeyFile    string
	KeyData    []byte // PEM; wins over KeyFile; never logged
}

// ExecConfig runs a credential plugin, as kubeconfig's users[].user.exec.
type ExecConfig struct {
	Command string
	Args    []string
	Env     []ExecEnvVar
	// APIVersion is "client.authentication.k8s.io/v1" or ".../v1beta1";
	// "" means v1. The plugin must answer in the same version.
	APIVersion string
	// InstallHint is shown when the command is missing.
	InstallHint string
	// InteractiveMode is "Never", "IfAvailable" or "Always"; kwatch never
	// gives the plugin a terminal.
	InteractiveMode string
	// ProvideClusterInfo passes the cluster in KUBERNETES_EXEC_INFO.
	ProvideClusterInfo bool
	// Timeout bounds one run of the plugin. Zero means 1 minute.
	Timeout time.Duration
}

// ExecEnvVar is one environment variable for an exec plugin.
type ExecEnvVar struct {
	Name  string
	Value string
}

// redacted stands in for a secret that is set.
const redacted = "<redacted>"

// String describes c for logs and errors. Tokens, passwords, key data and
// exec plugin arguments and environment values show as "<redacted>" when
// set, so a Config may be printed with any fmt verb. Groups left zero are
// left out.
func (c Config) String() string {
	var b strings.Builder
	b.WriteString("kube.Config{Host: ")
	b.WriteString(strconv.Quote(redactURL(c.Host)))
	writeField(&b, "Namespace", c.Namespace)
	if c.Auth != (AuthConfig{}) {
		b.WriteString(", Auth: ")
		b.WriteString(c.Auth.String())
	}
	b.WriteString(", TLS: ")
	b.WriteString(c.TLS.String())
	if r := c.RateLimit; r != (RateLimitConfig{}) {
		var f strings.Builder
		if r.QPS != 0 {
			f.WriteString(", QPS: " + strconv.FormatFloat(float64(r.QPS), 'g', -1, 32))
		}
		writeInt(&f, "Burst", r.Burst)
		writeInt(&f, "MaxRetries", r.MaxRetries)
		b.WriteString(", RateLimit: " + braced("kube.RateLimitConfig", &f))
	}
	if e := c.Encoding; e != (EncodingConfig{}) {
		var f strings.Builder
		writeField(&f, "ContentType", e.ContentType)
		if e.NoProtobufIntern {
			f.WriteString(", NoProtobufIntern: true")
		}
		b.WriteString(", Encoding: " + braced("kube.EncodingConfig", &f))
	}
	if !c.HTTP.isZero() {
		b.WriteString(", HTTP: ")
		b.WriteString(c.HTTP.String())
	}
	b.WriteByte('}')
	return b.String()
}

// GoString is String: %#v must not print secrets either.
func (c Config) GoString() string { return c.String() }

// Format makes every fmt verb (%v, %+v, %#v, %s, %q, %d, ...) print the
// redacted String, so no verb can reach the raw fields.
func (c Config) Format(f fmt.State, verb rune) { formatRedacted(f, verb, c.String()) }

// String describes a with the token, the password and the exec plugin's
// arguments and environment values redacted.
func (a AuthConfig) String() string {
	var b strings.Builder
	writeSecret(&b, "BearerToken", a.BearerToken != "")
	writeField(&b, "BearerTokenFile", a.BearerTokenFile)
	writeField(&b, "Username", a.Username)
	writeSecret(&b, "Password", a.Password != "")
	if a.Exec != nil {
		b.WriteString(", Exec: &")
		b.WriteString(a.Exec.String())
	}
	if a.AllowInsecureToken {
		b.WriteString(", AllowInsecureToken: true")
	}
	return braced("kube.AuthConfig", &b)
}

// GoString is String: %#v must not print the token either.
func (a AuthConfig) GoString() string { return a.String() }

// Format prints the redacted String for every fmt verb.
func (a AuthConfig) Format(f fmt.State, verb rune) { formatRedacted(f, verb, a.String()) }

// String describes h. A caller's Transport shows as its type only: it may
// hold a TLS configuration with a private key.
func (h HTTPConfig) String() string {
	var b strings.Builder
	if h.Proxy != nil {
		b.WriteString(", Proxy: (func)")
	}
	writeField(&b, "UserAgent", h.UserAgent)
	writeDuration(&b, "Timeout", h.Timeout)
	writeDuration(&b, "ReadIdleTimeout", h.ReadIdleTimeout)
	writeDuration(&b, "PingTimeout", h.PingTimeout)
	if h.Transport != nil {
		b.WriteString(", Transport: ")
		b.WriteString(reflect.TypeOf(h.Transport).String())
	}
	return braced("kube.HTTPConfig", &b)
}

func (h HTTPConfig) isZero() bool {
	return h.Proxy == nil && h.UserAgent == "" && h.Timeout == 0 &&
		h.ReadIdleTimeout == 0 && h.PingTimeout == 0 && h.Transport == nil
}

// GoString is String: %#v must not reach the Transport either.
func (h HTTPConfig) GoString() string { return h.String() }

// Format prints String for every fmt verb.
func (h HTTPConfig) Format(f fmt.State, verb rune) { formatRedacted(f, verb, h.String()) }

// String describes t with KeyData redacted.
func (t TLSConfig) String() string {
	var b strings.Builder
	b.WriteString("kube.TLSConfig{Insecure: ")
	b.WriteString(strconv.FormatBool(t.Insecure))
	writeField(&b, "ServerName", t.ServerName)
	writeField(&b, "CAFile", t.CAFile)
	writeBytes(&b, "CAData", t.CAData)
	writeField(&b, "CertFile", t.CertFile)
	writeBytes(&b, "CertData", t.CertData)
	writeField(&b, "KeyFile", t.KeyFile)
	writeSecret(&b, "KeyData", len(t.KeyData) > 0)
	b.WriteByte('}')
	return b.String()
}

// GoString is String: %#v must not print the key either.
func (t TLSConfig) GoString() string { return t.String() }

// Format prints the redacted String for every fmt verb.
func (t TLSConfig) Format(f fmt.State, verb rune) { formatRedacted(f, verb, t.String()) }

// String describes e with its arguments and environment values redacted:
// plugins are often handed secrets that way.
func (e ExecConfig) String() string {
	var b strings.Builder
	b.WriteString("kube.ExecConfig{Command: ")
	b.WriteString(strconv.Quote(e.Command))
	if len(e.Args) > 0 {
		fmt.Fprintf(&b, ", Args: [%d %s]", len(e.Args), redacted)
	}
	if len(e.Env) > 0 {
		b.WriteString(", Env: [")
		for i, v := range e.Env {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(v.Name + "=" + redacted)
		}
		b.WriteByte(']')
	}
	writeField(&b, "APIVersion", e.APIVersion)
	writeField(&b, "InteractiveMode", e.InteractiveMode)
	if e.ProvideClusterInfo {
		b.WriteString(", ProvideClusterInfo: true")
	}
	writeDuration(&b, "Timeout", e.Timeout)
	b.WriteByte('}')
	return b.String()
}

// GoString is String.
func (e ExecConfig) GoString() string { return e.String() }

// Format prints the redacted String for every fmt verb.
func (e ExecConfig) Format(f fmt.State, verb rune) { formatRedacted(f, verb, e.String()) }

// String shows the variable's name only.
func (v ExecEnvVar) String() string { return v.Name + "=" + redacted }

// GoString is String.
func (v ExecEnvVar) GoString() string { return v.String() }

// Format prints the redacted String for every fmt verb.
func (v ExecEnvVar) Format(f fmt.State, verb rune) { formatRedacted(f, verb, v.String()) }

func formatRedacted(f fmt.State, verb rune, s string) {
	if verb == 'q' {
		s = strconv.Quote(s)
	}
	_, _ = io.WriteString(f, s)
}

func writeField(b *strings.Builder, name, v string) {
	if v != "" {
		b.WriteString(", " + name + ": " + strconv.Quote(v))
	}
}

// braced is "name{...}" around fields written by the write helpers, each
// of which starts with ", ".
func braced(name string, fields *strings.Builder) string {
	return name + "{" + strings.TrimPrefix(fields.String(), ", ") + "}"
}

func writeInt(b *strings.Builder, name string, v int) {
	if v != 0 {
		b.WriteString(", " + name + ": " + strconv.Itoa(v))
	}
}

func writeSecret(b *strings.Builder, name string, set bool) {
	if set {
		b.WriteString(", " + name + ": " + redacted)
	}
}

func writeBytes(b *strings.Builder, name string, v []byte) {
	if len(v) > 0 {
		fmt.Fprintf(b, ", %s: (%d bytes)", name, len(v))
	}
}

func writeDuration(b *strings.Builder, name string, d time.Duration) {
	if d != 0 {
		b.WriteString(", " + name + ": " + d.String())
	}
}
