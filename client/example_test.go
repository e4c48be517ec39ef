package client_test

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/kwatchtest"
)

// Secret holds what the example uses of a secret.
type Secret struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	StringData        map[string]string `json:"stringData,omitempty"`
	Data              map[string][]byte `json:"data,omitempty"`
}

// Create an object, update it on a fresh read, and see a stale write
// refused with a typed conflict. The server is kwatchtest's simulator,
// served in the process.
func Example() {
	ctx := context.Background()
	srv, err := kwatchtest.Serve(ctx, kwatchtest.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	c := srv.Client()
	secrets := client.For(c, kube.Typed[*Secret](kube.Resource{Version: "v1", Resource: "secrets", Kind: "Secret", Namespaced: true}),
		client.Options{FieldManager: "example"})

	s, err := secrets.Create(ctx, &Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "db"},
		StringData: map[string]string{"password": "hunter2"}}, client.CreateOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("created", s.Name, "with", len(s.Data), "key")

	s2, err := secrets.Modify(ctx, "demo", "db", func(s *Secret) error {
		s.Data["user"] = []byte("admin")
		return nil
	}, client.UpdateOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("updated to", len(s2.Data), "keys")

	s.Data["user"] = []byte("root") // s still has the first resourceVersion
	_, err = secrets.Update(ctx, s, client.UpdateOptions{})
	fmt.Println("stale update is a conflict:", kube.IsConflict(err))
	// Output:
	// created db with 1 key
	// updated to 2 keys
	// stale update is a conflict: true
}
