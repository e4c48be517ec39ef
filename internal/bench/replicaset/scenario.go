package replicaset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/kwatch/kwatch/internal/rig/sim"
)

// Namespace is where the scenario's ReplicaSet and pods live.
const Namespace = "demo"

// setName is the scenario's ReplicaSet.
const setName = "web"

// Controller is one ReplicaSet controller under test. Start builds it
// against the API server at host and returns its run function and a count
// of its reconciles so far.
type Controller struct {
	Name  string
	Start func(host string, log *slog.Logger) (run func(context.Context) error, reconciles func() int64, err error)
}

// Step is one change the scenario makes, and the live pods it then wants.
type Step struct {
	Name string
	Want int
	// Creates and Deletes are what the step needs: pod creates by the
	// controller and pod deletes by anyone (the scenario's own, the
	// controller's, the garbage collector's).
	Creates, Deletes int
	do               func(s *scenario) error
}

// Steps are the scenario: create replicas=5, scale to 30, to 3, to 20,
// delete 5 owned pods, change the template, delete the ReplicaSet.
func Steps() []Step {
	return []Step{
		{Name: "create 5", Want: 5, Creates: 5, do: func(s *scenario) error { return s.createSet(5) }},
		{Name: "scale to 30", Want: 30, Creates: 25, do: func(s *scenario) error { return s.scale(30) }},
		{Name: "scale to 3", Want: 3, Deletes: 27, do: func(s *scenario) error { return s.scale(3) }},
		{Name: "scale to 20", Want: 20, Creates: 17, do: func(s *scenario) error { return s.scale(20) }},
		{Name: "delete 5 pods", Want: 20, Creates: 5, Deletes: 5, do: func(s *scenario) error { return s.deletePods(5) }},
		{Name: "change the template", Want: 20, do: func(s *scenario) error { return s.changeTemplate() }},
		{Name: "delete the ReplicaSet", Want: 0, Deletes: 20, do: func(s *scenario) error { return s.deleteSet() }},
	}
}

// Result is what one controller did at one lag.
type Result struct {
	Controller string        `json:"controller"`
	Lag        time.Duration `json:"lag"`
	// MaxLive is the most pods alive at any time (the server's count).
	MaxLive int `json:"maxLive"`
	// Creates and Deletes are the pods created and deleted over the run;
	// the excess ones are those the steps did not need.
	Creates       int   `json:"creates"`
	Deletes       int   `json:"deletes"`
	ExcessCreates int   `json:"excessCreates"`
	ExcessDeletes int   `json:"excessDeletes"`
	Conflicts     int64 `json:"conflicts"`
	Reconciles    int64 `json:"reconciles"`
	// Steps say, per step, when the pods last changed after it (the time
	// until stable) and whether the step ended right.
	Steps []StepResult `json:"steps"`
}

// StepResult is one step's outcome.
type StepResult struct {
	Name string `json:"name"`
	// Stable is whether the server reached the step's pods and stayed so
	// for the quiet period within the bound; StableAfter is the time from
	// the step's change to the last pod change before the quiet period.
	Stable      bool          `json:"stable"`
	StableAfter time.Duration `json:"stableAfter"`
	MaxLive     int           `json:"maxLive"`
	// Creates and Deletes are the step's pod creates and deletes.
	Creates int `json:"creates"`
	Deletes int `json:"deletes"`
}

// Options shape a run.
type Options struct {
	// StepBound is how long a step may take to settle; 90 s.
	StepBound time.Duration
	// Log receives the controllers' logs; nil discards them.
	Log *slog.Logger
}

