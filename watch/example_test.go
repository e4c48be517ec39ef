package watch_test

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
