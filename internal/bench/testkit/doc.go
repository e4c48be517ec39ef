// Package testkit shows that other clients work against kwatch's public test
// kit (package kwatchtest): a client-go informer and a controller-runtime
// manager run against it in its tests, through the kubeconfig it writes, with
// a watch cut mid-stream. Its start-up comparison with real kube-apiserver and
// etcd binaries lives in the conformance module (cmd/testkit-startup), which
// builds those binaries.
package testkit
