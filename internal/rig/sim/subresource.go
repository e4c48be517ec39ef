package sim

import "net/http"

// The status subresource. For a resource with ResourceInfo.StatusSubresource, as
// on the real server:
//
//   - a create discards the status the client sent and sets the kind's initial
//     status (a pod's {phase: Pending, qosClass}, a namespace's {phase: Active});
//   - a PUT or PATCH of the object keeps the stored status whatever the body says;
//   - a PUT or PATCH of <object>/status changes only the status.
//
// The in-process Update and Patch, PutPod, LoadPods and Churn write whole objects:
// they stand for controllers, the scheduler and the kubelet, which write both.

// writePart says which part of an object a write may change.
type writePart uint8

const (
	// partWhole: everything, status included (the in-process writes).
	partWhole writePart = iota
	// partMain: a client's write of the object: the stored status stays.
	partMain
	// partStatus: a client's write of the status subresource: only status changes.
	partStatus
)

// prepareCreate replaces the status a client sent with the initial status of the
// kind, as the real server's create strategies do.
func prepareCreate(r *resource, name string, m map[string]any) *StatusError {
	if !r.info.StatusSubresource {
		return nil
	}
	switch r.info.key() {
	case "pods":
		return preparePodCreate(name, m)
	case "nodes": // the kubelet registers its node with a status
	case "namespaces":
		return prepareNamespaceCreate(m)
	case "services":
		m["status"] = map[string]any{"loadBalancer": map[string]any{}}
	case "replicasets.apps":
		m["status"] = map[string]any{"replicas": 0}
	case "statefulsets.apps":
		m["status"] = map[string]any{"replicas": 0, "availableReplicas": 0}
	case "deployments.apps":
		m["status"] = map[string]any{}
	default: // like a custom resource with a status subresource
		delete(m, "status")
	}
	return nil
}

// prepareNamespaceCreate makes a namespace Active with the "kubernetes" finalizer.
func prepareNamespaceCreate(m map[string]any) *StatusError {
	spec, ok := m["spec"].(map[string]any)
	if !ok && m["spec"] != nil {
		return errBadRequest(`Namespace in version "v1" cannot be handled as a Namespace: spec: must be an object`)
	}
	if spec == nil {
		spec = map[string]any{}
	}
	fin, ok := spec["finalizers"].([]any)
	if !ok && spec["finalizers"] != nil {
		return errBadRequest(`Namespace in version "v1" cannot be handled as a Namespace: spec.finalizers: must be a list of strings`)
	}
	has := false
	for _, f := range fin {
		has = has || f == "kubernetes"
	}
	if !has {
		spec["finalizers"] = append(fin, "kubernetes")
	}
	m["spec"] = spec
	m["status"] = map[string]any{"phase": "Active"}
	return nil
}

// applyPart restricts a write to the part it may change, given the stored object:
// it returns the object to store.
func applyPart(r *resource, part writePart, m map[string]any, cur *object) (map[string]any, *StatusError) {
	if part == partWhole || !r.info.StatusSubresource || cur == nil {
		return m, nil
	}
	var old map[string]any
	if err := json.Unmarshal(cur.raw, &old); err != nil {
		return nil, newStatus(http.StatusInternalServerError, "InternalError", "stored object does not decode: "+err.Error(), nil)
	}
	if part == partMain {
		copyField(m, old, "status")
		return m, nil
	}
	oldQOS := ""
	if st, ok := old["status"].(map[string]any); ok {
		oldQOS, _ = st["qosClass"].(string)
	}
	copyField(old, m, "status")
	if r.info.key() == "pods" && oldQOS != "" {
		// The QoS class is set at creation and immutable; a status without one keeps it.
		st, ok := old["status"].(map[string]any)
		if !ok {
			st = map[string]any{}
			old["status"] = st
		}
		if q, _ := st["qosClass"].(string); q == "" {
			st["qosClass"] = oldQOS
		}
	}
	return old, nil
}

// copyField sets dst[key] to src[key], deleting it from dst when src has none.
func copyField(dst, src map[string]any, key string) {
	if v, ok := src[key]; ok {
		dst[key] = v
	} else {
		delete(dst, key)
	}
}
