package suite

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The protobuf body cases send creates as kubectl sends them for built-in kinds
// (Content-Type application/vnd.kubernetes.protobuf: the "k8s\x00" magic, then a
// runtime.Unknown around the object's message). The server must store what it
// stores for the same object sent as JSON, and refuse a malformed body with a 400
// that says why.
func protoBodyCases() []Case {
	return []Case{
		{Name: "protobuf/create-body-stores-as-json", Run: testProtoBodyAsJSON},
		{Name: "protobuf/malformed-body-400", Run: testProtoBodyMalformed},
	}
}

const contentTypeProtobuf = "application/vnd.kubernetes.protobuf"

// wireObject is a typed object with its generated protobuf encoding.
type wireObject interface {
	Marshal() ([]byte, error)
	GetObjectMeta() metav1.Object
}

// protoBody is the request body a client sends for obj.
func protoBody(t T, apiVersion, kind string, obj wireObject) []byte {
	t.Helper()
	raw, err := obj.Marshal()
	require.NoError(t, err)
	u := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: apiVersion, Kind: kind}, Raw: raw}
	env, err := u.Marshal()
	require.NoError(t, err)
	return append([]byte("k8s\x00"), env...)
}

// send makes one request with a body and returns the status and answer.
func send(t T, e *Env, method, path, contentType string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(e.Ctx, method, path, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "application/json") // the answer's encoding is not under test
	resp, err := e.Admin.Do(req)
	require.NoError(t, err, "%s %s", method, path)
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxWriteBody))
	require.NoError(t, err)
	return resp.StatusCode, b
}

// protoBodyObjects are objects of several built-in kinds with fields of every
// protobuf kind: quantities, int-or-strings, maps, bytes, lists of messages.
func protoBodyObjects(ns string) []struct {
	apiVersion, kind, path string
	obj                    wireObject
} {
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": "pb"},
			Annotations: map[string]string{"note": "a\nb"}}
	}
	container := corev1.Container{Name: "c", Image: "registry.k8s.io/pause:3.10",
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
		Env:   []corev1.EnvVar{{Name: "A", Value: "1"}},
		Resources: corev1.ResourceRequirements{
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}},
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Path: "/", Port: intstr.FromString("http")}}, PeriodSeconds: 5},
	}
	replicas, maxSurge, maxUnavailable := int32(2), intstr.FromString("25%"), intstr.FromInt32(0)
	base := "/api/v1/namespaces/" + url.PathEscape(ns)
	return []struct {
		apiVersion, kind, path string
		obj                    wireObject
	}{
		{"v1", "ConfigMap", base + "/configmaps", &corev1.ConfigMap{ObjectMeta: meta("cm"),
			Data: map[string]string{"a": "b", "empty": ""}, BinaryData: map[string][]byte{"bin": {0, 0xff}}}},
		{"v1", "Secret", base + "/secrets", &corev1.Secret{ObjectMeta: meta("s"), Type: corev1.SecretTypeOpaque,
			Data: map[string][]byte{"a": []byte("b")}}},
		{"v1", "Pod", base + "/pods", &corev1.Pod{ObjectMeta: meta("p"), Spec: corev1.PodSpec{Containers: []corev1.Container{container}}}},
		{"apps/v1", "Deployment", "/apis/apps/v1/namespaces/" + url.PathEscape(ns) + "/deployments", &appsv1.Deployment{
			ObjectMeta: meta("d"), Spec: appsv1.DeploymentSpec{Replicas: &replicas,
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "pb"}},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "pb"}},
					Spec: corev1.PodSpec{Containers: []corev1.Container{container}}},
				Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
					RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &maxSurge, MaxUnavailable: &maxUnavailable}}}}},
	}
}

