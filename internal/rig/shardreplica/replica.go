// Package shardreplica runs one replica of a sharded ConfigMap
// controller as an OS process, and reads what a set of them did: the
// multi-process sharding tests (package controller's and the
// conformance suite's) start their test binary again with Env set, kill
// replicas with SIGKILL, and check the timeline the replicas print.
//
// A replica prints one line per event, each stamped with the machine's
// real-time clock (the clock the test reads too):
//
//	start <unix ns> <key>     a reconcile of key began (after the ring allowed it)
//	end <unix ns> <key>       it returned
//	ring <unix ns> <members> <settled>   the replica's view changed
//	exit <unix ns> <error>    Run returned
package shardreplica

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/leader"
	"github.com/kwatch/kwatch/shard"
)

// Env, set to "1", makes a test binary run a replica instead of its
// tests; Env+"_HOST", "_TOKEN", "_CA" (base64 PEM), "_NS", "_RING",
// "_ID", "_TIMING" (lease, renew deadline, retry period, each a Go
// duration, comma-separated) and "_MODE" ("filter" or "label")
// configure it.
const Env = "KWATCH_SHARD_REPLICA"

// Timing is a ring's lease duration, renew deadline and retry period.
type Timing struct {
	Lease, Renew, Retry time.Duration
}

func (t Timing) String() string { return fmt.Sprintf("%v,%v,%v", t.Lease, t.Renew, t.Retry) }

// Options are what a replica process is started with.
type Options struct {
	Config   *kube.Config
	NS, Ring string
	ID       string
	Timing   Timing
	Mode     shard.Mode
	// DecodeOnly makes the replica decode whole ConfigMaps (data
	// included) and reconcile without a request, so its CPU is mostly
	// receiving and decoding watch events: for measuring decode work.
	DecodeOnly bool
}

// Environ is the environment that starts a replica with o.
func (o Options) Environ() []string {
	return []string{Env + "=1", Env + "_HOST=" + o.Config.Host, Env + "_TOKEN=" + o.Config.Auth.BearerToken,
		Env + "_CA=" + base64.StdEncoding.EncodeToString(o.Config.TLS.CAData),
		Env + "_NS=" + o.NS, Env + "_RING=" + o.Ring, Env + "_ID=" + o.ID, Env + "_TIMING=" + o.Timing.String(),
		Env + "_MODE=" + o.Mode.String(), Env + "_DECODE_ONLY=" + strconv.FormatBool(o.DecodeOnly)}
}

// MaybeRun runs a replica and exits when Env is "1"; otherwise it
// returns at once. Call it from an init function of a test binary.
func MaybeRun() {
	if os.Getenv(Env) == "1" {
		os.Exit(runFromEnv())
	}
}

func runFromEnv() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	o, err := optionsFromEnv()
	if err != nil {
		fmt.Println("exit", time.Now().UnixNano(), err)
		return 2
	}
	err = Run(ctx, o, os.Stdout)
	fmt.Println("exit", time.Now().UnixNano(), err)
	return 0
}

func optionsFromEnv() (Options, error) {
	get := func(k string) string { return os.Getenv(Env + "_" + k) }
	ca, err := base64.StdEncoding.DecodeString(get("CA"))
	if err != nil {
		return Options{}, fmt.Errorf("bad CA: %w", err)
	}
	cfg := &kube.Config{Host: get("HOST"), Auth: kube.AuthConfig{BearerToken: get("TOKEN")}}
	if len(ca) > 0 {
		cfg.TLS.CAData = ca
	}
	var tm [3]time.Duration
	parts := strings.Split(get("TIMING"), ",")
	if len(parts) != 3 {
		return Options{}, fmt.Errorf("bad timing %q", get("TIMING"))
	}
	for i, p := range parts {
		if tm[i], err = time.ParseDuration(p); err != nil {
			return Options{}, fmt.Errorf("bad timing %q: %w", p, err)
		}
	}
	mode := shard.Filter
	if get("MODE") == shard.Label.String() {
		mode = shard.Label
	}
	return Options{Config: cfg, NS: get("NS"), Ring: get("RING"), ID: get("ID"),
		Timing: Timing{Lease: tm[0], Renew: tm[1], Retry: tm[2]}, Mode: mode,
		DecodeOnly: get("DECODE_ONLY") == "true"}, nil
}

