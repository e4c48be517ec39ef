package client

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kwatch/kwatch/internal/pbwire"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

// acceptMeta asks for an object's metadata only, for T
// *metav1.PartialObjectMetadata.
const acceptMeta = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"

// maxObjectBody bounds the answer to a single-object request.
const maxObjectBody = watch.DefaultMaxFrameSize

// Options configure a Client.
type Options struct {
	// FieldManager is the manager name of every write that names none.
	// Empty means DefaultFieldManager().
	FieldManager string
	// Encoding is what bodies and answers are encoded in; see Encoding.
	Encoding Encoding
}

// Encoding chooses the wire encoding of a Client's requests.
type Encoding int

const (
	// Auto follows the kube.Config's Encoding.ContentType: protobuf when T
	// has a generated Marshal and Unmarshal (every k8s.io/api type), as
	// client-go's typed clients do, unless the config asks for JSON. For
	// other types, and for patches and applies, JSON.
	Auto Encoding = iota
	// JSON sends and asks for JSON whatever T can do.
	JSON
	// Protobuf sends protobuf bodies when T has a generated Marshal and asks
	// for protobuf answers when it has a generated Unmarshal, whatever the
	// kube.Config says; JSON for what T cannot encode so.
	Protobuf
)

// Client reads and writes the objects of one API resource as T: a
// typed k8s.io/api object, a slim struct, *metav1.PartialObjectMetadata
// (reads only) or *unstructured.Unstructured. Build it with For; it is
// safe for concurrent use.
type Client[T watch.Object] struct {
	c       *kube.Client
	res     kube.Resource
	manager string
	proto   bool // send protobuf bodies
	accept  string
}

// For returns the Client of the resource and type res pairs (see
// kube.Typed) on c. It does not contact the server.
func For[T watch.Object](c *kube.Client, res kube.TypedResource[T], opts Options) *Client[T] {
	r := &Client[T]{c: c, res: res.Resource(), manager: opts.FieldManager, accept: kube.ContentTypeJSON}
	if r.manager == "" {
		r.manager = DefaultFieldManager()
	}
	var zero T
	if _, ok := any(zero).(*metav1.PartialObjectMetadata); ok {
		r.accept = acceptMeta // metadata-only answers are JSON
		return r
	}
	if opts.Encoding == Protobuf || (opts.Encoding == Auto && c.ContentType() != kube.ContentTypeJSON) {
		// A slim type embedding metav1.ObjectMeta alone has ObjectMeta's
		// Marshal and Unmarshal, which encode the metadata only: JSON.
		_, marshals := any(zero).(ProtobufMarshaler)
		r.proto = marshals && pbwire.HasOwnMethod(reflect.TypeFor[T](), "Marshal")
		if watch.DecodesProtobuf[T]() {
			r.accept = kube.ContentTypeProtobuf + "," + kube.ContentTypeJSON
		}
	}
	return r
}

// ForName resolves name through discovery (c.Resolve: "deploy",
// "deployments.apps", "Deployment", ...) and returns its Client, or an
// error when T is of another kind than the resource found (kube.NewTyped).
func ForName[T watch.Object](ctx context.Context, c *kube.Client, name string, opts Options) (*Client[T], error) {
	res, err := c.Resolve(ctx, name)
	if err != nil {
		return nil, err
	}
	typed, err := kube.NewTyped[T](res)
	if err != nil {
		return nil, err
	}
	return For(c, typed, opts), nil
}

// Resource is the API resource r reads and writes.
func (r *Client[T]) Resource() kube.Resource { return r.res }

// DefaultFieldManager is the field manager of writes that name none: the
// program's name, as the API server would derive it from a User-Agent
// "NAME/version", at most 128 bytes.
func DefaultFieldManager() string {
	name := filepath.Base(os.Args[0])
	name = strings.TrimSuffix(name, ".exe")
	if name == "" || name == "." || name == "/" {
		name = "kwatch"
	}
	if len(name) > 128 {
		name = name[:128]
	}
	return name
}

// call is one request and the object it should answer.
type call struct {
	op         string
	method     string
	ns, name   string
	sub        string
	query      url.Values
	body       []byte
	ctype      string
	repeatable bool
}

