package sim

import (
	"hash/fnv"
	"maps"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Pod describes a pod that the simulator renders as a realistic core/v1 Pod of about
// 3-4 KB of JSON: labels, annotations, a ReplicaSet owner, managedFields, two
// containers with env, ports and resources, tolerations, and a status with conditions
// and container statuses. The zero value of each field has a documented default.
type Pod struct {
	Namespace string // required
	Name      string // required
	// Labels; nil means {"app": <App>, "pod-template-hash": <hash of Owner>}.
	Labels map[string]string
	// Annotations; nil means a small deterministic set.
	Annotations map[string]string
	// App names the workload (labels, image, container name). Empty means "app".
	App string
	// Owner is the owning ReplicaSet's name. Empty means Name without its last
	// "-suffix" (or "<Name>-rs" if it has none).
	Owner string
	// NodeName schedules the pod; empty means unscheduled.
	NodeName string
	// Phase is status.phase. Empty means "Running" when NodeName is set, else "Pending".
	Phase string
	// PodIP is status.podIP. Empty means an address derived from the name when scheduled.
	PodIP string
	// Ready marks every container ready (when Running).
	Ready bool
	// Restarts is the app container's restartCount.
	Restarts int32
	// Image is the app container's image. Empty means "registry.local/<App>:1.4.2".
	Image string
}

// podSummary is what the pods Table shows; extracted once per write.
type podSummary struct {
	containers, ready int
	restarts          int64
	status            string
	podIP, node       string
	nominated         string
	gates, gatesReady int
}

func (p *Pod) defaults() Pod {
	q := *p
	if q.App == "" {
		q.App = "app"
	}
	if q.Owner == "" {
		if i := strings.LastIndexByte(q.Name, '-'); i > 0 {
			q.Owner = q.Name[:i]
		} else {
			q.Owner = q.Name + "-rs"
		}
	}
	if q.Phase == "" {
		q.Phase = "Pending"
		if q.NodeName != "" {
			q.Phase = "Running"
		}
	}
	h := fnv.New32a()
	h.Write([]byte(q.Namespace + "/" + q.Name))
	sum := h.Sum32()
	if q.PodIP == "" && q.NodeName != "" {
		q.PodIP = "10." + strconv.Itoa(int(sum>>16&0xff)) + "." + strconv.Itoa(int(sum>>8&0xff)) + "." + strconv.Itoa(int(sum&0xff)|1)
	}
	// The stored object keeps these maps: copy them so callers may reuse theirs.
	q.Labels, q.Annotations = maps.Clone(q.Labels), maps.Clone(q.Annotations)
	if q.Labels == nil {
		q.Labels = map[string]string{"app": q.App, "pod-template-hash": hashString(q.Owner, 10)}
	}
	if q.Annotations == nil {
		q.Annotations = map[string]string{
			"kubectl.kubernetes.io/restartedAt": "2026-11-30T12:00:00Z",
			"prometheus.io/scrape":              "true",
			"prometheus.io/port":                "9090",
		}
	}
	if q.Image == "" {
		q.Image = "registry.local/" + q.App + ":1.4.2"
	}
	return q
}

// hashString returns n lower-case alphanumerics derived from s (like pod-template-hash).
func hashString(s string, n int) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	h := fnv.New64a()
	h.Write([]byte(s))
	v := h.Sum64()
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[v%uint64(len(alphabet))]
		v = v/uint64(len(alphabet)) + uint64(i)*0x9e37
	}
	return string(b)
}

// fakeUID derives a stable uid from a name, for owner references.
func fakeUID(s string) string {
	h := fnv.New128a()
	h.Write([]byte(s))
	b := h.Sum(nil)
	const hex = "0123456789abcdef"
	out := make([]byte, 0, 36)
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out = append(out, '-')
		}
		out = append(out, hex[c>>4], hex[c&0xf])
	}
	return string(out)
}

func appendStringMap(b []byte, m map[string]string) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendQuoted(b, k)
		b = append(b, ':')
		b = appendQuoted(b, m[k])
	}
	return append(b, '}')
}

