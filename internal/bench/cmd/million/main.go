// Command million runs one kwatch informer, then one kwatch manager with
// one controller, over n pods of the benchmark harness's size (3-4 KB of
// JSON, 2.6 KB of protobuf with managedFields), each on its defaults (the
// compact store, protobuf), and prints each one's time to sync and peak
// RSS, and the server's.
//
//	go run ./cmd/million -pods 1000000
//
// The server is its own process (this binary, -role=server): a protobuf
// front (package protofront) that keeps one encoded message per pod. It
// renders the harness's pods through the simulator a batch at a time, so
// neither a simulator of n pods nor their JSON is ever held whole. Each
// engine runs in a process of its own, so that its peak RSS is its own.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/internal/bench/engine"
	"github.com/kwatch/kwatch/internal/bench/harness"
	"github.com/kwatch/kwatch/internal/bench/protofront"
	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/kube"
)

// result is what a role prints, as one line of JSON, when it is done.
type result struct {
	Role    string  `json:"role"`
	URL     string  `json:"url,omitempty"`
	Pods    int     `json:"pods"`
	Seconds float64 `json:"seconds"` // server: to load; engines: start to synced (manager: to every pod reconciled)
	PeakRSS int64   `json:"peakRSS"`
	CPU     float64 `json:"cpuSeconds,omitempty"` // engines: the process's CPU, start to done
	Err     string  `json:"err,omitempty"`
}

func main() {
	role := flag.String("role", "driver", "driver, server, informer or manager")
	pods := flag.Int("pods", 1_000_000, "pods to serve")
	host := flag.String("host", "", "the server's URL (informer, manager)")
	timeout := flag.Duration("timeout", 30*time.Minute, "how long an engine may take to sync")
	profile := flag.String("profile", "", "directory for the engines' CPU profiles (informer.pprof, manager.pprof)")
	memLimit := flag.String("engine-gomemlimit", "", "GOMEMLIMIT of the engine processes (not the server's), e.g. 2800MiB; empty: none")
	flag.Parse()
	var err error
	switch *role {
	case "driver":
		err = drive(*pods, *timeout, *profile, *memLimit)
	case "server":
		err = serve(*pods)
	case "informer", "manager":
		err = runEngine(*role, *host, *pods, *timeout, *profile)
	default:
		err = fmt.Errorf("unknown -role %q", *role)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "million:", err)
		os.Exit(1)
	}
}

