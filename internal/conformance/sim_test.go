package conformance_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/kwatch/kwatch/internal/conformance/suite"
	"github.com/kwatch/kwatch/internal/sim"
	"github.com/kwatch/kwatch/internal/sim/simtest"
	"github.com/kwatch/kwatch/watch"
)

// simToken is the simulator's only bearer token.
const simToken = "kwatch-conformance-sim-token"

// simDifferences are the cases where the simulator, run with its default
// options, is known to differ from the real server; see README.md.
var simDifferences = map[string]string{
	"watch/bookmarks": "the simulator sends a BOOKMARK only every Options.BookmarkInterval (60 s by default), " +
		"never shortly before timeoutSeconds ends the stream; the real server sends one about 2 s before the " +
		"deadline once the resource's newest RV has passed the watcher's",
	"watch/events-from-list-rv": podStatusDifference,
	"list/field-selector":       podStatusDifference,
	"auth/no-permission-is-403": "the simulator has one bearer token and no authorization: " +
		"an authenticated user without RBAC permission cannot be expressed, so no 403",
}

const podStatusDifference = "a pod created over HTTP with a status object (\"status\":{}, as typed clients send) " +
	"keeps it as sent; the real server discards the client's status on create and sets " +
	"{phase: Pending, qosClass: BestEffort}, so status.phase is empty and status.phase=Pending does not match"

// TestSim runs the suite against the simulator, served over TLS with a
// bearer token and otherwise default options.
func TestSim(t *testing.T) {
	t.Parallel()
	h := simtest.Start(t, sim.Options{TLS: true, BearerToken: simToken})
	r := suite.Run(t, &simTarget{h: h}, suite.Cases(), suite.Options{KnownDifferences: simDifferences})
	results.Add(r)
}

// simTarget is the suite's view of a simulator. It has one server, so
// StorageConfig is Config(Admin), and Expire is the simulator's Compact.
type simTarget struct {
	h   *simtest.Harness
	seq atomic.Int64
}

func (s *simTarget) Name() string { return "sim" }

// Config: the simulator knows one token and has no authorization, so Plain
// gets a token it does not know, like Stranger.
func (s *simTarget) Config(u suite.User) *watch.Config {
	tok := simToken
	if u != suite.Admin {
		tok = fmt.Sprintf("not-the-sim-token-%d", u)
	}
	return &watch.Config{Host: s.h.URL, BearerToken: tok, TLS: watch.TLSConfig{CAData: s.h.CACertPEM}}
}

func (s *simTarget) StorageConfig() *watch.Config { return s.Config(suite.Admin) }

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
