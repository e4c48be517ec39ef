package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"time"
)

// Documented defaults for ChurnOptions.
const (
	DefaultChurnNamespaces = 10
	DefaultChurnNodes      = 50
)

var churnApps = []string{"web", "api", "worker", "cache", "billing", "search", "ingest", "auth"}

// ChurnOptions configures a Churn. The zero value churns pods as fast as possible in
// 10 namespaces until the context ends, starting from no pods of its own.
type ChurnOptions struct {
	// Pods is how many pods Run loads (with LoadPods) before churning. Zero means none.
	Pods int
	// Namespaces spreads pods over "ns-000".."ns-<n-1>". Zero means DefaultChurnNamespaces.
	Namespaces int
	// Nodes is how many node names pods are scheduled onto. Zero means DefaultChurnNodes.
	Nodes int
	// Rate is the target rate in events per second. Zero means as fast as possible.
	Rate float64
	// Events stops Run after this many churn events. Zero means until ctx ends.
	Events int
	// Seed makes the sequence of operations and names reproducible. Zero means 1.
	Seed uint64
	// CreateWeight, UpdateWeight and DeleteWeight set the operation mix. All zero
	// means 1, 8, 1 (the pod count stays about where it started).
	CreateWeight, UpdateWeight, DeleteWeight int
}

// Churn generates pod creates, updates and deletes against a Server. Build it with
// NewChurn (no goroutine starts) and drive it with Run. It only touches pods it
// created itself.
type Churn struct {
	srv    *Server
	opts   ChurnOptions
	rng    *rand.Rand     // used only by Run's goroutine
	pods   []Pod          // the churn's live pods; Run's goroutine only
	index  map[string]int // namespace/name -> index in pods
	seq    int            // names made so far
	events atomic.Uint64
}

// NewChurn validates opts and prepares a generator.
func NewChurn(srv *Server, opts ChurnOptions) (*Churn, error) {
	switch {
	case opts.Pods < 0 || opts.Namespaces < 0 || opts.Nodes < 0 || opts.Events < 0:
		return nil, fmt.Errorf("sim: ChurnOptions counts must be >= 0 (pods %d, namespaces %d, nodes %d, events %d)",
			opts.Pods, opts.Namespaces, opts.Nodes, opts.Events)
	case opts.Rate < 0:
		return nil, fmt.Errorf("sim: ChurnOptions.Rate must be >= 0, got %v", opts.Rate)
	case opts.CreateWeight < 0 || opts.UpdateWeight < 0 || opts.DeleteWeight < 0:
		return nil, errors.New("sim: ChurnOptions weights must be >= 0")
	}
	if opts.Namespaces == 0 {
		opts.Namespaces = DefaultChurnNamespaces
	}
	if opts.Nodes == 0 {
		opts.Nodes = DefaultChurnNodes
	}
	if opts.Seed == 0 {
		opts.Seed = 1
	}
	if opts.CreateWeight+opts.UpdateWeight+opts.DeleteWeight == 0 {
		opts.CreateWeight, opts.UpdateWeight, opts.DeleteWeight = 1, 8, 1
	}
	return &Churn{srv: srv, opts: opts, index: map[string]int{},
		rng: rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x5bd1e995))}, nil
}

// Events returns how many churn events (not counting the initial load) were made.
func (c *Churn) Events() uint64 { return c.events.Load() }

// Run loads the initial pods, then churns until ctx ends or Options.Events are
// done. It starts no goroutine and returns nil when stopped by either.
func (c *Churn) Run(ctx context.Context) error {
	if c.opts.Pods > 0 {
		for _, p := range makePods(c.opts.Pods, c.opts.Namespaces, c.opts.Nodes, c.opts.Seed) {
			c.track(p)
		}
		if err := c.srv.loadPods(ctx, c.pods); err != nil {
			return nil // cancelled during the load: a clean stop
		}
	}
	var timer *time.Timer
	start := time.Now()
	for i := 0; c.opts.Events == 0 || i < c.opts.Events; i++ {
		if ctx.Err() != nil {
			return nil
		}
		if c.opts.Rate > 0 {
			due := start.Add(time.Duration(float64(i) / c.opts.Rate * float64(time.Second)))
			if d := time.Until(due); d > 0 {
				if timer == nil {
					timer = time.NewTimer(d)
					defer timer.Stop()
				} else {
					timer.Reset(d)
				}
				select {
				case <-ctx.Done():
					return nil
				case <-timer.C:
				}
			}
		}
		if err := c.step(); err != nil {
			return err
		}
		c.events.Add(1)
	}
	return nil
}

// step makes one create, update or delete.
func (c *Churn) step() error {
	o := c.opts
	n := c.rng.IntN(o.CreateWeight + o.UpdateWeight + o.DeleteWeight)
	switch {
	case n < o.CreateWeight || len(c.pods) == 0:
		p := c.newPod(c.rng.IntN(o.Namespaces))
		c.track(p)
		_, err := c.srv.PutPod(p)
		return err
	case n < o.CreateWeight+o.UpdateWeight:
		i := c.rng.IntN(len(c.pods))
		p := &c.pods[i]
		switch c.rng.IntN(4) {
		case 0:
			p.Restarts++
		case 1:
			p.Ready = !p.Ready
		case 2:
			p.Labels["version"] = "v" + strconv.Itoa(c.rng.IntN(5))
		default:
			p.Annotations["kwatch.dev/churn"] = strconv.FormatUint(c.rng.Uint64()%1000000, 10)
		}
		_, err := c.srv.PutPod(*p)
		return err
	default:
		i := c.rng.IntN(len(c.pods))
		p := c.untrack(i)
		if _, err := c.srv.Delete("pods", p.Namespace, p.Name); err != nil {
			var se *StatusError
			if !errors.As(err, &se) || se.Status.Code != 404 {
				return err
			}
		}
		return nil
	}
}

