package webhook

import (
	"context"
	"encoding/base64"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/kwatchtest"
)

// TestSelfSignedWritesCABundles: Run writes its CA into every webhook of
// the named configurations and the CRD's conversion webhook; a name that
// does not exist fails Run, naming it.
func TestSelfSignedWritesCABundles(t *testing.T) {
	srv := kwatchtest.Start(t, kwatchtest.Options{})
	srv.MustApply(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: v}
webhooks:
- {name: a.example.com, clientConfig: {url: "https://127.0.0.1:1/a"}, sideEffects: None, admissionReviewVersions: [v1]}
- {name: b.example.com, clientConfig: {url: "https://127.0.0.1:1/b"}, sideEffects: None, admissionReviewVersions: [v1]}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gizmos.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gizmos, singular: gizmo, kind: Gizmo}
  versions: [{name: v1, served: true, storage: true}]
  conversion: {strategy: Webhook, webhook: {conversionReviewVersions: [v1], clientConfig: {url: "https://127.0.0.1:1/c"}}}
`)
	c, err := kube.NewClient(srv.Config())
	require.NoError(t, err)
	s := newTestServer(t, Options{Addr: "127.0.0.1:0", SelfSigned: &SelfSigned{Client: c,
		ValidatingWebhookConfigurations: []string{"v"}, CustomResourceDefinitions: []string{"gizmos.example.com"}}})
	runServer(t, s)
	want := base64.StdEncoding.EncodeToString(s.CACertPEM())
	var cfg struct {
		Webhooks []struct {
			ClientConfig struct{ CABundle string } `json:"clientConfig"`
		} `json:"webhooks"`
	}
	o, err := srv.Get("validatingwebhookconfigurations.admissionregistration.k8s.io", "", "v")
	require.NoError(t, err)
	require.NoError(t, o.Into(&cfg))
	require.Len(t, cfg.Webhooks, 2)
	for _, h := range cfg.Webhooks {
		require.Equal(t, want, h.ClientConfig.CABundle)
	}
	var crd struct {
		Spec struct {
			Conversion struct {
				Webhook struct {
					ClientConfig struct{ CABundle string } `json:"clientConfig"`
				} `json:"webhook"`
			} `json:"conversion"`
		} `json:"spec"`
	}
	o, err = srv.Get("customresourcedefinitions.apiextensions.k8s.io", "", "gizmos.example.com")
	require.NoError(t, err)
	require.NoError(t, o.Into(&crd))
	require.Equal(t, want, crd.Spec.Conversion.Webhook.ClientConfig.CABundle)

	missing := newTestServer(t, Options{Addr: "127.0.0.1:0", SelfSigned: &SelfSigned{Client: c,
		MutatingWebhookConfigurations: []string{"nope"}}})
	err = missing.Run(context.Background())
	require.ErrorContains(t, err, "write the self-signed CA into MutatingWebhookConfiguration nope")
	require.True(t, kube.IsNotFound(err), "%v", err)
}
