package writes

import (
	"context"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/kube"
)

// Row is one client configuration.
type Row struct {
	Name   string
	KWatch bool // kwatch's client; client-go's typed clientset otherwise
	Proto  bool // protobuf bodies and Accept; JSON otherwise
}

// Rows are the four configurations, in the order they run: each kwatch row
// next to the client-go row it is compared with.
var Rows = []Row{
	{Name: "kwatch-json", KWatch: true},
	{Name: "client-go-json"},
	{Name: "kwatch-proto", KWatch: true, Proto: true},
	{Name: "client-go-proto", Proto: true},
}

// Conn is one row's connection to the server: a kube.Client or a
// clientset, built once and shared by every case of the row.
type Conn struct {
	Row Row
	kc  *kube.Client
	cs  *kubernetes.Clientset
}

// Dial builds row's connection to host, without contacting it. wrap, when
// not nil, wraps the HTTP transport (tests record requests with it; the
// benchmarks leave each client's own transport).
func Dial(host string, row Row, wrap func(http.RoundTripper) http.RoundTripper) (*Conn, error) {
	c := &Conn{Row: row}
	if row.KWatch {
		cfg := &kube.Config{Host: host, RateLimit: kube.RateLimitConfig{QPS: -1}}
		if wrap != nil {
			cfg.HTTP.Transport = wrap(http.DefaultTransport.(*http.Transport).Clone())
		}
		kc, err := kube.NewClient(cfg)
		if err != nil {
			return nil, fmt.Errorf("writes: %s: %w", row.Name, err)
		}
		c.kc = kc
		return c, nil
	}
	rc := &rest.Config{Host: host, QPS: -1}
	if !row.Proto {
		// Left empty, the typed clientset sends and asks for protobuf for
		// built-in types.
		rc.ContentType = "application/json"
	}
	if wrap != nil {
		rc.WrapTransport = wrap
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("writes: %s: %w", row.Name, err)
	}
	c.cs = cs
	return c, nil
}

// ops are the five verbs on one type, in namespace Namespace, the same
// for both clients.
type ops[T any] interface {
	create(ctx context.Context, obj T) (T, error)
	get(ctx context.Context, name string) (T, error)
	update(ctx context.Context, obj T) (T, error)
	mergePatch(ctx context.Context, name string, patch []byte) (T, error)
	delete(ctx context.Context, name string) error
}

// kwatchOps are the verbs through kwatch's client.
type kwatchOps[T object] struct{ r *client.Client[T] }

func (k kwatchOps[T]) create(ctx context.Context, obj T) (T, error) {
	return k.r.Create(ctx, obj, client.CreateOptions{})
}

func (k kwatchOps[T]) get(ctx context.Context, name string) (T, error) {
	return k.r.Get(ctx, Namespace, name, client.GetOptions{})
}

func (k kwatchOps[T]) update(ctx context.Context, obj T) (T, error) {
	return k.r.Update(ctx, obj, client.UpdateOptions{})
}

func (k kwatchOps[T]) mergePatch(ctx context.Context, name string, patch []byte) (T, error) {
	return k.r.Patch(ctx, Namespace, name, client.MergePatch, patch, client.PatchOptions{})
}

func (k kwatchOps[T]) delete(ctx context.Context, name string) error {
	return k.r.Delete(ctx, Namespace, name, client.DeleteOptions{})
}

// typedClient is what client-go's typed clients of one type have in
// common (ConfigMapInterface, PodInterface).
type typedClient[T any] interface {
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (T, error)
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
}

// clientGoOps are the verbs through a client-go typed client.
type clientGoOps[T any] struct{ c typedClient[T] }

func (g clientGoOps[T]) create(ctx context.Context, obj T) (T, error) {
	return g.c.Create(ctx, obj, metav1.CreateOptions{})
}

func (g clientGoOps[T]) get(ctx context.Context, name string) (T, error) {
	return g.c.Get(ctx, name, metav1.GetOptions{})
}

func (g clientGoOps[T]) update(ctx context.Context, obj T) (T, error) {
	return g.c.Update(ctx, obj, metav1.UpdateOptions{})
}

func (g clientGoOps[T]) mergePatch(ctx context.Context, name string, patch []byte) (T, error) {
	return g.c.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
}

func (g clientGoOps[T]) delete(ctx context.Context, name string) error {
	return g.c.Delete(ctx, name, metav1.DeleteOptions{})
}

// Kind is one object type the benchmarks write.
type Kind string

// The kinds, in the order they run.
const (
	ConfigMap Kind = "ConfigMap"
	Pod       Kind = "Pod"
)

// Kinds are every kind.
var Kinds = []Kind{ConfigMap, Pod}

// NewCase is verb on kind through row's connection. Setup and Teardown
// go through admin's (a kwatch-json connection of its own), so that only
// the timed requests depend on the row.
func NewCase(row, admin *Conn, verb Verb, kind Kind) (Case, error) {
	switch kind {
	case ConfigMap:
		return newCase(verb, row.Row, newConfigMap, configMapOps(row), configMapOps(admin)), nil
	case Pod:
		return newCase(verb, row.Row, newPod, podOps(row), podOps(admin)), nil
	}
	return nil, fmt.Errorf("writes: unknown kind %q", kind)
}

func configMapOps(c *Conn) ops[*corev1.ConfigMap] {
	if c.Row.KWatch {
		return kwatchOps[*corev1.ConfigMap]{client.For(c.kc, kube.Typed[*corev1.ConfigMap](kube.ConfigMaps), client.Options{Encoding: kwatchEncoding(c.Row.Proto)})}
	}
	return clientGoOps[*corev1.ConfigMap]{c.cs.CoreV1().ConfigMaps(Namespace)}
}

func podOps(c *Conn) ops[*corev1.Pod] {
	if c.Row.KWatch {
		return kwatchOps[*corev1.Pod]{client.For(c.kc, kube.Typed[*corev1.Pod](kube.Pods), client.Options{Encoding: kwatchEncoding(c.Row.Proto)})}
	}
	return clientGoOps[*corev1.Pod]{c.cs.CoreV1().Pods(Namespace)}
}

// kwatchEncoding is the client encoding of a kwatch row.
func kwatchEncoding(proto bool) client.Encoding {
	if proto {
		return client.Protobuf
	}
	return client.JSON
}