// cm is the ConfigMap as the replica reads it: metadata only.
type cm struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
}

// fullCM is the whole ConfigMap, data decoded.
type fullCM struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Data              map[string]string `json:"data,omitempty"`
}

// Run runs the replica until ctx ends, printing its timeline to out.
func Run(ctx context.Context, o Options, out io.Writer) error {
	cfg := *o.Config
	cfg.RateLimit.QPS = -1 // the test's load, not the client, paces the reconciles
	c, err := kube.NewClient(&cfg)
	if err != nil {
		return err
	}
	// The ring gets a client of its own: renews must not queue behind the
	// reconciles' requests in one token bucket.
	sc, err := kube.NewClient(o.Config)
	if err != nil {
		return err
	}
	var mu sync.Mutex // lines are whole
	say := func(word, rest string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, "%s %d %s\n", word, time.Now().UnixNano(), rest)
	}
	mgr, err := controller.NewManager(c, controller.ManagerOptions{Namespace: o.NS,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		// Below lease - renew deadline, the margin of the fence.
		ShutdownTimeout: (o.Timing.Lease - o.Timing.Renew) / 2,
		Sharding: &shard.Config{Client: sc, Namespace: o.NS, Ring: o.Ring, Identity: o.ID,
			Timing: leader.Timing{LeaseDuration: o.Timing.Lease, RenewDeadline: o.Timing.Renew, RetryPeriod: o.Timing.Retry}, Mode: o.Mode}})
	if err != nil {
		return err
	}
	if o.DecodeOnly {
		err = addDecodeOnly(mgr, say)
	} else {
		err = addWithGet(mgr, c, say)
	}
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	wg.Go(func() { reportRing(ctx, mgr.Shard(), say) })
	err = mgr.Run(ctx)
	wg.Wait()
	return err
}

// reportRing prints the member's view whenever it changes, polled every
// 50 ms.
func reportRing(ctx context.Context, m *shard.Member, say func(word, rest string)) {
	tk := time.NewTicker(50 * time.Millisecond)
	defer tk.Stop()
	last := ""
	for {
		select {
		case <-ctx.Done():
			return
		case <-tk.C:
		}
		st := m.Status()
		line := strings.Join(st.Members, ",") + " " + strconv.FormatBool(st.Settled != "" && st.Settled == st.Target)
		if line != last {
			say("ring", line)
			last = line
		}
	}
}

// addWithGet adds the controller whose reconcile is one GET of its
// ConfigMap, metadata only.
func addWithGet(mgr *controller.Manager, c *kube.Client, say func(word, rest string)) error {
	cms := client.For(c, kube.Typed[*cm](kube.ConfigMaps), client.Options{})
	_, err := controller.New(mgr, controller.Config[*cm]{Name: "sharded-configmaps", For: kube.Typed[*cm](kube.ConfigMaps), Workers: 4,
		Reconcile: func(ctx context.Context, key controller.Key) (controller.Result, error) {
			say("start", key.String())
			defer say("end", key.String())
			_, err := cms.Get(ctx, key.Namespace, key.Name, client.GetOptions{}) // a round trip of work
			if kube.IsNotFound(err) {
				return controller.Result{}, nil
			}
			return controller.Result{}, err
		}})
	return err
}

// addDecodeOnly adds the controller that decodes whole ConfigMaps and
// does no work per reconcile.
func addDecodeOnly(mgr *controller.Manager, say func(word, rest string)) error {
	_, err := controller.New(mgr, controller.Config[*fullCM]{Name: "sharded-configmaps", For: kube.Typed[*fullCM](kube.ConfigMaps), Workers: 4,
		Reconcile: func(ctx context.Context, key controller.Key) (controller.Result, error) {
			say("start", key.String())
			say("end", key.String())
			return controller.Result{}, nil
		}})
	return err
}