// drive starts the server, then each engine after the other, and prints
// their results.
func drive(n int, timeout time.Duration, profile, memLimit string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	srv, out, err := start(nil, exe, "-role=server", fmt.Sprint("-pods=", n))
	if err != nil {
		return err
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	var sr result
	if err := readResult(out, &sr); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	fmt.Printf("server:   %d pods loaded in %.1f s, peak RSS %s (one protobuf message per pod)\n",
		sr.Pods, sr.Seconds, mib(sr.PeakRSS))
	for _, role := range []string{"informer", "manager"} {
		var env []string
		if memLimit != "" {
			env = append(os.Environ(), "GOMEMLIMIT="+memLimit)
		}
		cmd, out, err := start(env, exe, "-role="+role, "-host="+sr.URL, fmt.Sprint("-pods=", n),
			fmt.Sprint("-timeout=", timeout), "-profile="+profile)
		if err != nil {
			return err
		}
		var r result
		rerr := readResult(out, &r)
		werr := cmd.Wait()
		if err := errors.Join(rerr, werr); err != nil {
			return fmt.Errorf("%s: %w", role, err)
		}
		what := "start to synced"
		if role == "manager" {
			what = "start to every pod reconciled"
		}
		fmt.Printf("%-9s %d pods, %s %.1f s, peak RSS %s, CPU %.1f s\n", role+":", r.Pods, what, r.Seconds,
			mib(r.PeakRSS), r.CPU)
	}
	return nil
}

func mib(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }

// start runs exe with args, its standard error passed through, in env
// (nil: this process's).
func start(env []string, exe string, args ...string) (*exec.Cmd, io.Reader, error) {
	cmd := exec.Command(exe, args...)
	cmd.Env = env
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	return cmd, out, cmd.Start()
}

// readResult reads the one line of JSON a role prints.
func readResult(out io.Reader, r *result) error {
	sc := bufio.NewScanner(out)
	if !sc.Scan() {
		return fmt.Errorf("no result: %w", errors.Join(sc.Err(), io.ErrUnexpectedEOF))
	}
	if err := json.Unmarshal(sc.Bytes(), r); err != nil {
		return fmt.Errorf("bad result %q: %w", sc.Text(), err)
	}
	if r.Err != "" {
		return errors.New(r.Err)
	}
	return nil
}

func printResult(r result) {
	b, _ := json.Marshal(r)
	fmt.Println(string(b))
}

// batch is how many pods the simulator renders at a time.
const batch = 5000

// serve loads n pods into a protobuf front and serves it until killed.
func serve(n int) error {
	t0 := time.Now()
	// The load's garbage (each batch's simulator and JSON) would double the
	// heap at the default GOGC: the server's peak is not what is measured,
	// but it must fit beside the engine.
	defer debug.SetGCPercent(debug.SetGCPercent(25))
	descs := harness.MakePods(n)
	f := protofront.New(10_000)
	var err error
	loadErr := f.LoadPods(func(yield func(*corev1.Pod) bool) {
		for from := 0; from < n; from += batch {
			var pods []*corev1.Pod
			if pods, err = render(descs[from:min(from+batch, n)], from); err != nil {
				return
			}
			for _, p := range pods {
				if !yield(p) {
					return
				}
			}
		}
	})
	if err = errors.Join(err, loadErr); err != nil {
		return err
	}
	descs = nil
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	printResult(result{Role: "server", URL: "http://" + ln.Addr().String(), Pods: n,
		Seconds: time.Since(t0).Seconds(), PeakRSS: engine.PeakRSS()})
	hs := &http.Server{Handler: f.Handler(), ReadHeaderTimeout: 30 * time.Second}
	return hs.Serve(ln)
}

// render has a fresh simulator render descs as JSON and decodes them; the
// i-th gets a uid derived from from+i, unique across batches.
func render(descs []sim.Pod, from int) ([]*corev1.Pod, error) {
	srv, err := sim.New(sim.Options{HistorySize: 1})
	if err != nil {
		return nil, err
	}
	for _, d := range descs {
		if _, err := srv.PutPod(d); err != nil {
			return nil, err
		}
	}
	_, objs, err := srv.Snapshot("pods")
	if err != nil {
		return nil, err
	}
	if len(objs) != len(descs) {
		return nil, fmt.Errorf("the simulator holds %d of a batch of %d pods", len(objs), len(descs))
	}
	pods := make([]*corev1.Pod, 0, len(objs))
	for k, o := range objs {
		p := new(corev1.Pod)
		if err := json.Unmarshal(o.JSON, p); err != nil {
			return nil, fmt.Errorf("pod %s: %w", k, err)
		}
		p.UID = types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", from+len(pods)))
		pods = append(pods, p)
	}
	return pods, nil
}

// runEngine runs the informer or the manager against host until every pod
// is in (informer: synced; manager: every pod reconciled once) and prints
// the time and the peak RSS.
func runEngine(role, host string, n int, timeout time.Duration, profile string) error {
	if profile != "" {
		stop, err := startProfile(profile, role)
		if err != nil {
			return err
		}
		defer stop()
	}
	c, err := kube.NewClient(&kube.Config{Host: host, RateLimit: kube.RateLimitConfig{QPS: -1}})
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	t0 := time.Now()
	var got int
	switch role {
	case "informer":
		got, err = runInformer(ctx, c, log)
	default:
		got, err = runManager(ctx, c, log, n)
	}
	r := result{Role: role, Pods: got, Seconds: time.Since(t0).Seconds(), PeakRSS: engine.PeakRSS(),
		CPU: engine.CPUTime().Seconds()}
	if err == nil && got != n {
		err = fmt.Errorf("%d pods, want %d", got, n)
	}
	if err != nil {
		r.Err = err.Error()
	}
	printResult(r)
	return nil
}

func runInformer(ctx context.Context, c *kube.Client, log *slog.Logger) (int, error) {
	inf, err := informer.New(informer.Options[*corev1.Pod]{Client: c, Resource: kube.Pods, Logger: log})
	if err != nil {
		return 0, err
	}
	ctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- inf.Run(ctx) }()
	synced := inf.WaitForSync(ctx)
	got := inf.Store().Len()
	stop()
	if err := <-done; err != nil {
		return got, err
	}
	if !synced {
		return got, errors.New("informer did not sync in time")
	}
	return got, nil
}

// runManager runs a manager with one controller For pods whose reconcile
// reads its pod from the cache, until it has reconciled n times: once per
// pod, since the server's pods do not change.
func runManager(ctx context.Context, c *kube.Client, log *slog.Logger, n int) (int, error) {
	mgr, err := controller.NewManager(c, controller.ManagerOptions{Logger: log})
	if err != nil {
		return 0, err
	}
	pods, err := controller.Cache(mgr, kube.Typed[*corev1.Pod](kube.Pods))
	if err != nil {
		return 0, err
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var reconciled atomic.Int64
	all := make(chan struct{})
	_, err = controller.New(mgr, controller.Config[*corev1.Pod]{Name: "million", For: kube.Typed[*corev1.Pod](kube.Pods),
		Reconcile: func(ctx context.Context, key controller.Key) (controller.Result, error) {
			if _, ok, err := pods.Get(ctx, key); err != nil || !ok {
				return controller.Result{}, err
			}
			if reconciled.Add(1) == int64(n) {
				close(all)
			}
			return controller.Result{}, nil
		}})
	if err != nil {
		return 0, err
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Run(ctx) }()
	select {
	case <-all:
	case <-ctx.Done():
	}
	timedOut := ctx.Err() != nil
	stop()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		return int(reconciled.Load()), err
	}
	if timedOut {
		return int(reconciled.Load()), errors.New("the manager did not reconcile every pod in time")
	}
	return int(reconciled.Load()), nil
}

// startProfile writes a CPU profile of the process to dir/role.pprof until
// the returned func is called.
func startProfile(dir, role string) (func(), error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return engine.StartCPUProfile(filepath.Join(dir, role+".pprof"))
}
