package kube

import (
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestIsWatchQueryReadsLikeTheServer(t *testing.T) {
	tests := []struct {
		query string
		want  bool
	}{
		{"", false},
		{"limit=5", false},
		{"watch=1", true},
		{"watch=true", true},
		{"watch=", true},
		{"watch", true},
		{"watch=yes", true},
		{"watch=0", false},
		{"watch=false", false},
		{"watch=FALSE", false},
		{"watch=0&watch=1", false},
	}
	for _, tt := range tests {
		q, err := url.ParseQuery(tt.query)
		require.NoError(t, err)
		if got := isWatchQuery(q); got != tt.want {
			t.Errorf("isWatchQuery(%q) = %v, want %v", tt.query, got, tt.want)
		}
	}
}

func TestIsProtobuf(t *testing.T) {
	for ct, want := range map[string]bool{
		"application/vnd.kubernetes.protobuf":               true,
		"application/vnd.kubernetes.protobuf;stream=watch":  true,
		"Application/Vnd.Kubernetes.Protobuf; stream=watch": true,
		"application/json":                         false,
		"application/vnd.kubernetes.protobuf+json": false,
		"":                      false,
		strings.Repeat("x", 10): false,
	} {
		require.Equal(t, want, IsProtobuf(ct), ct)
	}
}
