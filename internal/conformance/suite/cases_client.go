package suite

import (
	"context"
	"strings"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/kube"
)

// The client cases drive kwatch's write client (package client) with
// k8s.io/api's typed objects, in JSON and in protobuf, against both
// targets: the typed errors, each verb and its options must come out the
// same from the real server and the simulator.
func clientCases() []Case {
	return []Case{
		{Name: "client/create-update-conflict-json", Run: func(t T, e *Env) { testClientConflict(t, e, client.JSON) }},
		{Name: "client/create-update-conflict-protobuf", Run: func(t T, e *Env) { testClientConflict(t, e, client.Protobuf) }},
		{Name: "client/already-exists-and-invalid", Run: testClientAlreadyExistsInvalid},
		{Name: "client/patch-types", Run: testClientPatchTypes},
		{Name: "client/apply-conflict-and-force", Run: testClientApply},
		{Name: "client/status-subresource", Run: testClientStatus},
		{Name: "client/delete-preconditions-and-dry-run", Run: testClientDelete},
		{Name: "client/scale-subresource", Run: testClientScale},
		{Name: "client/secret-string-data", Run: testClientSecret},
		{Name: "client/delete-records-uid-json", Run: func(t T, e *Env) { testClientDeleteRecordsUID(t, e, client.JSON) }},
		{Name: "client/delete-records-uid-protobuf", Run: func(t T, e *Env) { testClientDeleteRecordsUID(t, e, client.Protobuf) }},
	}
}

var (
	configMapsRes  = kube.Resource{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true}
	secretsRes     = kube.Resource{Version: "v1", Resource: "secrets", Kind: "Secret", Namespaced: true}
	deploymentsRes = kube.Resource{Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Namespaced: true}
)

func newConfigMap(ns, name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
}

func newDeployment(ns, name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "nginx:1.27"}}},
			},
		},
	}
}

// testClientConflict: create, read, update; a stale update is a typed 409
// naming the object; Modify re-reads and wins.
func testClientConflict(t T, e *Env, encoding client.Encoding) {
	cms := client.For(e.Admin, kube.Typed[*corev1.ConfigMap](configMapsRes), client.Options{Encoding: encoding})
	created, err := cms.Create(e.Ctx, newConfigMap(e.NS, "c", map[string]string{"k": "1"}), client.CreateOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, created.UID)
	require.Equal(t, "1", created.Data["k"])

	fresh, err := cms.Get(e.Ctx, e.NS, "c", client.GetOptions{})
	require.NoError(t, err)
	fresh.Data["k"] = "2"
	updated, err := cms.Update(e.Ctx, fresh, client.UpdateOptions{})
	require.NoError(t, err)
	require.Equal(t, "2", updated.Data["k"])

	created.Data["k"] = "stale"
	_, err = cms.Update(e.Ctx, created, client.UpdateOptions{})
	require.True(t, kube.IsConflict(err), "a stale update: %v", err)
	se, _ := kube.AsStatus(err)
	require.Equal(t, "Conflict", se.Reason)
	require.Equal(t, "c", se.Details.Name)
	require.Equal(t, "configmaps", se.Details.Kind)
	require.Contains(t, se.Message, "the object has been modified; please apply your changes to the latest version and try again")

	out, err := cms.Modify(e.Ctx, e.NS, "c", func(m *corev1.ConfigMap) error {
		m.Data["k"] = "3"
		return nil
	}, client.UpdateOptions{})
	require.NoError(t, err)
	require.Equal(t, "3", out.Data["k"])
}

// testClientAlreadyExistsInvalid: a second create is AlreadyExists (not a
// conflict to retry); an invalid object is a 422 whose causes name the
// fields.
func testClientAlreadyExistsInvalid(t T, e *Env) {
	cms := client.For(e.Admin, kube.Typed[*corev1.ConfigMap](configMapsRes), client.Options{})
	_, err := cms.Create(e.Ctx, newConfigMap(e.NS, "dup", nil), client.CreateOptions{})
	require.NoError(t, err)
	_, err = cms.Create(e.Ctx, newConfigMap(e.NS, "dup", nil), client.CreateOptions{})
	require.True(t, kube.IsAlreadyExists(err), "%v", err)
	require.False(t, kube.IsConflict(err))

	_, err = cms.Create(e.Ctx, newConfigMap(e.NS, "Bad_Name", map[string]string{"bad key": "v"}), client.CreateOptions{})
	require.True(t, kube.IsInvalid(err), "%v", err)
	se, _ := kube.AsStatus(err)
	require.Equal(t, "Invalid", se.Reason)
	require.Equal(t, []string{"metadata.name", "data[bad key]"}, se.Fields())
	for _, c := range se.Causes {
		require.Equal(t, "FieldValueInvalid", c.Type, "%v", c)
	}
}

