// Command widgets serves the example's webhooks (package widgets) from a
// kwatch manager. By default it installs the CRD and the webhook
// configurations pointing at -url, and serves with a self-signed
// certificate whose CA it writes into them (development); with -cert-dir
// it serves a mounted certificate (tls.crt, tls.key) and installs nothing.
// With -sim it runs against a simulated cluster served in the process.
//
//	go run ./examples/webhook/cmd/widgets -sim
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/kwatch/kwatch/controller"
	widgets "github.com/kwatch/kwatch/examples/webhook"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/kwatchtest"
	"github.com/kwatch/kwatch/metrics"
	"github.com/kwatch/kwatch/webhook"
)

type flags struct {
	addr, url, certDir, probes string
	sim                        bool
}

func main() {
	var f flags
	flag.StringVar(&f.addr, "addr", "127.0.0.1:9443", "address the webhooks are served on")
	flag.StringVar(&f.url, "url", "", "base URL the API server calls; https://<addr> when empty")
	flag.StringVar(&f.certDir, "cert-dir", "", "directory of tls.crt and tls.key; empty for a self-signed certificate and the objects installed")
	flag.StringVar(&f.probes, "probes", "127.0.0.1:8081", "address of /healthz, /readyz and /metrics; empty for none")
	flag.BoolVar(&f.sim, "sim", false, "run against a simulated cluster served in the process")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, f); err != nil {
		fmt.Fprintln(os.Stderr, "widgets:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, f flags) error {
	cfg, closeSim, err := config(f.sim)
	if err != nil {
		return err
	}
	defer closeSim()
	c, err := kube.NewClient(cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return err
	}
	opts := webhook.Options{Listener: ln, CertDir: f.certDir, Metrics: metrics.NewSet()}
	if f.certDir == "" {
		base := f.url
		if base == "" {
			base = "https://" + ln.Addr().String()
		}
		if err := widgets.Install(ctx, c, base, nil); err != nil {
			return err
		}
		host, _, _ := net.SplitHostPort(ln.Addr().String())
		opts.SelfSigned = &webhook.SelfSigned{Client: c, Hosts: []string{host, "localhost"},
			MutatingWebhookConfigurations: []string{widgets.MutatingName}, ValidatingWebhookConfigurations: []string{widgets.ValidatingName},
			CustomResourceDefinitions: []string{widgets.CRDName}}
	}
	wh, err := webhook.New(opts)
	if err != nil {
		return err
	}
	if err := widgets.Setup(wh); err != nil {
		return err
	}
	mgr, err := controller.NewManager(c, controller.ManagerOptions{Webhook: wh, Metrics: opts.Metrics, Logger: slog.Default()})
	if err != nil {
		return err
	}
	if f.probes != "" {
		probes := &http.Server{Addr: f.probes, Handler: mgr.Handler()}
		go func() { _ = probes.ListenAndServe() }()
		defer probes.Close()
	}
	if err := mgr.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// config is the kubeconfig's cluster, or a simulated one with its Close.
func config(useSim bool) (*kube.Config, func(), error) {
	if !useSim {
		cfg, err := kube.DefaultConfig(kube.KubeconfigOptions{})
		return cfg, func() {}, err
	}
	srv, err := kwatchtest.Serve(context.Background(), kwatchtest.Options{})
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintln(os.Stderr, "simulated cluster at", srv.URL())
	return srv.Config(), func() { _ = srv.Close() }, nil
}
