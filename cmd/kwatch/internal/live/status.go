package live

import "strings"

// StatusStyle is the colour of a status as kubectl's printers spell them:
// green for running or done well, yellow for on the way (pending, creating,
// initialising), red for failing, dim for going away. A status it does not
// know is yellow if it reads like a wait and red if it reads like a
// failure; "" is plain.
func StatusStyle(status string) Style {
	switch status {
	case "":
		return StyleNormal
	case "Running", "Active", "Bound", "Ready", "Available", "True":
		return StyleGood
	case "Completed", "Succeeded", "Terminating", "Released":
		return StyleDim
	case "Pending", "ContainerCreating", "PodInitializing", "SchedulingGated", "NotReady", "Unknown",
		"Waiting", "Terminated":
		return StyleWarn
	case "Failed", "Error", "CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull", "OOMKilled", "Evicted",
		"InvalidImageName", "ContainerStatusUnknown", "NodeLost", "UnexpectedAdmissionError", "Lost":
		return StyleBad
	}
	if rest, ok := strings.CutPrefix(status, "Init:"); ok && !strings.Contains(rest, "/") {
		return StatusStyle(rest) // Init:Error, Init:CrashLoopBackOff; Init:0/2 is on its way
	}
	if strings.HasPrefix(status, "Signal:") || strings.HasPrefix(status, "ExitCode:") {
		return StyleBad
	}
	for _, bad := range []string{"Err", "BackOff", "Fail", "Invalid"} {
		if strings.Contains(status, bad) {
			return StyleBad
		}
	}
	return StyleWarn
}
