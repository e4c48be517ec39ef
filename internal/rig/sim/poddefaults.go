package sim

import "strings"

// Pod spec defaults the real server fills in on create (API defaulting plus the
// Priority and DefaultTolerationSeconds admission plugins, which are on by
// default), so that a pod created over HTTP reads back, and matches field
// selectors such as spec.restartPolicy=Always, as it would there. The service
// account volume is not added: that depends on the ServiceAccount admission
// plugin and a service account existing.

// podSpecDefaults are set when absent.
var podSpecDefaults = map[string]any{
	"restartPolicy":                 "Always",
	"terminationGracePeriodSeconds": 30,
	"dnsPolicy":                     "ClusterFirst",
	"schedulerName":                 "default-scheduler",
	"enableServiceLinks":            true,
	"priority":                      0,
	"preemptionPolicy":              "PreemptLowerPriority",
}

// defaultTolerations are the NoExecute tolerations DefaultTolerationSeconds adds
// unless the pod already tolerates the taint.
var defaultTolerations = []string{"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"}

// defaultPodSpec fills in spec defaults; members of an unexpected type are left as
// they are (the QoS computation reports the ones it needs).
func defaultPodSpec(spec map[string]any) {
	for k, v := range podSpecDefaults {
		setDefault(spec, k, v)
	}
	setDefault(spec, "securityContext", map[string]any{})
	tols, ok := spec["tolerations"].([]any)
	if !ok && spec["tolerations"] != nil {
		return
	}
	for _, key := range defaultTolerations {
		if !tolerates(tols, key) {
			tols = append(tols, map[string]any{"key": key, "operator": "Exists", "effect": "NoExecute",
				"tolerationSeconds": 300})
		}
	}
	spec["tolerations"] = tols
	for _, field := range []string{"initContainers", "containers"} {
		list, _ := spec[field].([]any)
		for _, c := range list {
			if cm, ok := c.(map[string]any); ok {
				defaultContainer(cm)
			}
		}
	}
}

// tolerates reports whether a toleration covers the NoExecute taint key.
func tolerates(tols []any, key string) bool {
	for _, t := range tols {
		tm, _ := t.(map[string]any)
		k, _ := tm["key"].(string)
		op, _ := tm["operator"].(string)
		effect, _ := tm["effect"].(string)
		if (k == key || (k == "" && op == "Exists")) && (effect == "" || effect == "NoExecute") {
			return true
		}
	}
	return false
}

// defaultContainer fills in a container's defaults.
func defaultContainer(c map[string]any) {
	setDefault(c, "terminationMessagePath", "/dev/termination-log")
	setDefault(c, "terminationMessagePolicy", "File")
	setDefault(c, "resources", map[string]any{})
	if img, ok := c["image"].(string); ok {
		setDefault(c, "imagePullPolicy", pullPolicy(img))
	}
	ports, _ := c["ports"].([]any)
	for _, p := range ports {
		if pm, ok := p.(map[string]any); ok {
			setDefault(pm, "protocol", "TCP")
		}
	}
	env, _ := c["env"].([]any)
	for _, e := range env {
		em, _ := e.(map[string]any)
		from, _ := em["valueFrom"].(map[string]any)
		if ref, ok := from["fieldRef"].(map[string]any); ok {
			setDefault(ref, "apiVersion", "v1")
		}
	}
}

// pullPolicy is Always for an image without a tag or tagged latest, else
// IfNotPresent (a digest counts as pinned).
func pullPolicy(image string) string {
	if strings.Contains(image, "@") {
		return "IfNotPresent"
	}
	name := image[strings.LastIndexByte(image, '/')+1:]
	i := strings.LastIndexByte(name, ':')
	if i < 0 || name[i+1:] == "latest" {
		return "Always"
	}
	return "IfNotPresent"
}

func setDefault(m map[string]any, key string, v any) {
	if _, ok := m[key]; !ok {
		m[key] = v
	}
}
