package watch_test

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kwatch/kwatch/watch"
)

// Pod is a slim type: only what the caller reads is decoded.
type Pod struct {
	metav1.ObjectMeta `json:"metadata"`
	Status            struct {
		Phase string `json:"phase"`
	} `json:"status"`
}

// A watch stream decoded event by event, whatever its chunking; an ERROR
// event ends it with the server's Status.
func ExampleNewDecoder() {
	stream := `{"type":"ADDED","object":{"metadata":{"name":"web","resourceVersion":"5"},"status":{"phase":"Pending"}}}
{"type":"MODIFIED","object":{"metadata":{"name":"web","resourceVersion":"6"},"status":{"phase":"Running"}}}
{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old resource version: 5 (9)","reason":"Expired","code":410}}`
	dec := watch.NewDecoder[*Pod](strings.NewReader(stream), watch.DecoderOptions{})
	defer dec.Close()
	for {
		ev, err := dec.Next()
		if err != nil {
			fmt.Println("stream ended:", err)
			return
		}
		fmt.Println(ev.Type, ev.Object.Name, ev.Object.ResourceVersion, ev.Object.Status.Phase)
	}
	// Output:
	// ADDED web 5 Pending
	// MODIFIED web 6 Running
	// stream ended: server answered 410 Expired: too old resource version: 5 (9)
}

// A list body streamed item by item: the page is never held whole.
func ExampleDecodeList() {
	body := `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"42","continue":"next"},
"items":[{"metadata":{"name":"a"},"status":{"phase":"Running"}},{"metadata":{"name":"b"},"status":{"phase":"Pending"}}]}`
	meta, err := watch.DecodeList(strings.NewReader(body), watch.DefaultMaxFrameSize, func(p *Pod) error {
		fmt.Println(p.Name, p.Status.Phase)
		return nil
	})
	fmt.Println(meta.ResourceVersion, meta.Continue, err)
	// Output:
	// a Running
	// b Pending
	// 42 next <nil>
}

// A Raw keeps an object's bytes and reads only the metadata that keys,
// indexes and selectors need; RawCodec decodes it into a type on demand.
func ExampleRaw() {
	body := []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-1","namespace":"demo",` +
		`"resourceVersion":"42","labels":{"app":"web"}},"spec":{"nodeName":"n1"}}`)
	raw := new(watch.Raw)
	if err := raw.UnmarshalJSON(body); err != nil {
		fmt.Println(err)
		return
	}
	sel := labels.SelectorFromSet(labels.Set{"app": "web"})
	fmt.Println(raw.GetNamespace(), raw.GetName(), raw.GetResourceVersion(), sel.Matches(raw.Labels()))
	meta, err := watch.NewRawCodec[*metav1.PartialObjectMetadata]().Decode(raw)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(meta.Labels["app"])
	// Output:
	// demo web-1 42 true
	// web
}