// Run runs controller c through Steps against a new simulated server whose
// watches lag by lag.
func Run(ctx context.Context, c Controller, lag time.Duration, opts Options) (Result, error) {
	if opts.StepBound <= 0 {
		opts.StepBound = 90 * time.Second
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	srv, err := sim.New(sim.Options{})
	if err != nil {
		return Result{}, err
	}
	if err := srv.EnsureNamespace(Namespace); err != nil {
		return Result{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	f := &front{h: srv.Handler(), lag: lag}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return Result{}, err
	}
	hs := &http.Server{Handler: f}
	served := make(chan struct{})
	go func() { _ = hs.Serve(ln); close(served) }()
	defer func() { _ = hs.Close(); <-served }()

	s := &scenario{srv: srv, lag: lag, res: Result{Controller: c.Name, Lag: lag}}
	s.changes, s.stopJournal = srv.Journal("pods")
	defer s.stopJournal()
	run, reconciles, err := c.Start("http://"+ln.Addr().String(), opts.Log)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", c.Name, err)
	}
	runCtx, stopCtl := context.WithCancel(ctx)
	ctlDone := make(chan error, 1)
	go func() { ctlDone <- run(runCtx) }()
	defer func() { stopCtl(); <-ctlDone }()

	quiet := 3*lag + 2*time.Second
	var needCreates, needDeletes int
	for _, st := range Steps() {
		if err := st.do(s); err != nil {
			return s.res, fmt.Errorf("%s: step %q: %w", c.Name, st.Name, err)
		}
		needCreates += st.Creates
		needDeletes += st.Deletes
		s.res.Steps = append(s.res.Steps, s.settle(ctx, st, quiet, opts.StepBound))
	}
	s.poll()
	s.res.ExcessCreates = s.res.Creates - needCreates
	s.res.ExcessDeletes = s.res.Deletes - needDeletes
	s.res.Conflicts = f.conflicts.Load()
	s.res.Reconciles = reconciles()
	return s.res, ctx.Err()
}

// scenario is one run's server and what it saw.
type scenario struct {
	srv         *sim.Server
	lag         time.Duration
	res         Result
	changes     func() []sim.Change
	stopJournal func()
	seen        int // journal entries counted
	live        int
	uid         string // the ReplicaSet's
	generation  int64
}

// poll counts the pod changes since the last poll and reports whether
// there were any.
func (s *scenario) poll() bool {
	ch := s.changes()
	for _, c := range ch[s.seen:] {
		switch c.Type {
		case "ADDED":
			s.res.Creates++
			s.live++
		case "DELETED":
			s.res.Deletes++
			s.live--
		}
		s.res.MaxLive = max(s.res.MaxLive, s.live)
	}
	changed := len(ch) > s.seen
	s.seen = len(ch)
	return changed
}

// settle waits until the server shows the step's pods and status and no
// pod has changed for quiet, or bound passes.
func (s *scenario) settle(ctx context.Context, st Step, quiet, bound time.Duration) (r StepResult) {
	r = StepResult{Name: st.Name}
	c0, d0 := s.res.Creates, s.res.Deletes
	defer func() { r.Creates, r.Deletes = s.res.Creates-c0, s.res.Deletes-d0 }()
	start := time.Now()
	last := start
	for time.Since(start) < bound && ctx.Err() == nil {
		if s.poll() {
			last = time.Now()
		}
		r.MaxLive = max(r.MaxLive, s.live)
		if time.Since(last) >= quiet && s.right(st) {
			r.Stable, r.StableAfter = true, last.Sub(start)
			return r
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.StableAfter = time.Since(start)
	return r
}

// right reports whether the server has the step's pods, each owned by the
// set, and the set's status says so.
func (s *scenario) right(st Step) bool {
	_, pods, err := s.srv.Snapshot("pods")
	if err != nil {
		return false
	}
	n := 0
	for _, o := range pods {
		var p struct {
			Metadata struct {
				DeletionTimestamp *string `json:"deletionTimestamp"`
				OwnerReferences   []struct {
					UID string `json:"uid"`
				} `json:"ownerReferences"`
			} `json:"metadata"`
		}
		if json.Unmarshal(o.JSON, &p) != nil || p.Metadata.DeletionTimestamp != nil {
			continue
		}
		for _, ref := range p.Metadata.OwnerReferences {
			if ref.UID == s.uid {
				n++
			}
		}
	}
	if n != st.Want {
		return false
	}
	if st.Want == 0 {
		return true
	}
	set, err := s.srv.Get("replicasets.apps", Namespace, setName)
	if err != nil {
		return false
	}
	var rs struct {
		Metadata struct {
			Generation int64 `json:"generation"`
		} `json:"metadata"`
		Status struct {
			Replicas           int   `json:"replicas"`
			ObservedGeneration int64 `json:"observedGeneration"`
		} `json:"status"`
	}
	if json.Unmarshal(set.JSON, &rs) != nil {
		return false
	}
	return rs.Status.Replicas == st.Want && rs.Status.ObservedGeneration == rs.Metadata.Generation
}

func (s *scenario) createSet(n int) error {
	body := fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"namespace":%q,"name":%q},`+
		`"spec":{"replicas":%d,"selector":{"matchLabels":{"app":%q}},"template":{"metadata":{"labels":{"app":%q}},`+
		`"spec":{"containers":[{"name":"web","image":"nginx:1"}]}}}}`, Namespace, setName, n, setName, setName)
	o, err := s.srv.Create("replicasets.apps", []byte(body))
	if err != nil {
		return err
	}
	s.uid = o.UID
	return nil
}

func (s *scenario) scale(n int) error {
	_, err := s.srv.Patch("replicasets.apps", Namespace, setName, []byte(`{"spec":{"replicas":`+strconv.Itoa(n)+`}}`))
	return err
}

func (s *scenario) changeTemplate() error {
	_, err := s.srv.Patch("replicasets.apps", Namespace, setName,
		[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:2"}]}}}}`))
	return err
}

// deleteSet deletes the set, and then its pods as kube-controller-
// manager's garbage collector would: once its own watch, lagging as much
// as the controller's, has shown the set gone. (The simulator's
// collector acts at once, with no watch between; a controller whose pod
// cache then shows the pods gone before its set cache shows the set gone
// would make new pods for a set that no longer exists, a race the real
// collector's own watch lag makes as unlikely for every controller.)
func (s *scenario) deleteSet() error {
	if _, err := s.srv.Delete("replicasets.apps", Namespace, setName); err != nil {
		return err
	}
	time.Sleep(s.lag + 50*time.Millisecond)
	_, pods, err := s.srv.Snapshot("pods")
	if err != nil {
		return err
	}
	for _, o := range pods {
		if !strings.Contains(string(o.JSON), `"uid":"`+s.uid+`"`) {
			continue
		}
		if _, err := s.srv.Delete("pods", o.Namespace, o.Name); err != nil && !isNotFound(err) {
			return err
		}
	}
	return nil
}

func isNotFound(err error) bool {
	var se *sim.StatusError
	return errors.As(err, &se) && se.Status.Code == http.StatusNotFound
}

// deletePods deletes n of the set's pods, as a node failure or a user
// would.
func (s *scenario) deletePods(n int) error {
	_, pods, err := s.srv.Snapshot("pods")
	if err != nil {
		return err
	}
	for _, o := range pods {
		if n == 0 {
			break
		}
		if _, err := s.srv.Delete("pods", o.Namespace, o.Name); err != nil {
			if isNotFound(err) {
				continue
			}
			return err
		}
		n--
	}
	return nil
}
