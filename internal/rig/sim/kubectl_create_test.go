package sim_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// kubectlCreates are the imperative creates kubectl sends in protobuf, the object
// each makes, and the fields the real server adds by defaulting, which the
// simulator does not (kubectl-create-stored.json has what the real one stored).
var kubectlCreates = []struct {
	args     string // the kubectl command after "kubectl"
	get      []string
	defaults []string
}{
	{"create namespace shop", []string{"namespace", "shop"}, nil},
	{"create configmap x --from-literal=a=b -n shop", []string{"configmap", "x", "-n", "shop"}, nil},
	{"create secret generic s --from-literal=a=b -n shop", []string{"secret", "s", "-n", "shop"}, []string{"type"}},
	{"create deployment web --image=nginx -n shop", []string{"deployment", "web", "-n", "shop"}, []string{
		"spec.progressDeadlineSeconds", "spec.revisionHistoryLimit", "spec.strategy.rollingUpdate", "spec.strategy.type",
		"spec.template.spec.containers[0].imagePullPolicy", "spec.template.spec.containers[0].terminationMessagePath",
		"spec.template.spec.containers[0].terminationMessagePolicy", "spec.template.spec.dnsPolicy",
		"spec.template.spec.restartPolicy", "spec.template.spec.schedulerName", "spec.template.spec.securityContext",
		"spec.template.spec.terminationGracePeriodSeconds",
	}},
}

// kubectlCreateProtobuf runs each create (protobuf bodies, kubectl-create-namespace-requests.txt),
// then kubectl get -o json, and compares with what the real server stored: every
// field the simulator shows is the real server's, and the real server has no field
// the simulator lacks besides its defaults.
func kubectlCreateProtobuf(t *testing.T, k *kubectl) {
	var stored map[string]map[string]any
	require.NoError(t, json.Unmarshal(capture(t, "kubectl-create-stored.json"), &stored))
	for _, c := range kubectlCreates {
		out := k.run(t, append(strings.Fields(c.args), "-v=8")...)
		require.Contains(t, out, " created", "kubectl %s", c.args)
		require.Regexp(t, `(?s)POST.*?Content-Type: application/vnd\.kubernetes\.protobuf`, out,
			"kubectl %s sends its body in protobuf (its -v=8 log shows the request headers)", c.args)
		want, ok := stored["kubectl "+c.args]
		require.True(t, ok, "no capture for kubectl %s", c.args)
		got := decodeMap(t, []byte(k.run(t, append([]string{"get", "-o", "json"}, c.get...)...)))
		for _, obj := range []map[string]any{want, got} {
			md := obj["metadata"].(map[string]any)
			for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "managedFields"} {
				delete(md, f)
			}
		}
		var missing, wrong []string
		compareStored(want, got, "", &missing, &wrong)
		require.Empty(t, wrong, "kubectl %s: fields the simulator stores differently from the real server", c.args)
		for _, m := range missing {
			require.Contains(t, c.defaults, m, "kubectl %s: the real server has %s, the simulator does not", c.args, m)
		}
	}
}

// compareStored walks want (the real server's object) and got (the simulator's):
// wrong gets each path where got has a different or extra value, missing each path
// only want has.
func compareStored(want, got any, path string, missing, wrong *[]string) {
	wm, wIsMap := want.(map[string]any)
	gm, gIsMap := got.(map[string]any)
	wl, wIsList := want.([]any)
	gl, gIsList := got.([]any)
	switch {
	case wIsMap && gIsMap:
		for _, key := range slices.Sorted(func(yield func(string) bool) {
			for k := range wm {
				if !yield(k) {
					return
				}
			}
		}) {
			p := strings.TrimPrefix(path+"."+key, ".")
			if g, ok := gm[key]; ok {
				compareStored(wm[key], g, p, missing, wrong)
			} else {
				*missing = append(*missing, p)
			}
		}
		for key, g := range gm {
			if _, ok := wm[key]; !ok {
				*wrong = append(*wrong, fmt.Sprintf("%s: extra %v", strings.TrimPrefix(path+"."+key, "."), g))
			}
		}
	case wIsList && gIsList && len(wl) == len(gl):
		for i := range wl {
			compareStored(wl[i], gl[i], fmt.Sprintf("%s[%d]", path, i), missing, wrong)
		}
	case !reflect.DeepEqual(want, got):
		*wrong = append(*wrong, fmt.Sprintf("%s: real %v, simulator %v", path, want, got))
	}
}
