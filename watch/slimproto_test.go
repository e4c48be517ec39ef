package watch

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/kube"
)

// slimPod embeds metav1.ObjectMeta alone, so ObjectMeta's generated
// Unmarshal is in its method set: decoding a Pod message with it would read
// the whole object as metadata.
type slimPod struct {
	metav1.ObjectMeta `json:"metadata"`
	Status            struct {
		Phase string `json:"phase"`
	} `json:"status"`
}

// slimTyped embeds TypeMeta too: the two Unmarshal methods collide and
// neither is promoted.
type slimTyped struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
}

func TestSlimTypesWithPromotedUnmarshalAskForJSON(t *testing.T) {
	require.False(t, DecodesProtobuf[*slimPod](), "ObjectMeta's Unmarshal is not the slim pod's")
	require.False(t, DecodesProtobuf[*slimTyped]())
	require.True(t, DecodesProtobuf[*protoPod](), "a type with an Unmarshal of its own")
	require.True(t, DecodesProtobuf[*metav1.PartialObjectMetadata](), "generated: declares its own")

	f, c := newFake(t, map[string]http.HandlerFunc{"/api/v1/pods": capture(t, "list-pods-page1.json", 200)})
	page, err := List[*slimPod](context.Background(), c, kube.Pods, kube.Scope{}, ListOptions{})
	require.NoError(t, err)
	require.Equal(t, acceptJSON, f.last().Header.Get("Accept"), "no protobuf asked for a slim type")
	require.NotEmpty(t, page.Items)
	require.NotEmpty(t, page.Items[0].Name)
}
