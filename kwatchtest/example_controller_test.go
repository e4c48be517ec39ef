package kwatchtest_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/kwatchtest"
)

// phasePod holds only what the phase-label controller reads.
type phasePod struct {
	metav1.ObjectMeta `json:"metadata"`
	Status            struct {
		Phase string `json:"phase"`
	} `json:"status"`
}

// phasePods pairs phasePod with the pods resource.
var phasePods = kube.Typed[*phasePod](kube.Pods)

const phaseLabel = "example.kwatch.dev/phase"

// setupPhaseLabels adds a controller that keeps each pod's phase label equal
// to its status.phase.
func setupPhaseLabels(mgr *controller.Manager) error {
	writes := client.For(mgr.Client(), phasePods, client.Options{FieldManager: "phase-labels"})
	_, err := controller.New(mgr, controller.Config[*phasePod]{Name: "phase-labels", For: phasePods, Workers: 2,
		ReconcileObject: func(ctx context.Context, pod *phasePod) (controller.Result, error) {
			if pod.Labels[phaseLabel] == pod.Status.Phase {
				return controller.Result{}, nil
			}
			patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
				"labels": map[string]string{phaseLabel: pod.Status.Phase}}})
			_, err := writes.Patch(ctx, pod.Namespace, pod.Name, client.MergePatch, patch, client.PatchOptions{})
			return controller.Result{}, err
		}})
	return err
}

// TestPhaseLabelsConvergeAfterCutWatch runs the controller against the kit,
// cuts its pod watch in the middle of a frame, changes pods after the cut and
// waits until the server shows every pod labelled with its current phase.
func TestPhaseLabelsConvergeAfterCutWatch(t *testing.T) {
	srv := kwatchtest.Start(t, kwatchtest.Options{})
	for _, name := range []string{"web-1", "web-2", "web-3"} {
		_, err := srv.PutPod(kwatchtest.Pod{Namespace: "demo", Name: name, Phase: "Pending"})
		require.NoError(t, err)
	}
	// The controller's first pod watch delivers two events, then is cut in the
	// middle of the third, as a broken connection would.
	cut := srv.CutWatch(kwatchtest.FaultOptions{Resource: "pods", AfterEvents: 2})

	mgr, err := controller.NewManager(srv.Client(), controller.ManagerOptions{})
	require.NoError(t, err)
	require.NoError(t, setupPhaseLabels(mgr)) // controller.New with For: the pods; ReconcileObject patches the label
	kwatchtest.Run(t, mgr.Run)

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	require.NoError(t, cut.Wait(ctx), "the watch was never cut")

	// Changes after the cut reach the controller only if its informer resumed.
	for _, name := range []string{"web-1", "web-3"} {
		_, err := srv.SetStatus("pods", "demo", name, `{"phase": "Running"}`)
		require.NoError(t, err)
	}
	want := map[string]string{"web-1": "Running", "web-2": "Pending", "web-3": "Running"}
	require.Eventually(t, func() bool {
		pods, err := kwatchtest.ListInto[phasePod](srv, "pods", "demo")
		require.NoError(t, err)
		for _, p := range pods {
			if p.Labels[phaseLabel] != want[p.Name] || p.Status.Phase != want[p.Name] {
				return false
			}
		}
		return len(pods) == len(want)
	}, time.Minute, 10*time.Millisecond, "the controller did not converge after the cut")
}
