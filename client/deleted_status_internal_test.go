package client

import (
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kwatch/kwatch/internal/pbwire"
	"github.com/kwatch/kwatch/kube"
)

// TestStatusDetailsOfADelete: the Status kube-apiserver answers an
// immediate delete with names the object's uid, in JSON and in enveloped
// protobuf; the recorder gets it (before, the uid was dropped). A body
// that is not a Status gives nothing.
func TestStatusDetailsOfADelete(t *testing.T) {
	st := metav1.Status{Status: metav1.StatusSuccess,
		Details: &metav1.StatusDetails{Name: "x", Kind: "configmaps", UID: "u1"}}
	raw, err := st.Marshal()
	require.NoError(t, err)
	env, err := (&runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: "v1", Kind: "Status"}, Raw: raw}).Marshal()
	require.NoError(t, err)
	tests := []struct {
		name, ctype string
		body        []byte
		want        string
		ok          bool
	}{
		{"json", kube.ContentTypeJSON, []byte(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"x","kind":"configmaps","uid":"u1"}}`), "u1", true},
		{"protobuf", kube.ContentTypeProtobuf, append(pbwire.Magic[:], env...), "u1", true},
		{"protobuf, not a Status", kube.ContentTypeProtobuf, []byte("k8s\x00"), "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, ok := statusDetails(tt.body, tt.ctype)
			require.Equal(t, tt.ok, ok)
			require.Equal(t, tt.want, d.UID, "got %+v", d)
		})
	}
}
