package client_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

func TestCreateGetUpdateDelete(t *testing.T) {
	_, c := startSim(t)
	cms := client.For(c, kube.Typed[*ConfigMap](configMaps), client.Options{})

	created, err := cms.Create(bg, cm("a", map[string]string{"k": "1"}), client.CreateOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, created.UID)
	require.NotEmpty(t, created.ResourceVersion)
	require.Equal(t, "ConfigMap", created.Kind, "the server's answer carries its type")

	got, err := cms.Get(bg, "demo", "a", client.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, map[string]string{"k": "1"}, got.Data)

	got.Data["k"] = "2"
	updated, err := cms.Update(bg, got, client.UpdateOptions{})
	require.NoError(t, err)
	require.Equal(t, "2", updated.Data["k"])
	require.NotEqual(t, got.ResourceVersion, updated.ResourceVersion)

	// got still holds the old resourceVersion: a stale update is a conflict.
	got.Data["k"] = "3"
	_, err = cms.Update(bg, got, client.UpdateOptions{})
	require.True(t, kube.IsConflict(err), "%v", err)
	require.False(t, kube.IsAlreadyExists(err))
	se, ok := kube.AsStatus(err)
	require.True(t, ok)
	require.Equal(t, "Conflict", se.Reason)
	require.Equal(t, "a", se.Details.Name)
	require.Contains(t, err.Error(), `update configmaps "a" in namespace "demo"`)

	err = cms.Delete(bg, "demo", "a", client.DeleteOptions{Preconditions: client.Preconditions{UID: "not-the-uid"}})
	require.True(t, kube.IsConflict(err), "a failing UID precondition: %v", err)
	require.NoError(t, cms.Delete(bg, "demo", "a", client.DeleteOptions{Preconditions: client.Preconditions{UID: string(created.UID)}}))
	_, err = cms.Get(bg, "demo", "a", client.GetOptions{})
	require.True(t, kube.IsNotFound(err), "%v", err)
}

func TestCreateOfAnExistingNameIsAlreadyExists(t *testing.T) {
	_, c := startSim(t)
	cms := client.For(c, kube.Typed[*ConfigMap](configMaps), client.Options{})
	_, err := cms.Create(bg, cm("a", nil), client.CreateOptions{})
	require.NoError(t, err)
	_, err = cms.Create(bg, cm("a", nil), client.CreateOptions{})
	require.True(t, kube.IsAlreadyExists(err), "%v", err)
	require.False(t, kube.IsConflict(err), "AlreadyExists is not a conflict to retry")
}

func TestModifyRetriesOnConflict(t *testing.T) {
	srv, c := startSim(t)
	cms := client.For(c, kube.Typed[*ConfigMap](configMaps), client.Options{})
	_, err := cms.Create(bg, cm("a", map[string]string{"n": "0"}), client.CreateOptions{})
	require.NoError(t, err)
	calls := 0
	out, err := cms.Modify(bg, "demo", "a", func(m *ConfigMap) error {
		calls++
		if calls == 1 {
			// Another writer changes the object between our read and our update.
			_, err := srv.Patch("configmaps", "demo", "a", `{"data":{"other":"x"}}`)
			require.NoError(t, err)
		}
		m.Data["n"] = "1"
		return nil
	}, client.UpdateOptions{})
	require.NoError(t, err)
	require.Equal(t, 2, calls, "the change is re-applied to a fresh read after the conflict")
	require.Equal(t, map[string]string{"n": "1", "other": "x"}, out.Data)

	out2, err := cms.Modify(bg, "demo", "a", func(*ConfigMap) error { return client.ErrNoChange }, client.UpdateOptions{})
	require.NoError(t, err)
	require.Equal(t, out.ResourceVersion, out2.ResourceVersion, "no change, no write")
}

func TestPatchTypes(t *testing.T) {
	_, c := startSim(t)
	cms := client.For(c, kube.Typed[*ConfigMap](configMaps), client.Options{})
	_, err := cms.Create(bg, cm("a", map[string]string{"a": "1", "b": "2"}), client.CreateOptions{})
	require.NoError(t, err)

	m, err := cms.Patch(bg, "demo", "a", client.MergePatch, []byte(`{"data":{"a":null,"c":"3"}}`), client.PatchOptions{})
	require.NoError(t, err)
	require.Equal(t, map[string]string{"b": "2", "c": "3"}, m.Data)

	m, err = cms.Patch(bg, "demo", "a", client.JSONPatch, []byte(`[{"op":"replace","path":"/data/b","value":"20"}]`), client.PatchOptions{})
	require.NoError(t, err)
	require.Equal(t, "20", m.Data["b"])

	_, err = cms.Patch(bg, "demo", "a", client.JSONPatch, []byte(`[{"op":"test","path":"/data/b","value":"nope"}]`), client.PatchOptions{})
	require.Error(t, err, "a failing test operation")
	_, isStatus := kube.AsStatus(err)
	require.True(t, isStatus, "%v", err)

	m, err = cms.Patch(bg, "demo", "a", client.StrategicMergePatch, []byte(`{"data":{"d":"4"}}`), client.PatchOptions{})
	require.NoError(t, err)
	require.Equal(t, map[string]string{"b": "20", "c": "3", "d": "4"}, m.Data)
}

