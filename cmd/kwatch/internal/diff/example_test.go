package diff_test

import (
	"fmt"

	"github.com/kwatch/kwatch/cmd/kwatch/internal/diff"
)

func ExampleCompare() {
	old, _ := diff.Decode([]byte(`{"metadata":{"resourceVersion":"7","labels":{}},
		"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.27"}]}}}}`))
	new, _ := diff.Decode([]byte(`{"metadata":{"resourceVersion":"8","labels":{"app":"web"}},
		"spec":{"replicas":5,"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.28"}]}}}}`))
	for _, c := range diff.Compare(old, new, diff.Options{}) {
		fmt.Println(c)
	}
	// Output:
	// metadata.labels.app: (added) web
	// spec.replicas: 3 → 5
	// spec.template.spec.containers[name=web].image: nginx:1.27 → nginx:1.28
}
