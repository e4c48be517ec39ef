package main

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

type populatedCase struct {
	apiVersion, kind, name string
	obj                    protoObject
}

func ptr[T any](v T) *T { return &v }

var (
	t0   = metav1.Unix(1764590691, 0)
	t1   = metav1.Unix(1764590700, 0)
	mt0  = metav1.NewMicroTime(time.Unix(1764590691, 123456789))
	zero = metav1.Time{}
)

// meta has every ObjectMeta field a client may send.
func meta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name: name, GenerateName: "gen-", Namespace: "demo", UID: "0b5e1c2d-uid", ResourceVersion: "42",
		Generation: 3, CreationTimestamp: t0, DeletionTimestamp: &t1, DeletionGracePeriodSeconds: ptr(int64(0)),
		Labels:      map[string]string{"app": "web", "tier": "<front&end>", "empty": ""},
		Annotations: map[string]string{"note": "line\nbreak \"quoted\" \u2028 é"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1",
			UID: "rs-uid", Controller: ptr(true), BlockOwnerDeletion: ptr(false)}},
		Finalizers: []string{"example.com/keep"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl-create", Operation: metav1.ManagedFieldsOperationUpdate,
			APIVersion: "v1", Time: &t0, FieldsType: "FieldsV1",
			FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{".":{},"f:app":{}}}}`)}}},
	}
}

func container(name string) corev1.Container {
	return corev1.Container{
		Name: name, Image: "nginx:1.29", Command: []string{"nginx"}, Args: []string{"-g", "daemon off;"},
		WorkingDir: "/srv",
		Ports:      []corev1.ContainerPort{{Name: "http", ContainerPort: 80, Protocol: corev1.ProtocolTCP, HostPort: 0}},
		Env: []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "POD", ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
			{Name: "LIMIT", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{
				Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}}}},
		Resources: corev1.ResourceRequirements{
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m"), corev1.ResourceMemory: resource.MustParse("512Mi")},
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), "example.com/gpu": resource.MustParse("1")},
		},
		VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data", ReadOnly: true}},
		LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Path: "/healthz", Port: intstr.FromString("http"), HTTPHeaders: []corev1.HTTPHeader{{Name: "X", Value: "y"}}}},
			InitialDelaySeconds: 5, PeriodSeconds: 10, TerminationGracePeriodSeconds: ptr(int64(-1))},
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}}},
		Lifecycle:      &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sleep", "5"}}}},
		SecurityContext: &corev1.SecurityContext{RunAsUser: ptr(int64(1000)), RunAsNonRoot: ptr(true),
			AllowPrivilegeEscalation: ptr(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
		ImagePullPolicy: corev1.PullIfNotPresent, Stdin: true, TTY: false,
	}
}

func podSpec() corev1.PodSpec {
	return corev1.PodSpec{
		InitContainers: []corev1.Container{container("init")},
		Containers:     []corev1.Container{container("web"), {Name: "bare", Image: "busybox"}},
		Volumes: []corev1.Volume{
			{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
				Medium: corev1.StorageMediumMemory, SizeLimit: ptr(resource.MustParse("1Gi"))}}},
			{Name: "secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
				SecretName: "s", DefaultMode: ptr(int32(0o644)), Items: []corev1.KeyToPath{{Key: "a", Path: "a.txt", Mode: ptr(int32(0o400))}}}}},
			{Name: "cm", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}, Optional: ptr(true)}}},
		},
		RestartPolicy: corev1.RestartPolicyAlways, TerminationGracePeriodSeconds: ptr(int64(30)),
		ActiveDeadlineSeconds: ptr(int64(0)), DNSPolicy: corev1.DNSClusterFirst,
		NodeSelector: map[string]string{"kubernetes.io/os": "linux"}, ServiceAccountName: "robot",
		AutomountServiceAccountToken: ptr(false), HostNetwork: true,
		SecurityContext:  &corev1.PodSecurityContext{FSGroup: ptr(int64(2000)), Sysctls: []corev1.Sysctl{{Name: "net.core.somaxconn", Value: "1024"}}},
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "regcred"}},
		Affinity: &corev1.Affinity{
			NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
					{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a", "b"}}}}}}},
			PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
				Weight: 100, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname",
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"},
						MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpExists}}}}}}},
		},
		Tolerations: []corev1.Toleration{{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists,
			Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr(int64(300))}},
		HostAliases:       []corev1.HostAlias{{IP: "10.0.0.1", Hostnames: []string{"db"}}},
		PriorityClassName: "high", Priority: ptr(int32(-5)), EnableServiceLinks: ptr(true),
		Overhead: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")},
	}
}

func populated() []populatedCase {
	pod := &corev1.Pod{ObjectMeta: meta("web"), Spec: podSpec(), Status: corev1.PodStatus{
		Phase: corev1.PodRunning, QOSClass: corev1.PodQOSBurstable, HostIP: "10.0.0.5", PodIPs: []corev1.PodIP{{IP: "10.1.0.7"}},
		StartTime: &t0, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue,
			LastProbeTime: zero, LastTransitionTime: t1}},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "web", Ready: true, RestartCount: 2, Image: "nginx:1.29",
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: t0}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: -1, Signal: 9, Reason: "OOMKilled", StartedAt: t0, FinishedAt: t1}},
			Started: ptr(true)}},
	}}
	deploy := &appsv1.Deployment{ObjectMeta: meta("web"), Spec: appsv1.DeploymentSpec{
		Replicas: ptr(int32(0)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}, Spec: podSpec()},
		Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
			MaxUnavailable: ptr(intstr.FromInt32(0)), MaxSurge: ptr(intstr.FromString("25%"))}},
		MinReadySeconds: 5, RevisionHistoryLimit: ptr(int32(10)), Paused: true, ProgressDeadlineSeconds: ptr(int32(600)),
	}, Status: appsv1.DeploymentStatus{ObservedGeneration: 3, Replicas: 2, ReadyReplicas: 1,
		Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse,
			LastUpdateTime: t0, LastTransitionTime: zero, Reason: "MinimumReplicasUnavailable"}}}}
	rs := &appsv1.ReplicaSet{ObjectMeta: meta("web-1"), Spec: appsv1.ReplicaSetSpec{Replicas: ptr(int32(2)),
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}},
		Status: appsv1.ReplicaSetStatus{Replicas: 0, FullyLabeledReplicas: 2}}
	secret := &corev1.Secret{ObjectMeta: meta("s"), Type: corev1.SecretTypeOpaque, Immutable: ptr(false),
		Data:       map[string][]byte{"a": []byte("b"), "bin": {0, 0xff, 0x80, '\n'}, "empty": {}},
		StringData: map[string]string{"plain": "text"}}
	cm := &corev1.ConfigMap{ObjectMeta: meta("cm"), Data: map[string]string{"a": "b", "z": ""},
		BinaryData: map[string][]byte{"blob": {1, 2, 3}}, Immutable: ptr(true)}
	svc := &corev1.Service{ObjectMeta: meta("svc"), Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer,
		Ports: []corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromString("http"), NodePort: 30080},
			{Name: "metrics", Port: 9090, TargetPort: intstr.FromInt32(9090), AppProtocol: ptr("http")}},
		Selector: map[string]string{"app": "web"}, ClusterIP: "10.0.0.10", ClusterIPs: []string{"10.0.0.10", "fd00::10"},
		SessionAffinity: corev1.ServiceAffinityClientIP, SessionAffinityConfig: &corev1.SessionAffinityConfig{
			ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr(int32(10800))}},
		IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}, AllocateLoadBalancerNodePorts: ptr(true)},
		Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "1.2.3.4",
			Ports: []corev1.PortStatus{{Port: 80, Protocol: corev1.ProtocolTCP, Error: ptr("none")}}}}}}}
	node := &corev1.Node{ObjectMeta: meta("node-1"), Spec: corev1.NodeSpec{PodCIDR: "10.244.0.0/24", PodCIDRs: []string{"10.244.0.0/24"},
		Unschedulable: true, Taints: []corev1.Taint{{Key: "k", Value: "v", Effect: corev1.TaintEffectNoSchedule, TimeAdded: &t0}}},
		Status: corev1.NodeStatus{
			Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("110")},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3800m"), corev1.ResourceEphemeralStorage: resource.MustParse("100G")},
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
				LastHeartbeatTime: t1, LastTransitionTime: t0, Reason: "KubeletReady"}},
			Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.5"}},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
			NodeInfo: corev1.NodeSystemInfo{MachineID: "m", KernelVersion: "6.1", OperatingSystem: "linux", Architecture: "amd64",
				KubeletVersion: "v1.37.2"},
			Images:          []corev1.ContainerImage{{Names: []string{"nginx@sha256:abc", "nginx:1.29"}, SizeBytes: 1 << 40}},
			VolumesInUse:    []corev1.UniqueVolumeName{"vol-1"},
			VolumesAttached: []corev1.AttachedVolume{{Name: "vol-1", DevicePath: "/dev/xvdb"}},
		}}
	ns := &corev1.Namespace{ObjectMeta: meta("demo"), Spec: corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{"kubernetes"}},
		Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating, Conditions: []corev1.NamespaceCondition{{
			Type: corev1.NamespaceDeletionContentFailure, Status: corev1.ConditionFalse, LastTransitionTime: t0}}}}
	sa := &corev1.ServiceAccount{ObjectMeta: meta("robot"), Secrets: []corev1.ObjectReference{{Kind: "Secret", Name: "tok"}},
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "regcred"}}, AutomountServiceAccountToken: ptr(true)}
	lease := &coordinationv1.Lease{ObjectMeta: meta("leader"), Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr("pod-a"),
		LeaseDurationSeconds: ptr(int32(15)), AcquireTime: &mt0, RenewTime: ptr(metav1.NewMicroTime(time.Unix(1764590700, 999))),
		LeaseTransitions: ptr(int32(0)), Strategy: ptr(coordinationv1.OldestEmulationVersion), PreferredHolder: ptr("")}}
	event := &corev1.Event{ObjectMeta: meta("web.1"), InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "demo", Name: "web",
		UID: "pod-uid", APIVersion: "v1", ResourceVersion: "7", FieldPath: "spec.containers{web}"},
		Reason: "Pulled", Message: "Successfully pulled", Source: corev1.EventSource{Component: "kubelet", Host: "node-1"},
		FirstTimestamp: t0, LastTimestamp: t1, Count: 3, Type: corev1.EventTypeNormal, EventTime: mt0,
		Series: &corev1.EventSeries{Count: 2, LastObservedTime: mt0}, Action: "Pull",
		Related: &corev1.ObjectReference{Kind: "Node", Name: "node-1"}, ReportingController: "kubelet", ReportingInstance: "node-1"}
	event2 := &eventsv1.Event{ObjectMeta: meta("web.2"), EventTime: mt0, ReportingController: "kubelet", ReportingInstance: "node-1",
		Action: "Pull", Reason: "Pulled", Regarding: corev1.ObjectReference{Kind: "Pod", Name: "web"}, Note: "done", Type: "Normal",
		DeprecatedFirstTimestamp: t0, DeprecatedCount: 1, Series: &eventsv1.EventSeries{Count: 4, LastObservedTime: mt0}}
	return []populatedCase{
		{"v1", "Pod", "full", pod},
		{"apps/v1", "Deployment", "full", deploy},
		{"apps/v1", "ReplicaSet", "full", rs},
		{"v1", "Secret", "full", secret},
		{"v1", "ConfigMap", "full", cm},
		{"v1", "Service", "full", svc},
		{"v1", "Node", "full", node},
		{"v1", "Namespace", "full", ns},
		{"v1", "ServiceAccount", "full", sa},
		{"coordination.k8s.io/v1", "Lease", "full", lease},
		{"v1", "Event", "full", event},
		{"events.k8s.io/v1", "Event", "full", event2},
	}
}