func TestUpdateStatusWritesOnlyStatus(t *testing.T) {
	_, c := startSim(t)
	deps := client.For(c, kube.Typed[*Deployment](deployments), client.Options{})
	d, err := deps.Create(bg, deployment("web", 2), client.CreateOptions{})
	require.NoError(t, err)

	d.Status.Replicas = 2
	d.Status.ObservedGeneration = 1
	*d.Spec.Replicas = 5 // ignored: only status is written through /status
	d2, err := deps.UpdateStatus(bg, d, client.WriteOptions{})
	require.NoError(t, err)
	require.Equal(t, int32(2), d2.Status.Replicas)
	require.Equal(t, int32(2), *d2.Spec.Replicas)

	d2.Status.Replicas = 9 // ignored: an update of the object keeps the stored status
	d2.Labels = map[string]string{"tier": "front"}
	d3, err := deps.Update(bg, d2, client.UpdateOptions{})
	require.NoError(t, err)
	require.Equal(t, int32(2), d3.Status.Replicas)
	require.Equal(t, "front", d3.Labels["tier"])
}

func TestDryRunLeavesNoTrace(t *testing.T) {
	srv, c := startSim(t)
	cms := client.For(c, kube.Typed[*ConfigMap](configMaps), client.Options{})
	out, err := cms.Create(bg, cm("a", map[string]string{"k": "v"}), client.CreateOptions{WriteOptions: client.WriteOptions{DryRun: true}})
	require.NoError(t, err)
	require.Equal(t, "v", out.Data["k"])
	_, err = srv.Get("configmaps", "demo", "a")
	require.Error(t, err, "a dry-run create stores nothing")
	_, err = cms.Get(bg, "demo", "a", client.GetOptions{})
	require.True(t, kube.IsNotFound(err), "%v", err)
}

func TestUnstructuredObjects(t *testing.T) {
	_, c := startSim(t)
	objs := client.For(c, kube.Typed[*unstructured.Unstructured](configMaps), client.Options{})
	u := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "u", "namespace": "demo"},
		"data":     map[string]any{"x": "y"},
	}}
	out, err := objs.Create(bg, u, client.CreateOptions{})
	require.NoError(t, err)
	require.Equal(t, "ConfigMap", out.GetKind(), "apiVersion and kind were added to the body")
	data, _, _ := unstructured.NestedStringMap(out.Object, "data")
	require.Equal(t, map[string]string{"x": "y"}, data)

	page, err := objs.List(bg, kube.Scope{Namespace: "demo"}, watch.ListOptions{})
	require.NoError(t, err)
	require.Len(t, page.Items, 1)
}

func TestDeleteCollectionBySelector(t *testing.T) {
	_, c := startSim(t)
	cms := client.For(c, kube.Typed[*ConfigMap](configMaps), client.Options{})
	for _, n := range []string{"a", "b", "c"} {
		m := cm(n, nil)
		if n != "c" {
			m.Labels = map[string]string{"drop": "yes"}
		}
		_, err := cms.Create(bg, m, client.CreateOptions{})
		require.NoError(t, err)
	}
	require.NoError(t, cms.DeleteCollection(bg, kube.Scope{Namespace: "demo", LabelSelector: "drop=yes"}, client.DeleteOptions{}))
	page, err := cms.List(bg, kube.Scope{Namespace: "demo"}, watch.ListOptions{})
	require.NoError(t, err)
	require.Len(t, page.Items, 1)
	require.Equal(t, "c", page.Items[0].Name)
}