// do sends a call and decodes the answer as T.
func (r *Client[T]) do(ctx context.Context, cl call) (T, error) {
	var zero T
	resp, err := r.send(ctx, cl)
	if err != nil {
		r.uncertain(ctx, cl, err)
		return zero, err
	}
	defer resp.Body.Close()
	body, err := readBody(resp)
	if err == nil && len(body) > maxObjectBody {
		err = fmt.Errorf("answer larger than %d bytes", maxObjectBody)
	} else if err != nil {
		err = fmt.Errorf("reading the answer: %w", err)
	}
	var obj T
	if err == nil {
		obj, err = watch.DecodeObjectAliasing[T](r.c, body, resp.Header.Get("Content-Type"))
	}
	if err != nil {
		err = r.opError(cl, err)
		r.uncertain(ctx, cl, err) // done, but with what version is unknown
		return zero, err
	}
	if cl.method != http.MethodGet && cl.query.Get("dryRun") == "" {
		r.c.RecordWrite(ctx, written(r.res, obj, false))
	}
	return obj, nil
}

// uncertain tells the client's WriteRecorder of a write that failed with
// err when the server may have done it all the same (see
// kube.Written.Uncertain): a failure with no answer, or one of
// kube.AnswerOutcomeUnknown. A write a WriteInterceptor refused before
// any attempt of it was sent (kube.IsFenced, no answer) is not told.
func (r *Client[T]) uncertain(ctx context.Context, cl call, err error) {
	if cl.method == http.MethodGet || cl.query.Get("dryRun") != "" {
		return
	}
	se, answered := kube.AsStatus(err)
	if kube.IsFenced(err) && !answered {
		return // refused before it was ever sent
	}
	if answered && !kube.AnswerOutcomeUnknown(cl.method, se) {
		return // the server's answer: not done
	}
	r.c.RecordWrite(ctx, kube.Written{Resource: r.res, Namespace: cl.ns, Name: cl.name,
		Deleted: cl.method == http.MethodDelete, Uncertain: true})
}

// written is what a write's answer obj tells the client's WriteRecorder.
// Its strings and labels are copies: the recorder may keep them while the
// caller changes obj, and obj's strings may point into the whole answer
// (watch.DecodeObjectAliasing), which a copy need not keep in memory.
func written[T watch.Object](res kube.Resource, obj T, deleted bool) kube.Written {
	w := kube.Written{Resource: res, Namespace: strings.Clone(obj.GetNamespace()), Name: strings.Clone(obj.GetName()),
		ResourceVersion: strings.Clone(obj.GetResourceVersion()), Deleted: deleted}
	if u, ok := any(obj).(interface{ GetUID() types.UID }); ok {
		w.UID = strings.Clone(string(u.GetUID()))
	}
	if l, ok := any(obj).(interface{ GetLabels() map[string]string }); ok {
		if lbls := l.GetLabels(); lbls != nil {
			w.Labels = make(map[string]string, len(lbls))
			for k, v := range lbls {
				w.Labels[strings.Clone(k)] = strings.Clone(v)
			}
		}
	}
	return w
}

// send sends a call whose answer the caller reads; non-2xx answers are
// errors.
func (r *Client[T]) send(ctx context.Context, cl call) (*http.Response, error) {
	resp, err := r.c.Send(ctx, kube.Request{Method: cl.method, Path: r.path(cl.ns, cl.name, cl.sub),
		Query: cl.query, Accept: r.accept, ContentType: cl.ctype, Body: cl.body, Repeatable: cl.repeatable})
	if err != nil {
		return nil, r.opError(cl, err)
	}
	return resp, nil
}

// path is the URL path of an object, its subresource, or (name "") the
// collection.
func (r *Client[T]) path(ns, name, sub string) string {
	p := r.res.Path(ns)
	if name == "" {
		return p
	}
	p += "/" + url.PathEscape(name)
	if sub != "" {
		p += "/" + url.PathEscape(sub)
	}
	return p
}

func (r *Client[T]) opError(cl call, err error) error {
	return &kube.OpError{Op: cl.op, Resource: r.res.String(), Namespace: cl.ns, Name: cl.name, Err: err}
}

// readBody reads an answer of at most maxObjectBody+1 bytes, in one
// allocation when the server says its length.
func readBody(resp *http.Response) ([]byte, error) {
	r := io.LimitReader(resp.Body, maxObjectBody+1)
	if n := resp.ContentLength; n > 0 && n <= maxObjectBody {
		buf := bytes.NewBuffer(make([]byte, 0, n+1)) // +1: ReadFrom wants room to see the end
		_, err := buf.ReadFrom(r)
		return buf.Bytes(), err
	}
	return io.ReadAll(r)
}
