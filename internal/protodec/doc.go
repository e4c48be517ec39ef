// Package protodec decodes the API server's protobuf encoding of the types
// of k8s.io/api and k8s.io/apimachinery exactly as their generated
// Unmarshal methods do, from a table built once per type from the types'
// protobuf struct tags, with four differences that take a pod of the
// benchmark harness about 0.65x the time with 0.3x the allocations, its
// strings aliased (BenchmarkPodDecodeRatio in internal/bench/decode):
//
//   - Strings can point into the message rather than be copied (alias):
//     for messages whose bytes never change and stay alive as long as the
//     decoded value needs them (the records of a compact store).
//   - A repeated field or a map is allocated once at the size of its run of
//     entries, where the generated code grows it by appending.
//   - A resource.Quantity whose string was parsed recently is copied from
//     a small table rather than parsed again.
//   - A metav1.Time's Timestamp is read here, as its Unmarshal reads it,
//     rather than through that method.
//
// What it does not follow, it leaves to the type's own Unmarshal:
//
//   - The types whose Unmarshal is written by hand (resource.Quantity and
//     metav1.Time, apart from the two cases above, MicroTime and
//     FieldsV1), named slices and maps that are messages (metav1.Verbs),
//     those of any other module, and every struct
//     with a field it cannot map (an untagged or unexported field, a
//     fixed-width or repeated number) decode with their own Unmarshal, as
//     a whole, wherever they appear.
//   - A message it does not read as the generated code would is an error
//     (a field number past 2^31-1, which that code truncates; a varint
//     with bits past 64; a known field of another wire type; a group; a
//     length past its message; a map entry whose key or value is not
//     bytes, or whose message value is given twice, each of which that
//     code decodes), and the caller decodes it again with the generated code,
//     which decides what such bytes mean. So whenever Decode returns nil,
//     the value equals the generated decoder's, and the tests and fuzz
//     targets check exactly that.
//   - The table is built from the struct tags' field numbers, with wire
//     types that follow the Go types (some tags say bytes of an *int32),
//     and checked against the type's generated Marshal field by field
//     before use; a type that fails the check keeps its own Unmarshal.
//
// Decoding never panics on bad bytes and costs time linear in the message;
// the recursion is bounded by the type's nesting, so a type that can nest
// without bound must not be decoded here (the caller checks).
package protodec
