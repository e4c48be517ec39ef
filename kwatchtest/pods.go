package kwatchtest

import (
	"github.com/kwatch/kwatch/internal/rig/sim"
)

// Pod describes a generated pod with a realistic body (3-4 KB: containers,
// probes, volumes, a full status). Only Namespace and Name are required.
type Pod struct {
	Namespace, Name string
	// Labels; nil means {"app": App, "pod-template-hash": ...}.
	Labels map[string]string
	// App names the workload (labels, image, container name). Empty means "app".
	App string
	// NodeName binds the pod to a node; empty means unscheduled.
	NodeName string
	// Phase is status.phase. Empty means "Running" when NodeName is set, else "Pending".
	Phase string
	// Ready marks every container ready (when Running).
	Ready bool
	// Restarts is the app container's restartCount.
	Restarts int32
}

// PutPod creates or replaces a generated pod and returns it as stored.
func (s *Server) PutPod(p Pod) (Object, error) {
	if _, err := s.srv.PutPod(sim.Pod{Namespace: p.Namespace, Name: p.Name, Labels: p.Labels, App: p.App,
		NodeName: p.NodeName, Phase: p.Phase, Ready: p.Ready, Restarts: p.Restarts}); err != nil {
		return Object{}, err
	}
	return s.Get("pods", p.Namespace, p.Name)
}

// LoadPods creates count generated pods spread over namespaces "ns-000",
// "ns-001", ... (namespaces of them), the same ones for the same Options.Seed,
// and returns the resourceVersion after the last.
func (s *Server) LoadPods(count, namespaces int) (string, error) {
	rv, err := s.srv.LoadPods(count, namespaces, 0)
	return formatRV(rv), err
}
