package harness

import (
	"fmt"
	"hash/fnv"
	"maps"
	"strconv"

	"github.com/kwatch/kwatch/internal/rig/sim"
)

// Pods are spread like a mid-sized cluster's: a thousand per namespace, two
// hundred per node, a handful of workloads.
const (
	podsPerNamespace = 1000
	podsPerNode      = 200
)

var (
	apps  = []string{"web", "api", "worker", "cache", "gateway", "indexer", "scheduler", "billing"}
	tiers = []string{"frontend", "backend", "batch"}
	// baseAnnotations are on every pod; writes add the bench keys to them.
	baseAnnotations = map[string]string{
		"kubectl.kubernetes.io/restartedAt": "2026-11-30T12:00:00Z",
		"prometheus.io/scrape":              "true",
		"prometheus.io/port":                "9090",
	}
)

// suffix returns n lower-case alphanumerics derived from s.
func suffix(s string, n int) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	h := fnv.New64a()
	h.Write([]byte(s))
	v := h.Sum64()
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[v%uint64(len(alphabet))]
		v = v/uint64(len(alphabet)) ^ uint64(i+1)*0x9e3779b97f4a7c15
	}
	return string(b)
}

// makePods describes n pods for the simulator to render (3-4 KB of JSON
// each: owner, managedFields, two containers, tolerations, a full status).
func makePods(n int) []sim.Pod {
	namespaces := max(1, n/podsPerNamespace)
	nodes := max(1, n/podsPerNode)
	pods := make([]sim.Pod, n)
	seen := make(map[string]bool, n)
	for i := range pods {
		app := apps[i%len(apps)]
		ns := fmt.Sprintf("ns-%03d", i%namespaces)
		owner := app + "-" + suffix(ns+app, 10)
		name := owner + "-" + suffix(strconv.Itoa(i), 5)
		for seen[ns+"/"+name] { // rare: keep names unique
			name += "x"
		}
		seen[ns+"/"+name] = true
		pods[i] = sim.Pod{
			Namespace: ns, Name: name, App: app, Owner: owner,
			NodeName: fmt.Sprintf("node-%04d", i%nodes), Ready: i%10 != 0, Restarts: int32(i % 3),
			Labels:      map[string]string{"app": app, "pod-template-hash": owner[len(app)+1:], "tier": tiers[i%len(tiers)]},
			Annotations: baseAnnotations,
		}
	}
	return pods
}

// withAnnotations returns the base annotations plus extra.
func withAnnotations(extra map[string]string) map[string]string {
	m := maps.Clone(baseAnnotations)
	maps.Copy(m, extra)
	return m
}

// MakePods is makePods for the commands that serve the harness's pods
// without its simulator (cmd/million).
func MakePods(n int) []sim.Pod { return makePods(n) }
