package client_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/kube"
)

func applyCM(value string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "ap", "namespace": "demo"},
		"data":     map[string]any{"color": value},
	}}
}

func TestApplyConflictAndForce(t *testing.T) {
	_, c := startSim(t)
	cms := client.For(c, kube.Typed[*unstructured.Unstructured](kube.ConfigMaps), client.Options{FieldManager: "mgr-a"})
	out, err := cms.Apply(bg, applyCM("red"), client.ApplyOptions{})
	require.NoError(t, err, "apply creates, as the Client's field manager")
	require.Equal(t, "ConfigMap", out.GetKind(), "apiVersion and kind were added to the body")
	require.Equal(t, "mgr-a", out.GetManagedFields()[0].Manager)

	_, err = cms.Apply(bg, applyCM("blue"), client.ApplyOptions{FieldManager: "mgr-b"})
	require.True(t, kube.IsConflict(err), "%v", err)
	se, _ := kube.AsStatus(err)
	require.Len(t, se.Causes, 1)
	require.Equal(t, "FieldManagerConflict", se.Causes[0].Type)
	require.Equal(t, ".data.color", se.Causes[0].Field)

	out, err = cms.Apply(bg, applyCM("blue"), client.ApplyOptions{FieldManager: "mgr-b", Force: true})
	require.NoError(t, err)
	data, _, _ := unstructured.NestedStringMap(out.Object, "data")
	require.Equal(t, "blue", data["color"])

	dry, err := cms.Apply(bg, applyCM("green"), client.ApplyOptions{FieldManager: "mgr-b", DryRun: true})
	require.NoError(t, err)
	data, _, _ = unstructured.NestedStringMap(dry.Object, "data")
	require.Equal(t, "green", data["color"], "the dry run answers what the apply would store")
	got, err := cms.Get(bg, "demo", "ap", client.GetOptions{})
	require.NoError(t, err)
	data, _, _ = unstructured.NestedStringMap(got.Object, "data")
	require.Equal(t, "blue", data["color"], "and stores nothing")
}

func TestScaleSubresource(t *testing.T) {
	_, c := startSim(t)
	deps := client.For(c, kube.Typed[*Deployment](kube.Deployments), client.Options{})
	_, err := deps.Create(bg, deployment("web", 2), client.CreateOptions{})
	require.NoError(t, err)
	s, err := deps.GetScale(bg, "demo", "web")
	require.NoError(t, err)
	require.Equal(t, "Scale", s.Kind)
	require.Equal(t, int32(2), s.Spec.Replicas)
	s, err = deps.SetScale(bg, "demo", "web", 7, client.WriteOptions{})
	require.NoError(t, err)
	require.Equal(t, int32(7), s.Spec.Replicas)
	d, err := deps.Get(bg, "demo", "web", client.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, int32(7), *d.Spec.Replicas)
	_, err = deps.GetScale(bg, "demo", "none")
	require.True(t, kube.IsNotFound(err), "%v", err)
}

func TestDeleteOptionsReachTheServer(t *testing.T) {
	_, c := startSim(t)
	cms := client.For(c, kube.Typed[*ConfigMap](kube.ConfigMaps), client.Options{})
	_, err := cms.Create(bg, cm("a", nil), client.CreateOptions{})
	require.NoError(t, err)
	zero := int64(0)
	err = cms.Delete(bg, "demo", "a", client.DeleteOptions{Propagation: client.Foreground, GracePeriodSeconds: &zero, DryRun: true})
	require.NoError(t, err)
	_, err = cms.Get(bg, "demo", "a", client.GetOptions{})
	require.NoError(t, err, "a dry-run delete deletes nothing")
	got, err := cms.Get(bg, "demo", "a", client.GetOptions{})
	require.NoError(t, err)
	err = cms.Delete(bg, "demo", "a", client.DeleteOptions{Preconditions: client.Preconditions{ResourceVersion: "1"}})
	require.True(t, kube.IsConflict(err), "a stale resourceVersion precondition: %v", err)
	require.NoError(t, cms.Delete(bg, "demo", "a", client.DeleteOptions{Propagation: client.Background,
		Preconditions: client.Preconditions{UID: string(got.UID), ResourceVersion: got.ResourceVersion}}))
	_, err = cms.Get(bg, "demo", "a", client.GetOptions{})
	require.True(t, kube.IsNotFound(err))
}
