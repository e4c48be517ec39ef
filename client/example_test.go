package client_test

import (
	"context"
	"fmt"
	"net"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/internal/sim"
	"github.com/kwatch/kwatch/kube"
)

// Secret holds what the example uses of a secret.
type Secret struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	StringData        map[string]string `json:"stringData,omitempty"`
	Data              map[string][]byte `json:"data,omitempty"`
}

// Create an object, update it on a fresh read, and see a stale write
// refused with a typed conflict.
func Example() {
	srv, _ := sim.New(sim.Options{})
	_ = srv.EnsureNamespace("demo")
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go srv.Serve(ctx, ln)

	c, _ := kube.NewClient(&kube.Config{Host: "http://" + ln.Addr().String()})
	secrets := client.For[*Secret](c, kube.Resource{Version: "v1", Resource: "secrets", Kind: "Secret", Namespaced: true},
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
