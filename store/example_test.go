package store_test

import (
	"errors"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/store"
)

// The informer writes to a Store; readers get its View, which can only read.
func ExampleStore_View() {
	s := store.New(store.Options[*metav1.PartialObjectMetadata]{})
	for _, name := range []string{"web-1", "web-2"} {
		pod := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: name}}
		if _, _, err := s.Upsert(pod, "7"); err != nil {
			fmt.Println(err)
		}
	}
	v := s.View()
	pod, ok := v.Get("demo/web-1")
	fmt.Println(pod.Name, ok)
	inDemo, _ := v.IndexKeys(store.NamespaceIndex, "demo")
	slices.Sort(inDemo)
	fmt.Println(inDemo, v.ResourceVersion())
	// Output:
	// web-1 true
	// [demo/web-1 demo/web-2] 7
}

// An index function that panics refuses the write as its error would: the
// store keeps what it had, and the write's error is a *store.PanicError.
func ExamplePanicError() {
	s := store.New(store.Options[*metav1.PartialObjectMetadata]{
		Indexers: map[string]store.IndexFunc[*metav1.PartialObjectMetadata]{
			"app": func(o *metav1.PartialObjectMetadata) ([]string, error) {
				return []string{o.Labels["app"][:3]}, nil // panics on a short label
			},
		},
	})
	pod := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "web-1",
		Labels: map[string]string{"app": "w"}}}
	_, _, err := s.Upsert(pod, "7")
	if p, ok := errors.AsType[*store.PanicError](err); ok {
		fmt.Println(p.Func, "panicked; stored:", s.Len())
	}
	// Output: index "app" panicked; stored: 0
}