func TestBadInputIsRefusedBeforeSending(t *testing.T) {
	c, tr := cannedClient(t, kube.Config{})
	cms := client.For(c, kube.Typed[*ConfigMap](configMaps), client.Options{})
	nss := client.For(c, kube.Typed[*unstructured.Unstructured](namespaces), client.Options{})
	wrongKind := &unstructured.Unstructured{Object: map[string]any{"kind": "Secret", "apiVersion": "v1",
		"metadata": map[string]any{"name": "x", "namespace": "demo"}}}
	wrongVersion := &unstructured.Unstructured{Object: map[string]any{"kind": "ConfigMap", "apiVersion": "v2",
		"metadata": map[string]any{"name": "x", "namespace": "demo"}}}
	cluster := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "x", "namespace": "demo"}}}
	cmsU := client.For(c, kube.Typed[*unstructured.Unstructured](configMaps), client.Options{})
	tests := []struct {
		name, what string
		call       func() error
	}{
		{"get without a name", "name", func() error { _, err := cms.Get(bg, "demo", "", client.GetOptions{}); return err }},
		{"get without a namespace", "namespace", func() error { _, err := cms.Get(bg, "", "a", client.GetOptions{}); return err }},
		{"a name that is a path", "name", func() error { _, err := cms.Get(bg, "demo", "a/b", client.GetOptions{}); return err }},
		{"a namespace on a cluster-scoped resource", "namespace", func() error {
			_, err := nss.Create(bg, cluster, client.CreateOptions{})
			return err
		}},
		{"create without a namespace", "namespace", func() error {
			_, err := cms.Create(bg, &ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, client.CreateOptions{})
			return err
		}},
		{"update without a name", "name", func() error { _, err := cms.Update(bg, cm("", nil), client.UpdateOptions{}); return err }},
		{"an object of another kind", "kind", func() error { _, err := cmsU.Create(bg, wrongKind, client.CreateOptions{}); return err }},
		{"an object of another version", "apiVersion", func() error { _, err := cmsU.Create(bg, wrongVersion, client.CreateOptions{}); return err }},
		{"a typed object of another kind", "kind", func() error {
			m := cm("x", nil)
			m.Kind = "Secret"
			_, err := cms.Create(bg, m, client.CreateOptions{})
			return err
		}},
		{"a merge patch that is not an object", "patch", func() error {
			_, err := cms.Patch(bg, "demo", "a", client.MergePatch, []byte(`[1]`), client.PatchOptions{})
			return err
		}},
		{"a JSON patch that is not an array", "patch", func() error {
			_, err := cms.Patch(bg, "demo", "a", client.JSONPatch, []byte(`{}`), client.PatchOptions{})
			return err
		}},
		{"an unknown patch type", "patch", func() error {
			_, err := cms.Patch(bg, "demo", "a", "text/plain", []byte(`{}`), client.PatchOptions{})
			return err
		}},
		{"an unknown propagation policy", "propagation", func() error {
			return cms.Delete(bg, "demo", "a", client.DeleteOptions{Propagation: "Sideways"})
		}},
		{"a negative scale", "replicas", func() error { _, err := cms.SetScale(bg, "demo", "a", -1, client.WriteOptions{}); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			var ie *client.InputError
			require.True(t, errors.As(err, &ie), "%v", err)
			require.Equal(t, tt.what, ie.What, "%v", err)
		})
	}
	require.Zero(t, tr.requests(), "nothing was sent")
}

func TestMalformedAnswersAreNamedErrors(t *testing.T) {
	for name, body := range map[string]string{
		"not JSON":         `<html>hello</html>`,
		"a JSON array":     `[1,2]`,
		"cut short":        `{"metadata":{"name":"a"`,
		"wrong field type": `{"metadata":{"name":5}}`,
	} {
		t.Run(name, func(t *testing.T) {
			c, _ := cannedClient(t, kube.Config{}, cannedAnswer{code: http.StatusOK, body: body})
			_, err := client.For(c, kube.Typed[*ConfigMap](configMaps), client.Options{}).Get(bg, "demo", "a", client.GetOptions{})
			var de *watch.DecodeError
			require.True(t, errors.As(err, &de), "%v", err)
			require.Contains(t, err.Error(), `get configmaps "a" in namespace "demo"`)
		})
	}
}

func TestMetadataOnlyReadsAndForName(t *testing.T) {
	_, c := startSim(t)
	cms, err := client.ForName[*metav1.PartialObjectMetadata](bg, c, "cm", client.Options{})
	require.NoError(t, err)
	require.Equal(t, "configmaps", cms.Resource().Resource)
	_, err = client.For(c, kube.Typed[*ConfigMap](kube.ConfigMaps), client.Options{}).Create(bg, cm("a", map[string]string{"k": "v"}), client.CreateOptions{})
	require.NoError(t, err)
	meta, err := cms.Get(bg, "demo", "a", client.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, "PartialObjectMetadata", meta.Kind, "the server was asked for metadata only")
	require.Equal(t, "a", meta.Name)
	_, err = client.ForName[*ConfigMap](bg, c, "flunders", client.Options{})
	var unknown *kube.UnknownResourceError
	require.True(t, errors.As(err, &unknown), "%v", err)
}
