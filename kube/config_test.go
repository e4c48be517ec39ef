package kube

import (
	"net/http"
	"testing"
	"time"
)

// TestConfigStringNamesGroups: String shows each group that is set under
// its name, and leaves out the groups left zero.
func TestConfigStringNamesGroups(t *testing.T) {
	tests := []struct {
		name string
		c    Config
		want string
	}{
		{"zero groups", Config{Host: "https://kube.test"},
			`kube.Config{Host: "https://kube.test", TLS: kube.TLSConfig{Insecure: false}}`},
		{"every group", Config{Host: "https://kube.test", Namespace: "ns",
			Auth:      AuthConfig{BearerTokenFile: "/t", AllowInsecureToken: true},
			RateLimit: RateLimitConfig{QPS: 0.5, Burst: 3, MaxRetries: -1},
			Encoding:  EncodingConfig{ContentType: ContentTypeJSON, NoProtobufIntern: true},
			HTTP:      HTTPConfig{Proxy: http.ProxyFromEnvironment, UserAgent: "me", Timeout: time.Second, Transport: &recordingTransport{}}},
			`kube.Config{Host: "https://kube.test", Namespace: "ns", ` +
				`Auth: kube.AuthConfig{BearerTokenFile: "/t", AllowInsecureToken: true}, TLS: kube.TLSConfig{Insecure: false}, ` +
				`RateLimit: kube.RateLimitConfig{QPS: 0.5, Burst: 3, MaxRetries: -1}, ` +
				`Encoding: kube.EncodingConfig{ContentType: "application/json", NoProtobufIntern: true}, ` +
				`HTTP: kube.HTTPConfig{Proxy: (func), UserAgent: "me", Timeout: 1s, Transport: *kube.recordingTransport}}`},
	}
	for _, tt := range tests {
		if got := tt.c.String(); got != tt.want {
			t.Errorf("%s:\ngot  %s\nwant %s", tt.name, got, tt.want)
		}
	}
}
