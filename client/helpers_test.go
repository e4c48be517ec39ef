package client_test

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/kwatchtest"
)

// ConfigMap holds what these tests read of a configmap.
type ConfigMap struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Data              map[string]string `json:"data,omitempty"`
}

// Deployment holds what these tests read of a deployment.
type Deployment struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Replicas *int32 `json:"replicas,omitempty"`
		Selector *struct {
			MatchLabels map[string]string `json:"matchLabels,omitempty"`
		} `json:"selector,omitempty"`
		Template struct {
			Metadata struct {
				Labels map[string]string `json:"labels,omitempty"`
			} `json:"metadata"`
			Spec struct {
				Containers []struct {
					Name  string `json:"name"`
					Image string `json:"image"`
				} `json:"containers"`
			} `json:"spec"`
		} `json:"template"`
	} `json:"spec"`
	Status struct {
		Replicas           int32 `json:"replicas,omitempty"`
		ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	} `json:"status"`
}

var (
	configMaps  = kube.Resource{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true}
	namespaces  = kube.Resource{Version: "v1", Resource: "namespaces", Kind: "Namespace"}
	deployments = kube.Resource{Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Namespaced: true}
)

// startSim serves a simulator with namespace demo and returns a client
// for it.
func startSim(t *testing.T) (*kwatchtest.Server, *kube.Client) {
	t.Helper()
	srv := kwatchtest.Start(t, kwatchtest.Options{})
	srv.MustApply(`{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "demo"}}`)
	c, err := kube.NewClient(srv.Config())
	require.NoError(t, err)
	return srv, c
}

func cm(name string, data map[string]string) *ConfigMap {
	return &ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name}, Data: data}
}

func deployment(name string, replicas int32) *Deployment {
	d := &Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name}}
	d.Spec.Replicas = &replicas
	d.Spec.Selector = &struct {
		MatchLabels map[string]string `json:"matchLabels,omitempty"`
	}{MatchLabels: map[string]string{"app": name}}
	d.Spec.Template.Metadata.Labels = map[string]string{"app": name}
	d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers, struct {
		Name  string `json:"name"`
		Image string `json:"image"`
	}{Name: "main", Image: "nginx:1.27"})
	return d
}

// canned is a transport that answers from a script and records requests.
type canned struct {
	mu      sync.Mutex
	answers []cannedAnswer
	seen    []*http.Request
	bodies  []string
}

type cannedAnswer struct {
	code   int
	header http.Header
	body   string
}

func (c *canned) RoundTrip(req *http.Request) (*http.Response, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var body string
	if req.Body != nil {
		b, _ := io.ReadAll(req.Body)
		body = string(b)
	}
	c.seen = append(c.seen, req)
	c.bodies = append(c.bodies, body)
	a := cannedAnswer{code: 500, body: `{"kind":"Status","code":500,"message":"script ended"}`}
	if len(c.answers) > 0 {
		a, c.answers = c.answers[0], c.answers[1:]
	}
	h := a.header.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Set("Content-Type", "application/json")
	return &http.Response{StatusCode: a.code, Header: h, Body: io.NopCloser(strings.NewReader(a.body)), Request: req}, nil
}

func (c *canned) requests() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.seen)
}

func cannedClient(t *testing.T, cfg kube.Config, answers ...cannedAnswer) (*kube.Client, *canned) {
	t.Helper()
	tr := &canned{answers: answers}
	cfg.Host = "http://127.0.0.1:1"
	cfg.HTTP.Transport = tr
	c, err := kube.NewClient(&cfg)
	require.NoError(t, err)
	return c, tr
}

func status(code int, reason, msg string) string {
	return `{"kind":"Status","apiVersion":"v1","status":"Failure","code":` + strconv.Itoa(code) + `,"reason":"` + reason + `","message":"` + msg + `"}`
}

var bg = context.Background()