// testProtoBodyAsJSON: each object created once in JSON and once in protobuf is
// stored the same, apart from its name and the server-set metadata.
func testProtoBodyAsJSON(t T, e *Env) {
	for _, o := range protoBodyObjects(e.NS) {
		m := o.obj.GetObjectMeta()
		name := m.GetName()
		stored := map[string]map[string]any{}
		for _, enc := range []string{"json", "pb"} {
			m.SetName(name + "-" + enc)
			var body []byte
			ct := "application/json"
			if enc == "pb" {
				body, ct = protoBody(t, o.apiVersion, o.kind, o.obj), contentTypeProtobuf
			} else {
				var err error
				body, err = json.Marshal(o.obj)
				require.NoError(t, err)
			}
			code, answer := send(t, e, http.MethodPost, o.path+"?fieldManager=kwatch-conformance", ct, body)
			require.Equal(t, http.StatusCreated, code, "%s in %s: %s", o.kind, enc, answer)
			var obj map[string]any
			require.NoError(t, json.Unmarshal(answer, &obj), "%s in %s: %s", o.kind, enc, answer)
			md := obj["metadata"].(map[string]any)
			require.Equal(t, name+"-"+enc, md["name"])
			for _, f := range []string{"name", "uid", "resourceVersion", "creationTimestamp", "managedFields"} {
				delete(md, f)
			}
			stored[enc] = obj
		}
		require.Equal(t, stored["json"], stored["pb"], "%s: stored from protobuf as from JSON", o.kind)
	}
}

// testProtoBodyMalformed: malformed protobuf bodies are 400s whose message says
// what is wrong, in the real server's words.
func testProtoBodyMalformed(t T, e *Env) {
	cms := "/api/v1/namespaces/" + url.PathEscape(e.NS) + "/configmaps"
	pods := "/api/v1/namespaces/" + url.PathEscape(e.NS) + "/pods"
	cm := protoBody(t, "v1", "ConfigMap", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}})
	// metadata {name: varint 5}: field 1 of ObjectMeta with the wrong wire type.
	wrongWire := protoBody(t, "v1", "ConfigMap", rawMessage{0x0a, 0x02, 0x08, 0x05})
	// A pod whose container has resources {limits {"cpu": "abc"}}, which Quantity
	// cannot parse (the typed Marshal cannot write one).
	podMeta, err := (&metav1.ObjectMeta{Name: "q"}).Marshal()
	require.NoError(t, err)
	limit := pbField(8, pbField(1, slices.Concat(pbField(1, []byte("cpu")), pbField(2, pbField(1, []byte("abc"))))))
	container := slices.Concat(pbField(1, []byte("c")), pbField(2, []byte("i")), limit)
	badQuantity := protoBody(t, "v1", "Pod", rawMessage(slices.Concat(pbField(1, podMeta), pbField(2, pbField(2, container)))))
	tests := []struct {
		name, path string
		body       []byte
		want       string
	}{
		{"no magic", cms, []byte("hello"), "the object provided is unrecognized (must be of type ConfigMap): " +
			"provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"},
		{"trailing bytes", cms, append(cm, 0, 0), "the object provided is unrecognized (must be of type ConfigMap): " +
			"proto: Unknown: illegal tag 0 (wire type 0)"},
		{"wrong wire type", cms, wrongWire, `ConfigMap in version "v1" cannot be handled as a ConfigMap: proto: wrong wireType = 0`},
		{"another kind", cms, protoBody(t, "v1", "Pod", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x"}}),
			`Pod in version "v1" cannot be handled as a ConfigMap: converting (v1.Pod) to (core.ConfigMap): unknown conversion`},
		{"bad quantity", pods, badQuantity, `Pod in version "v1" cannot be handled as a Pod: ` +
			`quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`},
	}
	for _, tc := range tests {
		code, answer := send(t, e, http.MethodPost, tc.path, contentTypeProtobuf, tc.body)
		require.Equal(t, http.StatusBadRequest, code, "%s: %s", tc.name, answer)
		var st struct{ Message, Reason string }
		require.NoError(t, json.Unmarshal(answer, &st), "%s: %s", tc.name, answer)
		require.Equal(t, "BadRequest", st.Reason, tc.name)
		require.Contains(t, st.Message, tc.want, tc.name)
	}
}

// rawMessage is an object message written by hand.
type rawMessage []byte

func (r rawMessage) Marshal() ([]byte, error)     { return r, nil }
func (r rawMessage) GetObjectMeta() metav1.Object { return &metav1.ObjectMeta{} }

// pbField is a length-delimited protobuf field.
func pbField(num int, b []byte) []byte {
	out := appendUvarint(nil, uint64(num)<<3|2)
	out = appendUvarint(out, uint64(len(b)))
	return append(out, b...)
}

func appendUvarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}
