package writes

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Namespace holds every object the benchmarks write.
const Namespace = "bench"

// annotationKey is the annotation updates and patches change, so that
// every write changes the object (the server skips a no-op write without
// a new resourceVersion).
const annotationKey = "bench.kwatch.io/n"

// newConfigMap is an application's configuration: a few labels, a
// properties file and a few settings (0.5 KB of JSON).
func newConfigMap() *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   Namespace,
			Labels:      map[string]string{"app": "web", "tier": "frontend", "app.kubernetes.io/part-of": "shop"},
			Annotations: map[string]string{annotationKey: "0", "owner": "team-web"},
		},
		Data: map[string]string{
			"LOG_LEVEL":     "info",
			"CACHE_TTL":     "300s",
			"FEATURE_FLAGS": "checkout-v2,search-suggest",
			"app.properties": "server.port=8080\nserver.shutdown=graceful\n" +
				"db.pool.max=32\ndb.pool.idle=4\ndb.timeout=5s\n" +
				"cache.host=cache.shop.svc.cluster.local\ncache.port=6379\n" +
				"metrics.enabled=true\nmetrics.path=/metrics\n",
		},
	}
}

// newPod is a Deployment's pod as a controller would create it: an owner,
// labels, two containers with resources, ports, probes, environment and
// mounts, volumes and tolerations (1.8 KB of JSON, 1.1 KB of protobuf).
func newPod() *corev1.Pod {
	yes := true
	grace := int64(30)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: Namespace,
			Labels:    map[string]string{"app": "web", "tier": "frontend", "pod-template-hash": "7d9c5b6f4"},
			Annotations: map[string]string{annotationKey: "0",
				"kubectl.kubernetes.io/restartedAt": "2026-11-30T12:00:00Z", "prometheus.io/scrape": "true", "prometheus.io/port": "9090"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7d9c5b6f4",
				UID: "0b6f7a9e-3c1d-4b8a-9f2e-5d4c3b2a1f00", Controller: &yes, BlockOwnerDeletion: &yes}},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{
				{
					Name:  "web",
					Image: "registry.example/shop/web:1.42.0",
					Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP},
						{Name: "metrics", ContainerPort: 9090, Protocol: corev1.ProtocolTCP}},
					Env: []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}, {Name: "GOMAXPROCS", Value: "2"},
						{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}}},
					Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
						Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("512Mi")},
					},
					VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/web", ReadOnly: true}},
					ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromString("http")}},
						PeriodSeconds: 5},
					LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/live", Port: intstr.FromString("http")}},
						InitialDelaySeconds: 10, PeriodSeconds: 10},
					ImagePullPolicy: corev1.PullIfNotPresent,
				},
				{
					Name:  "proxy",
					Image: "registry.example/shop/proxy:2.3.1",
					Args:  []string{"--upstream=127.0.0.1:8080", "--listen=:8443"},
					Ports: []corev1.ContainerPort{{Name: "https", ContainerPort: 8443, Protocol: corev1.ProtocolTCP}},
					Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
						Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")},
					},
					ImagePullPolicy: corev1.PullIfNotPresent,
				},
			},
			Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "web-config"}}}}},
			RestartPolicy:                 corev1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: &grace,
			ServiceAccountName:            "web",
			Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
			},
		},
	}
}
