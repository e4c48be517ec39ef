package suite

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kwatch/kwatch/kube"
	"github.com/stretchr/testify/require"
)

// Case is one conformance check, written once and run against every Target.
type Case struct {
	Name string
	Run  func(t T, e *Env)
}

// Env is what a case gets: its target, an admin client, a writer and a
// fresh namespace nobody else uses.
type Env struct {
	Target Target
	Admin  *kube.Client
	Kube   Kube
	NS     string
	Ctx    context.Context // ends when the case's time budget does
}

// caseBudget bounds one case, waits for compaction included.
const caseBudget = 8 * time.Minute

// Options tune Run for one target.
type Options struct {
	// KnownDifferences maps a case name to how the target is known to differ
	// from the real server there. Such a case still runs; a failure is
	// reported (logged and counted) instead of failing the test, and a pass
	// is reported as a difference no longer seen. Nil means none.
	KnownDifferences map[string]string
}

// Result counts the outcome of the cases run against one target.
type Result struct {
	Target                       string
	Run, Passed, Failed, Skipped int
	Known                        int      // known differences that showed
	FailedNames                  []string // cases that failed
	KnownNames                   []string // known differences that showed
	FixedNames                   []string // known differences that passed
}

// Results collects Results from several targets; safe for concurrent use.
type Results struct {
	mu  sync.Mutex
	all []Result
}

// Add records r.
func (rs *Results) Add(r Result) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.all = append(rs.all, r)
}

// All returns the results recorded so far.
func (rs *Results) All() []Result {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return append([]Result(nil), rs.all...)
}

// outcome is how one case ended.
type outcome int

const (
	passed outcome = iota
	failed
	skipped
	knownShown // a known difference failed, as expected
	knownFixed // a known difference passed
)

// Run runs every case against target as subtests and counts them.
func Run(t *testing.T, target Target, cases []Case, opts Options) Result {
	res := Result{Target: target.Name()}
	admin, err := kube.NewClient(target.Config(Admin))
	require.NoError(t, err, "admin client for %s", target.Name())
	run := randomSuffix()
	for i, c := range cases {
		out, ran := passed, false
		ok := t.Run(c.Name, func(t *testing.T) {
			ran = true
			t.Cleanup(func() {
				if t.Skipped() {
					out = skipped
				}
			})
			ctx, cancel := context.WithTimeout(t.Context(), caseBudget)
			defer cancel()
			e := &Env{Target: target, Admin: admin, Kube: Kube{C: admin}, Ctx: ctx, NS: namespaceName(run, i)}
			require.NoError(t, e.Kube.CreateNamespace(ctx, e.NS), "create namespace %s", e.NS)
			if known, ok := opts.KnownDifferences[c.Name]; ok {
				out = runKnown(t, c, e, known)
				return
			}
			c.Run(t, e)
		})
		if !ran {
			continue // filtered out by -run
		}
		if !ok {
			out = failed
		}
		res.add(c.Name, out)
	}
	return res
}

// runKnown runs a case the target is known to fail on a recorder, and
// logs what happened on t without failing it.
func runKnown(t *testing.T, c Case, e *Env, known string) outcome {
	r := record(c, e)
	switch {
	case r.skipped:
		t.Logf("skipped:\n%s", r.summary())
		return skipped
	case r.failed:
		t.Logf("known difference from the real server: %s\nthe case failed as expected:\n%s", known, r.summary())
		return knownShown
	}
	t.Logf("known difference NOT seen, the case passed (drop it from the list): %s", known)
	return knownFixed
}

func (r *Result) add(name string, out outcome) {
	r.Run++
	switch out {
	case passed:
		r.Passed++
	case skipped:
		r.Skipped++
	case failed:
		r.Failed++
		r.FailedNames = append(r.FailedNames, name)
	case knownShown:
		r.Known++
		r.KnownNames = append(r.KnownNames, name)
	case knownFixed:
		r.Passed++
		r.FixedNames = append(r.FixedNames, name)
	}
}

// namespaceName gives each case its own namespace. Namespaces are never
// deleted: without a controller manager a deleted namespace stays
// Terminating, and the clusters are thrown away after the run anyway.
func namespaceName(run string, i int) string {
	return fmt.Sprintf("conf-%s-%02d", run, i)
}

func randomSuffix() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b) // never fails on Linux
	return hex.EncodeToString(b)
}