// encodePod renders p (already defaulted) with the server-owned metadata.
func encodePod(p *Pod, uid string, created time.Time, generation int64) encoded {
	var e encoded
	ts := formatTime(created)
	b := make([]byte, 0, 4096)
	b = append(b, `{"kind":"Pod","apiVersion":"v1","metadata":`...)
	e.metaOff = len(b)
	b = append(b, `{"name":`...)
	b = appendQuoted(b, p.Name)
	b = append(b, `,"generateName":`...)
	b = appendQuoted(b, p.Owner+"-")
	b = append(b, `,"namespace":`...)
	b = appendQuoted(b, p.Namespace)
	b = append(b, `,"uid":`...)
	b = appendQuoted(b, uid)
	b = append(b, `,"resourceVersion":"`...)
	e.rvAt = len(b)
	b = append(b, `","generation":`...)
	b = strconv.AppendInt(b, generation, 10)
	b = append(b, `,"creationTimestamp":"`...)
	b = append(b, ts...)
	b = append(b, `","labels":`...)
	b = appendStringMap(b, p.Labels)
	b = append(b, `,"annotations":`...)
	b = appendStringMap(b, p.Annotations)
	b = append(b, `,"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":`...)
	b = appendQuoted(b, p.Owner)
	b = append(b, `,"uid":"`...)
	b = append(b, fakeUID(p.Namespace+"/"+p.Owner)...)
	b = append(b, `","controller":true,"blockOwnerDeletion":true}],"managedFields":[{"manager":"kube-controller-manager","operation":"Update","apiVersion":"v1","time":"`...)
	b = append(b, ts...)
	b = append(b, `","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:generateName":{},"f:labels":{".":{},"f:app":{},"f:pod-template-hash":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"owner\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:env":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:ports":{},"f:resources":{}},"k:{\"name\":\"sidecar\"}":{".":{},"f:args":{},"f:image":{},"f:name":{}}},"f:dnsPolicy":{},"f:restartPolicy":{},"f:schedulerName":{},"f:terminationGracePeriodSeconds":{}}}},{"manager":"kubelet","operation":"Update","apiVersion":"v1","time":"`...)
	b = append(b, ts...)
	b = append(b, `","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:conditions":{},"f:containerStatuses":{},"f:hostIP":{},"f:phase":{},"f:podIP":{},"f:podIPs":{},"f:startTime":{}}},"subresource":"status"}]}`...)
	e.metaEnd = len(b)
	b = appendPodSpec(b, p)
	b = appendPodStatus(b, p, ts)
	e.buf = append(b, '}')
	return e
}

func appendPodSpec(b []byte, p *Pod) []byte {
	vol := "kube-api-access-" + hashString(p.Name, 5)
	b = append(b, `,"spec":{"volumes":[{"name":"`...)
	b = append(b, vol...)
	b = append(b, `","projected":{"sources":[{"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}},{"configMap":{"name":"kube-root-ca.crt","items":[{"key":"ca.crt","path":"ca.crt"}]}},{"downwardAPI":{"items":[{"path":"namespace","fieldRef":{"apiVersion":"v1","fieldPath":"metadata.namespace"}}]}}],"defaultMode":420}}],"containers":[{"name":`...)
	b = appendQuoted(b, p.App)
	b = append(b, `,"image":`...)
	b = appendQuoted(b, p.Image)
	b = append(b, `,"ports":[{"name":"http","containerPort":8080,"protocol":"TCP"},{"name":"metrics","containerPort":9090,"protocol":"TCP"}],"env":[{"name":"MODE","value":"prod"},{"name":"APP_NAME","value":`...)
	b = appendQuoted(b, p.App)
	b = append(b, `},{"name":"POD_IP","valueFrom":{"fieldRef":{"apiVersion":"v1","fieldPath":"status.podIP"}}}],"resources":{"limits":{"memory":"256Mi"},"requests":{"cpu":"100m","memory":"128Mi"}},"volumeMounts":[{"name":"`...)
	b = append(b, vol...)
	b = append(b, `","readOnly":true,"mountPath":"/var/run/secrets/kubernetes.io/serviceaccount"}],"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent"},{"name":"sidecar","image":"registry.local/proxy:2.0","args":["--port=9091"],"resources":{"requests":{"cpu":"10m","memory":"32Mi"}},"volumeMounts":[{"name":"`...)
	b = append(b, vol...)
	b = append(b, `","readOnly":true,"mountPath":"/var/run/secrets/kubernetes.io/serviceaccount"}],"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent"}],"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","serviceAccountName":"default","serviceAccount":"default",`...)
	if p.NodeName != "" {
		b = append(b, `"nodeName":`...)
		b = appendQuoted(b, p.NodeName)
		b = append(b, ',')
	}
	return append(b, `"securityContext":{},"schedulerName":"default-scheduler","tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300},{"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}],"priority":0,"enableServiceLinks":true,"preemptionPolicy":"PreemptLowerPriority"}`...)
}

