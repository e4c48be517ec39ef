package conformance_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/kwatch/kwatch/internal/conformance/suite"
	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
	"github.com/kwatch/kwatch/kube"
)

// simToken is the simulator's admin token; simPlainToken is the token of
// "nobody", a user with no rules (like the real cluster's user without RBAC
// grants).
const (
	simToken      = "kwatch-conformance-sim-token"
	simPlainToken = "kwatch-conformance-sim-nobody"
)

// simDifferences are the cases where the simulator, run with its default
// options, is known to differ from the real server; see README.md. None is
// known today; the map stays so that one can be recorded without code changes.
var simDifferences = map[string]string{}

// TestSim runs the suite against the simulator, served over TLS with an
// admin token and an unprivileged user, and otherwise default options.
func TestSim(t *testing.T) {
	t.Parallel()
	h := simkit.Start(t, sim.Options{TLS: true, BearerToken: simToken,
		Users: []sim.User{{Name: "nobody", Token: simPlainToken}},
		// The simulator has no CustomResourceDefinitions: the custom resource
		// of the table cases is registered as the real server gets its CRD.
		Resources: []sim.ResourceInfo{{Group: "example.com", Version: "v1", Resource: "widgets", Kind: "Widget",
			Namespaced: true, PrinterColumns: []sim.PrinterColumn{
				{Name: "Size", Type: "integer", JSONPath: ".spec.size"},
				{Name: "Color", Type: "string", JSONPath: ".spec.color"},
				{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
			}}}})
	r := suite.Run(t, &simTarget{h: h}, suite.Cases(), suite.Options{KnownDifferences: simDifferences})
	results.Add(r)
}

// simTarget is the suite's view of a simulator. It has one server, so
// StorageConfig is Config(Admin), and Expire is the simulator's Compact.
type simTarget struct {
	h   *simkit.Harness
	seq atomic.Int64
}

func (s *simTarget) Name() string { return "sim" }

// Config hands out the admin token, nobody's token, or one the simulator
// does not know.
func (s *simTarget) Config(u suite.User) *kube.Config {
	tokens := map[suite.User]string{suite.Admin: simToken, suite.Plain: simPlainToken, suite.Stranger: "not-a-known-token"}
	return &kube.Config{Host: s.h.URL, Auth: kube.AuthConfig{BearerToken: tokens[u]}, TLS: kube.TLSConfig{CAData: s.h.CACertPEM}}
}

func (s *simTarget) StorageConfig() *kube.Config { return s.Config(suite.Admin) }

// Expire writes an object, so that a resourceVersion above rv exists as it
// must for a real compaction to pass rv, then compacts to the newest RV.
func (s *simTarget) Expire(_ context.Context, rv string) error {
	obj, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"namespace": "conformance-expire", "name": fmt.Sprintf("expire-%d", s.seq.Add(1))}})
	if err != nil {
		return err
	}
	if _, err := s.h.Server.Create("configmaps", obj); err != nil {
		return fmt.Errorf("expire: write a newer revision: %w", err)
	}
	s.h.Server.Compact()
	return nil
}
