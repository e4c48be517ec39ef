// Package decode checks kwatch's table-driven protobuf decoder
// (internal/protodec) against the generated Unmarshal of k8s.io/api's
// types, which the library module cannot import: differential tests over
// the harness's pods and randomly filled objects of many kinds, fuzz
// targets over their bytes, and benchmarks of both decoders side by side.
package decode