func appendPodStatus(b []byte, p *Pod, ts string) []byte {
	b = append(b, `,"status":{"phase":`...)
	b = appendQuoted(b, p.Phase)
	if p.NodeName == "" {
		return append(b, `,"qosClass":"Burstable"}`...)
	}
	ready := "False"
	if p.Ready && p.Phase == "Running" {
		ready = "True"
	}
	cond := func(t, s string) {
		b = append(b, `{"type":"`...)
		b = append(b, t...)
		b = append(b, `","status":"`...)
		b = append(b, s...)
		b = append(b, `","lastProbeTime":null,"lastTransitionTime":"`...)
		b = append(b, ts...)
		b = append(b, `"}`...)
	}
	b = append(b, `,"conditions":[`...)
	cond("PodReadyToStartContainers", "True")
	b = append(b, ',')
	cond("Initialized", "True")
	b = append(b, ',')
	cond("Ready", ready)
	b = append(b, ',')
	cond("ContainersReady", ready)
	b = append(b, ',')
	cond("PodScheduled", "True")
	b = append(b, `],"hostIP":"192.168.0.`...)
	b = strconv.AppendUint(b, uint64(len(p.NodeName)*7%250+2), 10)
	b = append(b, `","podIP":`...)
	b = appendQuoted(b, p.PodIP)
	b = append(b, `,"podIPs":[{"ip":`...)
	b = appendQuoted(b, p.PodIP)
	b = append(b, `}],"startTime":"`...)
	b = append(b, ts...)
	b = append(b, `","containerStatuses":[`...)
	b = appendContainerStatus(b, p.App, p.Image, p, ts)
	b = append(b, ',')
	b = appendContainerStatus(b, "sidecar", "registry.local/proxy:2.0", p, ts)
	return append(b, `],"qosClass":"Burstable"}`...)
}

func appendContainerStatus(b []byte, name, image string, p *Pod, ts string) []byte {
	running := p.Phase == "Running"
	b = append(b, `{"name":`...)
	b = appendQuoted(b, name)
	if running {
		b = append(b, `,"state":{"running":{"startedAt":"`...)
		b = append(b, ts...)
		b = append(b, `"}}`...)
	} else {
		b = append(b, `,"state":{"waiting":{"reason":"ContainerCreating"}}`...)
	}
	b = append(b, `,"lastState":{},"ready":`...)
	b = strconv.AppendBool(b, running && p.Ready)
	b = append(b, `,"restartCount":`...)
	if name == p.App {
		b = strconv.AppendInt(b, int64(p.Restarts), 10)
	} else {
		b = append(b, '0')
	}
	b = append(b, `,"image":`...)
	b = appendQuoted(b, image)
	b = append(b, `,"imageID":"`...)
	b = append(b, image...)
	b = append(b, `@sha256:`...)
	b = append(b, hashString(image, 16)...)
	b = append(b, `","containerID":"containerd://`...)
	b = append(b, hashString(p.Namespace+p.Name+name, 24)...)
	b = append(b, `","started":`...)
	b = strconv.AppendBool(b, running)
	return append(b, '}')
}

// podFields and podSummaryOf give the selector fields and Table cells of a generated pod.
func podFields(p *Pod) map[string]string {
	return map[string]string{
		"metadata.name": p.Name, "metadata.namespace": p.Namespace,
		"spec.nodeName": p.NodeName, "spec.restartPolicy": "Always",
		"spec.schedulerName": "default-scheduler", "spec.serviceAccountName": "default",
		"spec.hostNetwork": "false", "status.phase": p.Phase, "status.podIP": p.PodIP,
		"status.nominatedNodeName": "",
	}
}

func podSummaryOf(p *Pod) *podSummary {
	s := &podSummary{containers: 2, restarts: int64(p.Restarts), status: p.Phase, podIP: p.PodIP, node: p.NodeName}
	if p.Ready && p.Phase == "Running" {
		s.ready = 2
	}
	if p.Phase == "Pending" && p.NodeName != "" {
		s.status = "ContainerCreating"
	}
	return s
}

// podSummaryFromMap extracts the Table cells of a pod sent by a client.
func podSummaryFromMap(m map[string]any) *podSummary {
	s := &podSummary{status: lookupPath(m, "status.phase"), podIP: lookupPath(m, "status.podIP"),
		node: lookupPath(m, "spec.nodeName"), nominated: lookupPath(m, "status.nominatedNodeName")}
	spec, _ := m["spec"].(map[string]any)
	cs, _ := spec["containers"].([]any)
	s.containers = len(cs)
	gates, _ := spec["readinessGates"].([]any)
	s.gates = len(gates)
	status, _ := m["status"].(map[string]any)
	statuses, _ := status["containerStatuses"].([]any)
	for _, c := range statuses {
		cm, _ := c.(map[string]any)
		if r, _ := cm["ready"].(bool); r {
			s.ready++
		}
		if n, err := strconv.ParseInt(lookupPath(cm, "restartCount"), 10, 64); err == nil {
			s.restarts += n
		}
	}
	if reason := lookupPath(m, "status.reason"); reason != "" {
		s.status = reason
	}
	if md, _ := m["metadata"].(map[string]any); md["deletionTimestamp"] != nil {
		s.status = "Terminating"
	}
	return s
}
