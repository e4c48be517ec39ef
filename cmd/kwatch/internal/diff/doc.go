// Package diff says what changed between two versions of a Kubernetes
// object: the fields, one Change each, as "kwatch -w --diff" prints them
// ("spec.replicas: 3 → 5"), and the RFC 6902 JSON patch that takes the
// first version to the second, as "-o json --diff" prints it.
//
//   - Objects are compared as decoded JSON (Decode keeps numbers exact):
//     maps key by key, in sorted order, so the output is deterministic.
//   - A list whose elements are all objects with a unique "name" (or
//     "type", "mountPath", "containerPort", "port") is matched by that key,
//     so a container is named by its name, not its place:
//     spec.template.spec.containers[name=web].image. Other lists are
//     compared by position; elements past the shorter end are added or
//     removed.
//   - Fields that change with every write and say nothing on their own
//     (metadata.resourceVersion, metadata.generation, metadata.managedFields,
//     status.observedGeneration: see Noise) are left out unless
//     Options.Noise asks for them.
//   - The JSON patch printed beside a change (internal/jsonpatch's Diff of
//     the two versions Decode returns) does not leave noise out: applying
//     it to the old version gives the new one exactly.
//
// Everything here is a pure function of its arguments, safe for concurrent
// use, and linear in the size of the two objects (keyed lists are matched
// through a map).
package diff
