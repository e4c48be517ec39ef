package suite

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/watch"
)

// Case is one conformance check, written once and run against every Target.
type Case struct {
	Name string
	Run  func(t *testing.T, e *Env)
}

// Env is what a case gets: its target, an admin client, a writer and a
// fresh namespace nobody else uses.
type Env struct {
	Target Target
	Admin  *watch.Client
	Kube   Kube
	NS     string
	Ctx    context.Context // ends when the case's time budget does
}

// caseBudget bounds one case, waits for compaction included.
const caseBudget = 5 * time.Minute

// Result counts the outcome of the cases run against one target.
type Result struct {
	Target                       string
	Run, Passed, Failed, Skipped int
	FailedNames                  []string
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

// Run runs every case of cases against target as subtests and counts them.
func Run(t *testing.T, target Target, cases []Case) Result {
	res := Result{Target: target.Name()}
	admin, err := watch.NewClient(target.Config(Admin))
	require.NoError(t, err, "admin client for %s", target.Name())
	run := randomSuffix()
	for i, c := range cases {
		skipped := false
		ok := t.Run(c.Name, func(t *testing.T) {
			t.Cleanup(func() { skipped = t.Skipped() })
			ctx, cancel := context.WithTimeout(t.Context(), caseBudget)
			defer cancel()
			e := &Env{Target: target, Admin: admin, Kube: Kube{C: admin}, Ctx: ctx,
				NS: namespaceName(run, i)}
			require.NoError(t, e.Kube.CreateNamespace(ctx, e.NS), "create namespace %s", e.NS)
			c.Run(t, e)
		})
		res.Run++
		switch {
		case skipped:
			res.Skipped++
		case ok:
			res.Passed++
		default:
			res.Failed++
			res.FailedNames = append(res.FailedNames, c.Name)
		}
	}
	return res
}

// namespaceName gives each case its own namespace. Namespaces are never
// deleted: without a controller manager a deleted namespace stays
// Terminating, and the clusters are thrown away after the run anyway.
func namespaceName(run string, i int) string {
	return "conf-" + run + "-" + twoDigits(i)
}

func twoDigits(i int) string {
	return string([]byte{byte('0' + i/10%10), byte('0' + i%10)})
}

func randomSuffix() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b) // never fails on Linux
	return hex.EncodeToString(b)
}
