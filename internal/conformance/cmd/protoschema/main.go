// Command protoschema writes internal/rig/sim/protoschema_gen.go: the table the
// simulated API server reads protobuf request bodies with. The simulator may not
// import k8s.io/api, so this command walks the Go types of every built-in kind it
// serves (by reflection, from their protobuf and json struct tags) and writes, per
// message, each field's number, JSON name, value kind and JSON omission rules.
//
// Run it through go generate in internal/sim; the test next to it fails when the
// checked-in table differs from what this command writes.
//
//	go run ./cmd/protoschema -o ../rig/sim/protoschema_gen.go
package main

import (
	"flag"
	"fmt"
	"os"
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// root is one kind the simulator serves, or may be given with RegisterResource,
// as a built-in.
type root struct {
	apiVersion string
	typ        reflect.Type
}

// roots are the simulator's default resources (internal/rig/sim/resource.go) and
// the other built-in kinds its users register most.
var roots = []root{
	{"v1", reflect.TypeFor[corev1.Pod]()},
	{"v1", reflect.TypeFor[corev1.Namespace]()},
	{"v1", reflect.TypeFor[corev1.ConfigMap]()},
	{"v1", reflect.TypeFor[corev1.Secret]()},
	{"v1", reflect.TypeFor[corev1.Service]()},
	{"v1", reflect.TypeFor[corev1.Node]()},
	{"v1", reflect.TypeFor[corev1.ServiceAccount]()},
	{"v1", reflect.TypeFor[corev1.Event]()},
	{"apps/v1", reflect.TypeFor[appsv1.Deployment]()},
	{"apps/v1", reflect.TypeFor[appsv1.ReplicaSet]()},
	{"coordination.k8s.io/v1", reflect.TypeFor[coordinationv1.Lease]()},
	{"events.k8s.io/v1", reflect.TypeFor[eventsv1.Event]()},
	// DeleteOptions is a body, not a kind served: client-go's typed clients send
	// it in protobuf, under their own group's apiVersion (delete.go reads it).
	{"meta.k8s.io/v1", reflect.TypeFor[metav1.DeleteOptions]()},
}

func main() {
	out := flag.String("o", "", "write the table to this file (default: standard output)")
	flag.Parse()
	src, err := generate(roots)
	if err != nil {
		fmt.Fprintln(os.Stderr, "protoschema:", err)
		os.Exit(1)
	}
	if *out == "" {
		_, err = os.Stdout.Write(src)
	} else {
		err = os.WriteFile(*out, src, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "protoschema:", err)
		os.Exit(1)
	}
}
