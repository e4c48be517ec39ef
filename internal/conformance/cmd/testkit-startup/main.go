// Command testkit-startup compares the start-up of kwatch's test kit
// (package kwatchtest, in the process) with envtest's way, real etcd and
// kube-apiserver binaries (built and cached by the conformance harness), side
// by side in one run: the time to a ready server (/readyz answers 200) and to a
// first synced client-go informer (pods, all namespaces) on it. Each run starts
// a fresh server of each kind, one after the other; the table gives every run
// and the medians. Both servers serve TLS; the informer is the same code.
//
//	go run ./cmd/testkit-startup -runs 5 -o ../bench/results/testkit.md
package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kwatch/kwatch/internal/conformance/harness"
	"github.com/kwatch/kwatch/kwatchtest"
)

// startup is one measured start: to a ready server, to a synced informer.
type startup struct{ ready, synced time.Duration }

func main() {
	runs := flag.Int("runs", 5, "fresh starts of each server")
	out := flag.String("o", "", "write the Markdown report here (default: standard output)")
	flag.Parse()
	if err := run(*runs, *out); err != nil {
		fmt.Fprintln(os.Stderr, "testkit-startup:", err)
		os.Exit(1)
	}
}

func run(runs int, out string) error {
	ctx := context.Background()
	opts := harness.BuildOptions{SourceDir: "build", Log: os.Stderr}
	bin, ok := harness.CachedBinaries(opts)
	if !ok {
		fmt.Fprintln(os.Stderr, "testkit-startup: building etcd and kube-apiserver (first time: about 15 min on 2 cores)")
		var err error
		if bin, err = harness.EnsureBinaries(ctx, opts); err != nil {
			return err
		}
	}
	var kitRuns, realRuns []startup
	for i := range runs {
		k, err := startKit()
		if err != nil {
			return fmt.Errorf("kit, run %d: %w", i+1, err)
		}
		r, err := startReal(ctx, bin)
		if err != nil {
			return fmt.Errorf("real, run %d: %w", i+1, err)
		}
		fmt.Fprintf(os.Stderr, "run %d: kit ready %v synced %v; real ready %v synced %v\n", i+1, k.ready, k.synced, r.ready, r.synced)
		kitRuns, realRuns = append(kitRuns, k), append(realRuns, r)
	}
	report := render(kitRuns, realRuns)
	if out == "" {
		_, err := os.Stdout.WriteString(report)
		return err
	}
	return os.WriteFile(out, []byte(report), 0o644)
}

// startKit starts the kit over TLS, as a test would.
func startKit() (startup, error) {
	start := time.Now()
	srv, err := kwatchtest.Serve(context.Background(), kwatchtest.Options{TLS: true})
	if err != nil {
		return startup{}, err
	}
	defer srv.Close()
	cfg := &rest.Config{Host: srv.URL(), TLSClientConfig: rest.TLSClientConfig{CAData: srv.CACertPEM()}}
	return measure(start, cfg)
}

// startReal starts etcd and one kube-apiserver, as envtest does.
func startReal(ctx context.Context, bin harness.Binaries) (startup, error) {
	dir, err := os.MkdirTemp("", "testkit-startup-")
	if err != nil {
		return startup{}, err
	}
	defer os.RemoveAll(dir)
	pki, err := harness.NewPKI(dir) // before the clock: envtest's certificates are made by the test too, but cheaply
	if err != nil {
		return startup{}, err
	}
	token := randomToken()
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(token+",admin,1,\"system:masters\"\n"), 0o600); err != nil {
		return startup{}, err
	}
	start := time.Now()
	etcd, err := harness.StartEtcd(ctx, bin.Etcd, dir)
	if err != nil {
		return startup{}, err
	}
	defer etcd.Stop()
	api, err := harness.StartAPIServer(ctx, harness.APIServerSpec{Bin: bin.APIServer, Dir: dir, Name: "startup",
		EtcdURL: etcd.ClientURL, PKI: pki, TokenFile: tokens, AdminToken: token, WatchCache: true})
	if err != nil {
		return startup{}, err
	}
	defer api.Stop()
	cfg := &rest.Config{Host: api.URL, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: pki.CAPEM}}
	return measure(start, cfg)
}

// measure waits for /readyz, then for a pod informer's first sync, and
// returns both times since start.
func measure(start time.Time, cfg *rest.Config) (startup, error) {
	var s startup
	if err := waitReady(cfg, 4*time.Minute); err != nil {
		return s, err
	}
	s.ready = time.Since(start)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return s, err
	}
	factory := informers.NewSharedInformerFactory(cs, 0)
	inf := factory.Core().V1().Pods().Informer()
	stop := make(chan struct{})
	defer func() { close(stop); factory.Shutdown() }()
	factory.Start(stop)
	// HasSynced is polled every millisecond: cache.WaitForCacheSync polls
	// every 100 ms, which would be most of the kit's figure.
	deadline := time.Now().Add(4 * time.Minute)
	for !inf.HasSynced() {
		if time.Now().After(deadline) {
			return s, fmt.Errorf("informer did not sync")
		}
		time.Sleep(time.Millisecond)
	}
	s.synced = time.Since(start)
	return s, nil
}

// waitReady polls /readyz every 10 ms until it answers 200.
func waitReady(cfg *rest.Config, limit time.Duration) error {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(cfg.CAData)
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	defer c.CloseIdleConnections()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequest(http.MethodGet, cfg.Host+"/readyz", nil)
		if cfg.BearerToken != "" {
			req.Header.Set("Authorization", "Bearer "+cfg.BearerToken)
		}
		if resp, err := c.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("/readyz not 200 within %v", limit)
}

func randomToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

func render(kit, servers []startup) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Test kit start-up: kwatchtest against real etcd and kube-apiserver\n\n")
	fmt.Fprintf(&b, "`go run ./cmd/testkit-startup` in internal/conformance, %s; etcd %s and kube-apiserver %s built from source by the conformance harness,\n",
		time.Now().UTC().Format("2006-01-02"), harness.EtcdVersion, harness.KubernetesVersion)
	fmt.Fprintf(&b, "%d fresh starts of each, one after the other, on %d CPUs (%s/%s). Both serve TLS. *Ready*: from the start call to\n",
		len(kit), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH)
	b.WriteString("`/readyz` answering 200 (polled every 10 ms); *synced*: to a client-go v0.37.2 pod informer's first sync on the\n")
	b.WriteString("empty cluster (HasSynced polled every millisecond). The real start counts etcd and kube-apiserver (as envtest starts them; their certificates are made\n")
	b.WriteString("before the clock starts); the kit runs in the process. A shared, loaded machine: compare within the run.\n\n")
	b.WriteString("| run | kit ready | kit synced | real ready | real synced |\n|---|---|---|---|---|\n")
	var kr, ks, rr, rs []time.Duration
	for i := range kit {
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s |\n", i+1, ms(kit[i].ready), ms(kit[i].synced), ms(servers[i].ready), ms(servers[i].synced))
		kr, ks = append(kr, kit[i].ready), append(ks, kit[i].synced)
		rr, rs = append(rr, servers[i].ready), append(rs, servers[i].synced)
	}
	fmt.Fprintf(&b, "| median | %s | %s | %s | %s |\n\n", ms(median(kr)), ms(median(ks)), ms(median(rr)), ms(median(rs)))
	fmt.Fprintf(&b, "Medians: the real servers take %.0fx the kit's time to be ready and %.0fx to a synced informer.\n",
		float64(median(rr))/float64(max(median(kr), 1)), float64(median(rs))/float64(max(median(ks), 1)))
	return b.String()
}