func (c *Churn) newPod(ns int) Pod {
	c.seq++
	p := makePod(c.opts.Seed, c.seq+c.opts.Pods, ns, c.opts.Nodes)
	p.Name += "-c" // never collides with the loaded names
	return p
}

func (c *Churn) track(p Pod) {
	c.index[p.Namespace+"/"+p.Name] = len(c.pods)
	c.pods = append(c.pods, p)
}

// untrack removes pods[i] by swapping the last one in.
func (c *Churn) untrack(i int) Pod {
	p := c.pods[i]
	last := len(c.pods) - 1
	c.pods[i] = c.pods[last]
	c.index[c.pods[i].Namespace+"/"+c.pods[i].Name] = i
	c.pods = c.pods[:last]
	delete(c.index, p.Namespace+"/"+p.Name)
	return p
}

// makePod builds the i-th generated pod: a workload, a ReplicaSet-style name, a node.
func makePod(seed uint64, i, ns, nodes int) Pod {
	app := churnApps[i%len(churnApps)]
	namespace := fmt.Sprintf("ns-%03d", ns)
	owner := app + "-" + hashString(strconv.FormatUint(seed, 10)+namespace+app, 10)
	name := owner + "-" + podSuffix(seed, i)
	return Pod{
		Namespace: namespace, Name: name, App: app, Owner: owner,
		NodeName: fmt.Sprintf("node-%03d", i%nodes), Ready: i%10 != 0,
		Labels: map[string]string{"app": app, "pod-template-hash": owner[len(app)+1:], "tier": tiers[i%len(tiers)]},
		Annotations: map[string]string{
			"prometheus.io/scrape": "true", "prometheus.io/port": "9090",
			"kubectl.kubernetes.io/restartedAt": "2026-11-30T12:00:00Z",
		},
	}
}

var tiers = []string{"frontend", "backend", "batch"}

// makePods builds n generated pods spread over namespaces.
func makePods(n, namespaces, nodes int, seed uint64) []Pod {
	pods := make([]Pod, n)
	for i := range pods {
		pods[i] = makePod(seed, i, i%namespaces, nodes)
	}
	return pods
}

// LoadPods bulk-loads count generated pods spread over namespaces "ns-000".. (each
// its own create event and resourceVersion) and returns the resourceVersion after
// the load. It is the fast way to build 100,000 pods for a benchmark.
func (s *Server) LoadPods(count, namespaces int, seed uint64) (uint64, error) {
	if count < 0 || namespaces <= 0 {
		return 0, fmt.Errorf("sim: LoadPods needs count >= 0 and namespaces > 0 (got %d, %d)", count, namespaces)
	}
	if seed == 0 {
		seed = 1
	}
	if err := s.loadPods(context.Background(), makePods(count, namespaces, DefaultChurnNodes, seed)); err != nil {
		return 0, err
	}
	return s.ResourceVersion(), nil
}

// loadPods writes pods in batches, waking watchers once per batch.
func (s *Server) loadPods(ctx context.Context, pods []Pod) error {
	const batch = 1000
	st := s.store
	for i := 0; i < len(pods); i += batch {
		if err := ctx.Err(); err != nil {
			return err
		}
		end := min(i+batch, len(pods))
		st.mu.Lock()
		for _, p := range pods[i:end] {
			s.putPodLocked(p)
		}
		st.signalLocked()
		st.mu.Unlock()
	}
	return nil
}

// podSuffixSpace is the number of five-character name suffixes.
const podSuffixSpace = 27 * 27 * 27 * 27 * 27

// podSuffix is the generated pod i's name suffix: five characters of the
// name alphabet, as a ReplicaSet's pods have. It must differ for every i,
// or LoadPods(n) serves fewer than n pods (a hash of i did: 100,000 pods
// came out as 99,928). i mod 27^5 goes through x -> (x*m + off) mod 27^5,
// a bijection because m is prime to 27 (not a multiple of 3), so the five
// characters look random yet never repeat below 27^5 (14,348,907); above
// it, each further power of 27 adds one character.
func podSuffix(seed uint64, i int) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	const m = 7_368_787 // digits sum to 46: not a multiple of 3, so prime to 27
	off := seed * 0x9e3779b97f4a7c15 % podSuffixSpace
	u := uint64(i)
	v := (u%podSuffixSpace*m + off) % podSuffixSpace
	b := make([]byte, 0, 6)
	for range 5 {
		b = append(b, alphabet[v%27])
		v /= 27
	}
	for rest := u / podSuffixSpace; rest > 0; rest /= 27 {
		b = append(b, alphabet[rest%27])
	}
	return string(b)
}
