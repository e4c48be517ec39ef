package printers

import "time"

// Pod is a slim core/v1 Pod: only the fields the pod table reads. Decoding
// into it skips the rest of a pod (env, volumes, managedFields), so a cache
// of Pods costs a fraction of full objects. The zero value is a pod with no
// containers, phase "".
type Pod struct {
	Meta   `json:"metadata"`
	Spec   PodSpec   `json:"spec"`
	Status PodStatus `json:"status"`
}

// PodSpec is the part of a pod's spec the table reads.
type PodSpec struct {
	NodeName       string          `json:"nodeName,omitempty"`
	InitContainers []Container     `json:"initContainers,omitempty"`
	Containers     []Container     `json:"containers,omitempty"`
	ReadinessGates []ReadinessGate `json:"readinessGates,omitempty"`
}

// Container is a container's name and, for init containers, its restart
// policy ("Always" makes it a sidecar that counts as a regular container).
type Container struct {
	Name          string `json:"name"`
	RestartPolicy string `json:"restartPolicy,omitempty"`
}

// ReadinessGate names a pod condition that must be true for readiness.
type ReadinessGate struct {
	ConditionType string `json:"conditionType"`
}

// PodStatus is the part of a pod's status the table reads.
type PodStatus struct {
	Phase                 string            `json:"phase,omitempty"`
	Reason                string            `json:"reason,omitempty"`
	NominatedNodeName     string            `json:"nominatedNodeName,omitempty"`
	PodIP                 string            `json:"podIP,omitempty"`
	PodIPs                []PodIP           `json:"podIPs,omitempty"`
	Conditions            []PodCondition    `json:"conditions,omitempty"`
	InitContainerStatuses []ContainerStatus `json:"initContainerStatuses,omitempty"`
	ContainerStatuses     []ContainerStatus `json:"containerStatuses,omitempty"`
}

// PodIP is one of a pod's addresses.
type PodIP struct {
	IP string `json:"ip"`
}

// PodCondition is one entry of status.conditions.
type PodCondition struct {
	Type   string `json:"type"`
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}

// ContainerStatus is one entry of status.containerStatuses or
// status.initContainerStatuses.
type ContainerStatus struct {
	Name         string         `json:"name"`
	Ready        bool           `json:"ready"`
	Started      *bool          `json:"started,omitempty"`
	RestartCount int            `json:"restartCount"`
	State        ContainerState `json:"state"`
	LastState    ContainerState `json:"lastState"`
}

// ContainerState holds at most one of its three fields set.
type ContainerState struct {
	Waiting    *StateWaiting    `json:"waiting,omitempty"`
	Running    *StateRunning    `json:"running,omitempty"`
	Terminated *StateTerminated `json:"terminated,omitempty"`
}

// StateWaiting is a container that has not started.
type StateWaiting struct {
	Reason string `json:"reason,omitempty"`
}

// StateRunning is a running container.
type StateRunning struct {
	StartedAt time.Time `json:"startedAt"`
}

// StateTerminated is a container that exited.
type StateTerminated struct {
	Reason     string    `json:"reason,omitempty"`
	ExitCode   int       `json:"exitCode"`
	Signal     int       `json:"signal,omitempty"`
	FinishedAt time.Time `json:"finishedAt"`
}

// Slim drops what the table never reads once the object is decoded:
// annotations, which the informer needs only on bookmarks, which do not
// reach the store.
func (p *Pod) Slim() *Pod {
	p.Annotations = nil
	return p
}