// testClientPatchTypes: a merge patch deletes with null, a JSON patch
// replaces and its failing test is refused, a strategic merge patch
// merges the containers list by name.
func testClientPatchTypes(t T, e *Env) {
	cms := client.For(e.Admin, kube.Typed[*corev1.ConfigMap](configMapsRes), client.Options{})
	_, err := cms.Create(e.Ctx, newConfigMap(e.NS, "p", map[string]string{"a": "1", "b": "2"}), client.CreateOptions{})
	require.NoError(t, err)
	m, err := cms.Patch(e.Ctx, e.NS, "p", client.MergePatch, []byte(`{"data":{"a":null,"c":"3"}}`), client.PatchOptions{})
	require.NoError(t, err)
	require.Equal(t, map[string]string{"b": "2", "c": "3"}, m.Data)
	m, err = cms.Patch(e.Ctx, e.NS, "p", client.JSONPatch, []byte(`[{"op":"test","path":"/data/b","value":"2"},{"op":"replace","path":"/data/b","value":"20"}]`), client.PatchOptions{Repeatable: true})
	require.NoError(t, err)
	require.Equal(t, "20", m.Data["b"])
	_, err = cms.Patch(e.Ctx, e.NS, "p", client.JSONPatch, []byte(`[{"op":"test","path":"/data/b","value":"2"}]`), client.PatchOptions{})
	se, ok := kube.AsStatus(err)
	require.True(t, ok, "a failing test operation: %v", err)
	require.Equal(t, int32(422), se.Code, "%v", err)

	deps := client.For(e.Admin, kube.Typed[*appsv1.Deployment](deploymentsRes), client.Options{})
	_, err = deps.Create(e.Ctx, newDeployment(e.NS, "web", 1), client.CreateOptions{})
	require.NoError(t, err)
	d, err := deps.Patch(e.Ctx, e.NS, "web", client.StrategicMergePatch,
		[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"busybox:1.36"}]}}}}`), client.PatchOptions{})
	require.NoError(t, err)
	var names []string
	for _, c := range d.Spec.Template.Spec.Containers {
		names = append(names, c.Name)
	}
	require.ElementsMatch(t, []string{"main", "sidecar"}, names, "containers merge by name")
}

// testClientApply: two managers apply the same field; the second
// conflicts, naming the field and the owner, until it forces.
func testClientApply(t T, e *Env) {
	cfg := func(v string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "ap", "namespace": e.NS},
			"data":     map[string]any{"color": v},
		}}
	}
	cms := client.For(e.Admin, kube.Typed[*unstructured.Unstructured](configMapsRes), client.Options{})
	out, err := cms.Apply(e.Ctx, cfg("red"), client.ApplyOptions{FieldManager: "mgr-a"})
	require.NoError(t, err, "apply creates")
	require.Equal(t, "red", out.Object["data"].(map[string]any)["color"])

	_, err = cms.Apply(e.Ctx, cfg("blue"), client.ApplyOptions{FieldManager: "mgr-b"})
	require.True(t, kube.IsConflict(err), "%v", err)
	se, _ := kube.AsStatus(err)
	require.Len(t, se.Causes, 1, "%v", se.Causes)
	require.Equal(t, "FieldManagerConflict", se.Causes[0].Type)
	require.Equal(t, ".data.color", se.Causes[0].Field)
	require.Contains(t, se.Causes[0].Message, `conflict with "mgr-a"`)

	out, err = cms.Apply(e.Ctx, cfg("blue"), client.ApplyOptions{FieldManager: "mgr-b", Force: true})
	require.NoError(t, err)
	require.Equal(t, "blue", out.Object["data"].(map[string]any)["color"])
	owners := map[string]string{}
	for _, mf := range out.GetManagedFields() {
		owners[mf.Manager] = string(mf.Operation)
	}
	require.Equal(t, "Apply", owners["mgr-b"], "managed fields %v", owners)
}

// testClientStatus: status goes through /status; an update of the object
// keeps the stored status.
func testClientStatus(t T, e *Env) {
	deps := client.For(e.Admin, kube.Typed[*appsv1.Deployment](deploymentsRes), client.Options{Encoding: client.Protobuf})
	d, err := deps.Create(e.Ctx, newDeployment(e.NS, "st", 2), client.CreateOptions{})
	require.NoError(t, err)
	d.Status.ObservedGeneration = 7
	d.Status.Replicas = 2
	d2, err := deps.UpdateStatus(e.Ctx, d, client.WriteOptions{})
	require.NoError(t, err)
	require.Equal(t, int64(7), d2.Status.ObservedGeneration)

	d2.Status.ObservedGeneration = 99
	d2.Labels = map[string]string{"tier": "front"}
	d3, err := deps.Update(e.Ctx, d2, client.UpdateOptions{})
	require.NoError(t, err)
	require.Equal(t, int64(7), d3.Status.ObservedGeneration, "an update of the object leaves status alone")
	require.Equal(t, "front", d3.Labels["tier"])
}

// testClientDelete: a failing UID precondition is a conflict; dry runs of
// create and delete leave no trace.
func testClientDelete(t T, e *Env) {
	cms := client.For(e.Admin, kube.Typed[*corev1.ConfigMap](configMapsRes), client.Options{})
	c, err := cms.Create(e.Ctx, newConfigMap(e.NS, "d", nil), client.CreateOptions{})
	require.NoError(t, err)
	err = cms.Delete(e.Ctx, e.NS, "d", client.DeleteOptions{Preconditions: client.Preconditions{UID: "00000000-0000-0000-0000-000000000000"}})
	require.True(t, kube.IsConflict(err), "%v", err)
	se, _ := kube.AsStatus(err)
	require.True(t, strings.HasPrefix(se.Message, `Operation cannot be fulfilled on ConfigMap "d": the UID in the precondition (00000000-0000-0000-0000-000000000000) does not match the UID in record (`+string(c.UID)+`)`), se.Message)

	require.NoError(t, cms.Delete(e.Ctx, e.NS, "d", client.DeleteOptions{DryRun: true}))
	_, err = cms.Get(e.Ctx, e.NS, "d", client.GetOptions{})
	require.NoError(t, err, "a dry-run delete deletes nothing")

	_, err = cms.Create(e.Ctx, newConfigMap(e.NS, "dry", nil), client.CreateOptions{WriteOptions: client.WriteOptions{DryRun: true}})
	require.NoError(t, err)
	_, err = cms.Get(e.Ctx, e.NS, "dry", client.GetOptions{})
	require.True(t, kube.IsNotFound(err), "a dry-run create creates nothing: %v", err)

	require.NoError(t, cms.Delete(e.Ctx, e.NS, "d", client.DeleteOptions{Preconditions: client.Preconditions{UID: string(c.UID)}}))
	_, err = cms.Get(e.Ctx, e.NS, "d", client.GetOptions{})
	require.True(t, kube.IsNotFound(err), "%v", err)
}

// testClientScale: the scale subresource reads and sets a deployment's
// replicas.
func testClientScale(t T, e *Env) {
	deps := client.For(e.Admin, kube.Typed[*appsv1.Deployment](deploymentsRes), client.Options{})
	_, err := deps.Create(e.Ctx, newDeployment(e.NS, "sc", 1), client.CreateOptions{})
	require.NoError(t, err)
	s, err := deps.GetScale(e.Ctx, e.NS, "sc")
	require.NoError(t, err)
	require.Equal(t, "Scale", s.Kind)
	require.Equal(t, "autoscaling/v1", s.APIVersion)
	require.Equal(t, int32(1), s.Spec.Replicas)
	s, err = deps.SetScale(e.Ctx, e.NS, "sc", 4, client.WriteOptions{})
	require.NoError(t, err)
	require.Equal(t, int32(4), s.Spec.Replicas)
	d, err := deps.Get(e.Ctx, e.NS, "sc", client.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, int32(4), *d.Spec.Replicas)
}

// testClientSecret: stringData is merged into data and not stored; type
// defaults to Opaque.
func testClientSecret(t T, e *Env) {
	secrets := client.For(e.Admin, kube.Typed[*corev1.Secret](secretsRes), client.Options{})
	_, err := secrets.Create(e.Ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: e.NS, Name: "s"},
		Data: map[string][]byte{"a": []byte("x"), "b": []byte("y")}, StringData: map[string]string{"b": "two"}}, client.CreateOptions{})
	require.NoError(t, err)
	got, err := secrets.Get(e.Ctx, e.NS, "s", client.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, corev1.SecretTypeOpaque, got.Type)
	require.Empty(t, got.StringData)
	require.Equal(t, map[string][]byte{"a": []byte("x"), "b": []byte("two")}, got.Data)
}

// testClientDeleteRecordsUID: the write a delete reports to the client's
// WriteRecorder names the uid that went, whether the server answered with
// the deleted object or with a Status (kube-apiserver's answer for a
// ConfigMap), so a manager's expectations know which incarnation went.
func testClientDeleteRecordsUID(t T, e *Env, encoding client.Encoding) {
	var got []kube.Written
	rec := e.Admin.WithWriteRecorder(func(_ context.Context, w kube.Written) {
		if w.Deleted {
			got = append(got, w)
		}
	})
	cms := client.For(rec, kube.Typed[*corev1.ConfigMap](configMapsRes), client.Options{Encoding: encoding})
	cm, err := cms.Create(e.Ctx, newConfigMap(e.NS, "gone", nil), client.CreateOptions{})
	require.NoError(t, err)
	require.NoError(t, cms.Delete(e.Ctx, e.NS, "gone", client.DeleteOptions{}))
	pods := client.For(rec, kube.Typed[*corev1.Pod](kube.Pods), client.Options{Encoding: encoding})
	pod, err := pods.Create(e.Ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: e.NS, Name: "gone"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/pause"}}}}, client.CreateOptions{})
	require.NoError(t, err)
	zero := int64(0)
	require.NoError(t, pods.Delete(e.Ctx, e.NS, "gone", client.DeleteOptions{GracePeriodSeconds: &zero}))
	require.Len(t, got, 2)
	require.Equal(t, string(cm.UID), got[0].UID, "the configmap's delete")
	require.Equal(t, string(pod.UID), got[1].UID, "the pod's delete")
}
