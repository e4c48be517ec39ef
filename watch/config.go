package watch

import (
	"net/http"
	"net/url"
	"time"
)

// Config says how to reach and authenticate to one API server. Build it with
// LoadKubeconfig, InClusterConfig or by hand. The zero value of each field is
// the documented default. A Config is not modified by the client; share it
// read-only.
type Config struct {
	// Host is the server's base URL: "https://10.0.0.1:6443". Required.
	Host string

	// BearerToken is sent as "Authorization: Bearer ...". Never logged.
	BearerToken string
	// BearerTokenFile is re-read when it changes (service-account token
	// rotation); it wins over BearerToken.
	BearerTokenFile string
	// Username and Password are basic auth, for old clusters.
	Username, Password string
	// Exec runs a client.authentication.k8s.io/v1 credential plugin.
	Exec *ExecConfig

	TLS TLSConfig

	// Proxy chooses a proxy for each request; nil uses the environment
	// (HTTPS_PROXY, HTTP_PROXY, NO_PROXY).
	Proxy func(*http.Request) (*url.URL, error)

	// UserAgent defaults to "kwatch/<version>".
	UserAgent string

	// ReadIdleTimeout is how long an HTTP/2 connection may receive no frame
	// before a health ping is sent. Zero means 30 s; negative disables pings.
	ReadIdleTimeout time.Duration
	// PingTimeout is how long to wait for the ping's answer before the
	// connection is closed. Zero means 15 s.
	PingTimeout time.Duration

	// Timeout bounds a non-watch request (list pages, discovery). Zero means
	// no bound other than the caller's context.
	Timeout time.Duration

	// AllowInsecureToken permits sending credentials over plain HTTP to a
	// host that is not loopback. Off by default: a token on the wire in clear
	// text is a leak.
	AllowInsecureToken bool

	// Namespace is the default namespace from the kubeconfig context (or the
	// service account's); "" means "default".
	Namespace string

	// Transport, when set, replaces the transport built from the fields
	// above (auth is still added). For tests and special needs.
	Transport http.RoundTripper
}

// TLSConfig is the TLS part of Config.
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
	Command    string
	Args       []string
	Env        []ExecEnvVar
	APIVersion string // "client.authentication.k8s.io/v1" or v1beta1
	// InstallHint is shown when the command is missing.
	InstallHint string
	// InteractiveMode is "Never", "IfAvailable" or "Always"; kwatch never
	// gives the plugin a terminal.
	InteractiveMode string
	// ProvideClusterInfo passes the cluster in KUBERNETES_EXEC_INFO.
	ProvideClusterInfo bool
}

// ExecEnvVar is one environment variable for an exec plugin.
type ExecEnvVar struct {
	Name  string
	Value string
}
