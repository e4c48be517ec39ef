package sim

import (
	"testing"
	"time"
)

// benchDeployment is a deployment of a realistic size: two containers with
// ports, env and resources.
const benchDeployment = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"demo","labels":{"app":"web","tier":"front"}},
"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[
{"name":"app","image":"app:1","ports":[{"containerPort":8080},{"containerPort":9090,"protocol":"UDP"}],
"env":[{"name":"A","value":"1"},{"name":"B","value":"2"}],"resources":{"limits":{"cpu":"1","memory":"1Gi"},"requests":{"cpu":"500m"}}},
{"name":"proxy","image":"proxy:1","ports":[{"containerPort":80}]}]}}}}`

func benchObjects(b *testing.B) (*resource, map[string]any, map[string]any) {
	s, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	r := s.store.resources["deployments.apps"]
	var live map[string]any
	if err := json.Unmarshal([]byte(benchDeployment), &live); err != nil {
		b.Fatal(err)
	}
	recordUpdate(r, &fieldOwner{manager: "create", now: time.Unix(0, 0)}, nil, live)
	return r, live, deepCopyJSON(live)
}

// BenchmarkRecordUpdate is the field tracking of one client update of a
// deployment (one image changed).
func BenchmarkRecordUpdate(b *testing.B) {
	r, live, next := benchObjects(b)
	next["spec"].(map[string]any)["replicas"] = 4
	b.ReportAllocs()
	for b.Loop() {
		obj := deepCopyJSON(next)
		recordUpdate(r, &fieldOwner{manager: "editor", now: time.Unix(1, 0)}, live, obj)
	}
}

// BenchmarkApplyConfig is one server-side apply of a deployment's whole
// configuration onto a stored one.
func BenchmarkApplyConfig(b *testing.B) {
	r, live, cfg := benchObjects(b)
	delete(cfg["metadata"].(map[string]any), "managedFields")
	b.ReportAllocs()
	for b.Loop() {
		if _, serr := applyConfig(r, &fieldOwner{manager: "applier", now: time.Unix(1, 0)}, true, live, deepCopyJSON(cfg)); serr != nil {
			b.Fatal(serr)
		}
	}
}
