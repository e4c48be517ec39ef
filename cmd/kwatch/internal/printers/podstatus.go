package printers

import (
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"
)

// PodColumns are the pod table's headers; PodWideColumns are added by -o wide.
var (
	PodColumns     = []string{"NAME", "READY", "STATUS", "RESTARTS", "AGE"}
	PodWideColumns = []string{"IP", "NODE", "NOMINATED NODE", "READINESS GATES"}
)

// none is what kubectl prints for an empty cell.
const none = "<none>"

// Age is kubectl's AGE: the time since t in its short human form ("5s",
// "3m2s", "4h", "2d"); "<unknown>" for a zero time.
func Age(t, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t))
}

// PodSummary is what the pod table shows of one pod besides its name.
type PodSummary struct {
	Ready    string // "1/2"
	Status   string // "Running", "CrashLoopBackOff", "Init:0/1", "Terminating", ...
	Restarts string // "3" or "3 (5m ago)"
}

// PodRow is the pod table's row: PodColumns, then PodWideColumns if wide.
func PodRow(p *Pod, now time.Time, wide bool) []string {
	s := Summarize(p, now)
	row := []string{p.Name, s.Ready, s.Status, s.Restarts, Age(p.CreationTimestamp, now)}
	if !wide {
		return row
	}
	ip := p.Status.PodIP
	if len(p.Status.PodIPs) > 0 {
		ip = p.Status.PodIPs[0].IP
	}
	return append(row, orNone(ip), orNone(p.Spec.NodeName), orNone(p.Status.NominatedNodeName), readinessGates(p))
}

func orNone(s string) string {
	if s == "" {
		return none
	}
	return s
}

// restartTally sums restarts and remembers the newest last termination.
type restartTally struct {
	count int
	last  time.Time
}

func (r *restartTally) add(cs *ContainerStatus) {
	r.count += cs.RestartCount
	if t := cs.LastState.Terminated; t != nil && t.FinishedAt.After(r.last) {
		r.last = t.FinishedAt
	}
}

// Summarize computes READY, STATUS and RESTARTS the way kubectl does:
// the phase (or status.reason) is refined by init containers that have not
// finished, then by the regular containers' waiting or terminated reasons
// (the first container listed wins), and finally by deletion.
func Summarize(p *Pod, now time.Time) PodSummary {
	reason := p.Status.Phase
	if p.Status.Reason != "" {
		reason = p.Status.Reason
	}
	for _, c := range p.Status.Conditions {
		if c.Type == "PodScheduled" && c.Reason == "SchedulingGated" {
			reason = "SchedulingGated"
		}
	}
	total := len(p.Spec.Containers)
	for _, c := range p.Spec.InitContainers {
		if c.RestartPolicy == "Always" {
			total++
		}
	}
	ready := 0
	var all, sidecars restartTally
	initReason, initializing := initStatus(p, &all, &sidecars, &ready)
	if initializing {
		reason = initReason
	}
	if !initializing || conditionTrue(p, "Initialized") {
		all = sidecars
		reason = containerStatus(p, reason, &all, &ready)
	}
	if p.DeletionTimestamp != nil {
		switch {
		case p.Status.Reason == "NodeLost":
			reason = "Unknown"
		case p.Status.Phase != "Succeeded" && p.Status.Phase != "Failed":
			reason = "Terminating"
		}
	}
	restarts := strconv.Itoa(all.count)
	if all.count != 0 && !all.last.IsZero() {
		restarts += " (" + Age(all.last, now) + " ago)"
	}
	return PodSummary{Ready: strconv.Itoa(ready) + "/" + strconv.Itoa(total), Status: reason, Restarts: restarts}
}

// initStatus walks the init containers in order until the first one that
// has not finished; it reports the status that one gives the pod.
func initStatus(p *Pod, all, sidecars *restartTally, ready *int) (string, bool) {
	sidecar := map[string]bool{}
	for _, c := range p.Spec.InitContainers {
		sidecar[c.Name] = c.RestartPolicy == "Always"
	}
	n := strconv.Itoa(len(p.Spec.InitContainers))
	for i := range p.Status.InitContainerStatuses {
		cs := &p.Status.InitContainerStatuses[i]
		all.add(cs)
		if sidecar[cs.Name] {
			sidecars.add(cs)
		}
		t, w := cs.State.Terminated, cs.State.Waiting
		switch {
		case t != nil && t.ExitCode == 0:
			continue
		case sidecar[cs.Name] && cs.Started != nil && *cs.Started:
			if cs.Ready {
				*ready++
			}
			continue
		case t != nil:
			return "Init:" + terminatedReason(t), true
		case w != nil && w.Reason != "" && w.Reason != "PodInitializing":
			return "Init:" + w.Reason, true
		default:
			return "Init:" + strconv.Itoa(i) + "/" + n, true
		}
	}
	return "", false
}

// containerStatus refines reason from the regular containers, last to
// first, so the first container's state is the one shown.
func containerStatus(p *Pod, reason string, all *restartTally, ready *int) string {
	running := false
	for i := len(p.Status.ContainerStatuses) - 1; i >= 0; i-- {
		cs := &p.Status.ContainerStatuses[i]
		all.add(cs)
		w, t := cs.State.Waiting, cs.State.Terminated
		switch {
		case w != nil && w.Reason != "":
			reason = w.Reason
		case t != nil:
			reason = terminatedReason(t)
		case cs.Ready && cs.State.Running != nil:
			running = true
			*ready++
		}
	}
	// A finished container next to a running one: the pod still runs.
	if reason == "Completed" && running {
		if conditionTrue(p, "Ready") {
			return "Running"
		}
		return "NotReady"
	}
	return reason
}

func terminatedReason(t *StateTerminated) string {
	switch {
	case t.Reason != "":
		return t.Reason
	case t.Signal != 0:
		return "Signal:" + strconv.Itoa(t.Signal)
	default:
		return "ExitCode:" + strconv.Itoa(t.ExitCode)
	}
}

func conditionTrue(p *Pod, typ string) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == typ {
			return c.Status == "True"
		}
	}
	return false
}

// readinessGates is "<true gates>/<gates>", or "<none>" without gates.
func readinessGates(p *Pod) string {
	if len(p.Spec.ReadinessGates) == 0 {
		return none
	}
	ok := 0
	for _, g := range p.Spec.ReadinessGates {
		if conditionTrue(p, g.ConditionType) {
			ok++
		}
	}
	return strconv.Itoa(ok) + "/" + strconv.Itoa(len(p.Spec.ReadinessGates))
}
