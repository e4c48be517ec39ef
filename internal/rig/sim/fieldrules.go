package sim

// The shapes of the built-in kinds' fields that are not plain structs, the one
// table both strategic merge patch (strategic.go) and field ownership
// (fieldschema.go, managedfields.go) read. The real server takes these from the
// Go types' patchStrategy/patchMergeKey tags and from the OpenAPI list-type and
// map-type markers; the simulator knows only what is listed here:
//
//   - a map field not listed is a struct: its keys are fields (for field
//     ownership the struct itself is not owned, only its fields);
//   - a list not listed is atomic: owned as a whole, replaced whole by a
//     strategic merge patch (as the real server does for tolerations, command,
//     args and every other list without a merge key).
//
// Custom resources (anything registered with RegisterResource) have no table:
// strategic merge patch is 415 for them, as on the real server, and their fields
// outside metadata are owned as the real server owns those of a CRD whose schema
// preserves unknown fields (every map key owned on its own, lists atomic).

// shape is how a field's value is merged and owned.
type shape uint8

const (
	shapeStruct shape = iota // a map whose keys are fields (the default for maps)
	shapeMap                 // a map whose keys are data (labels, data, resources.limits)
	shapeAtomic              // a map or list owned and merged as one value
	shapeKeyed               // a list of objects merged by key fields
	shapeSet                 // a list of scalars merged as a set
)

// fieldRule is the rule for one field path.
type fieldRule struct {
	shape shape
	// keys are the fields that identify an item of a shapeKeyed list for field
	// ownership (the OpenAPI list-map keys), in the order the real server lists them.
	keys []string
	// keyDefaults are the values a missing key field takes (a port's protocol is TCP).
	keyDefaults map[string]any
	// mergeKey is the strategic merge patch key of a shapeKeyed list; "" for a
	// list the strategic patch replaces (topologySpreadConstraints has a merge key
	// but two ownership keys; some lists have ownership keys and no merge key).
	mergeKey string
}

// kindRules maps a field path to its rule. Paths are dotted from the object's
// root, "[]" marking a list item: "spec.template.spec.containers[].ports".
type kindRules map[string]fieldRule

func keyed(mergeKey string, keys ...string) fieldRule {
	if len(keys) == 0 {
		keys = []string{mergeKey}
	}
	return fieldRule{shape: shapeKeyed, keys: keys, mergeKey: mergeKey}
}

var (
	ruleMap    = fieldRule{shape: shapeMap}
	ruleAtomic = fieldRule{shape: shapeAtomic}
	ruleSet    = fieldRule{shape: shapeSet}
	// ruleByType is the conditions list of every built-in status.
	ruleByType = keyed("type")
)

// withProtocol is a list keyed by a port and its protocol (TCP when absent).
func withProtocol(port string) fieldRule {
	r := keyed(port, port, "protocol")
	r.keyDefaults = map[string]any{"protocol": "TCP"}
	return r
}

// metaRules are ObjectMeta's, under prefix ("" or "spec.template.").
func metaRules(rules kindRules, prefix string) {
	rules[prefix+"metadata.labels"] = ruleMap
	rules[prefix+"metadata.annotations"] = ruleMap
	rules[prefix+"metadata.finalizers"] = ruleSet
	rules[prefix+"metadata.ownerReferences"] = keyed("uid")
}

// podSpecRules are PodSpec's, under prefix ("spec." or "spec.template.spec.").
func podSpecRules(rules kindRules, prefix string) {
	for _, list := range []string{"containers", "initContainers", "ephemeralContainers"} {
		c := prefix + list
		rules[c] = keyed("name")
		rules[c+"[].ports"] = withProtocol("containerPort")
		rules[c+"[].env"] = keyed("name")
		rules[c+"[].volumeMounts"] = keyed("mountPath")
		rules[c+"[].volumeDevices"] = keyed("devicePath")
		rules[c+"[].resources.limits"] = ruleMap
		rules[c+"[].resources.requests"] = ruleMap
		rules[c+"[].resources.claims"] = keyed("name")
	}
	rules[prefix+"volumes"] = keyed("name")
	rules[prefix+"imagePullSecrets"] = keyed("name")
	rules[prefix+"hostAliases"] = keyed("ip")
	rules[prefix+"schedulingGates"] = keyed("name")
	rules[prefix+"resourceClaims"] = keyed("name")
	rules[prefix+"topologySpreadConstraints"] = keyed("topologyKey", "topologyKey", "whenUnsatisfiable")
	rules[prefix+"nodeSelector"] = ruleMap
	rules[prefix+"overhead"] = ruleMap
	rules[prefix+"resources.limits"] = ruleMap
	rules[prefix+"resources.requests"] = ruleMap
}

// builtinRules are the tables of the built-in kinds, by resource key.
var builtinRules = func() map[string]kindRules {
	all := map[string]kindRules{}
	add := func(key string, fill func(kindRules)) {
		r := kindRules{}
		metaRules(r, "")
		fill(r)
		all[key] = r
	}
	workload := func(r kindRules) {
		metaRules(r, "spec.template.")
		podSpecRules(r, "spec.template.spec.")
		r["spec.selector"] = ruleAtomic // a LabelSelector is owned whole
		r["status.conditions"] = ruleByType
	}
	add("pods", func(r kindRules) {
		podSpecRules(r, "spec.")
		r["status.conditions"] = ruleByType
		r["status.podIPs"] = keyed("ip")
		r["status.hostIPs"] = keyed("ip")
	})
	add("namespaces", func(r kindRules) { r["status.conditions"] = ruleByType })
	add("configmaps", func(r kindRules) { r["data"], r["binaryData"] = ruleMap, ruleMap })
	add("secrets", func(r kindRules) { r["data"], r["stringData"] = ruleMap, ruleMap })
	add("services", func(r kindRules) {
		r["spec.ports"] = withProtocol("port")
		r["spec.selector"] = ruleAtomic
		r["status.conditions"] = ruleByType
	})
	add("nodes", func(r kindRules) {
		r["spec.podCIDRs"] = ruleSet
		r["status.conditions"] = ruleByType
		r["status.capacity"] = ruleMap
		r["status.allocatable"] = ruleMap
	})
	add("deployments.apps", workload)
	add("replicasets.apps", workload)
	add("statefulsets.apps", workload)
	return all
}()

// crRules are the rules of a custom resource: its metadata is ObjectMeta.
var crRules = func() kindRules {
	r := kindRules{}
	metaRules(r, "")
	return r
}()

// rulesFor returns the table of a resource and whether it is a built-in kind.
func rulesFor(r *resource) (kindRules, bool) {
	if rules, ok := builtinRules[r.info.key()]; ok {
		return rules, true
	}
	return crRules, false
}

// childPath is the path of a map member.
func childPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
