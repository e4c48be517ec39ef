package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseGetArgs(t *testing.T) {
	base := getOptions{requests: []request{{resource: "pods", names: []string{}}}, watch: true, requestTimeout: defaultRequestTimeout,
		allowMissing: true, chunkSize: defaultChunkSize,
		simPods: defaultSimPods, simNamespaces: defaultSimNamespaces, simRate: defaultSimRate}
	with := func(f func(o *getOptions)) getOptions {
		o := base
		o.requests = []request{{resource: "pods", names: []string{}}}
		f(&o)
		return o
	}
	tests := []struct {
		args []string
		want getOptions
	}{
		{[]string{"pods"}, base},
		{[]string{"pods", "-n", "demo"}, with(func(o *getOptions) { o.namespace = "demo" })},
		{[]string{"-n", "demo", "pods"}, with(func(o *getOptions) { o.namespace = "demo" })},
		{[]string{"pods", "--namespace=demo"}, with(func(o *getOptions) { o.namespace = "demo" })},
		{[]string{"pods", "--namespace", "demo"}, with(func(o *getOptions) { o.namespace = "demo" })},
		{[]string{"pods", "-ndemo"}, with(func(o *getOptions) { o.namespace = "demo" })},
		{[]string{"pods", "-A", "-owide"}, with(func(o *getOptions) { o.allNamespaces, o.output, o.format = true, "wide", formatWide })},
		{[]string{"pods", "-Aw"}, with(func(o *getOptions) { o.allNamespaces = true })},
		{[]string{"pods", "-o=json", "--output-watch-events"}, with(func(o *getOptions) { o.output, o.format, o.watchEvents = "json", formatJSON, true })},
		{[]string{"pods", "--watch=false"}, with(func(o *getOptions) { o.watch = false })},
		{[]string{"pods", "-w=false"}, with(func(o *getOptions) { o.watch = false })},
		{[]string{"pods", "-l", "app=web,tier!=db"}, with(func(o *getOptions) { o.selector = "app=web,tier!=db" })},
		{[]string{"pods", "-l", "-weird"}, with(func(o *getOptions) { o.selector = "-weird" })},
		{[]string{"pods", "--field-selector", "status.phase=Running"}, with(func(o *getOptions) { o.fieldSelector = "status.phase=Running" })},
		{[]string{"pods", "--", "-dash-name"}, with(func(o *getOptions) { o.requests[0].names = []string{"-dash-name"} })},
		{[]string{"pod/web-1", "pod/web-2", "deploy/api", "--watch=false"}, with(func(o *getOptions) {
			o.watch = false
			o.requests = []request{{resource: "pod", names: []string{"web-1", "web-2"}}, {resource: "deploy", names: []string{"api"}}}
		})},
		{[]string{"pods,svc", "--watch=false"}, with(func(o *getOptions) {
			o.watch = false
			o.requests = []request{{resource: "pods", names: []string{}}, {resource: "svc", names: []string{}}}
		})},
		{[]string{"pods", "--request-timeout", "3"}, with(func(o *getOptions) { o.requestTimeout, o.requestTimeoutSet = 3*time.Second, true })},
		{[]string{"pods", "--request-timeout=0"}, with(func(o *getOptions) { o.requestTimeout, o.requestTimeoutSet = 0, true })},
		{[]string{"pods", "--request-timeout", "1m"}, with(func(o *getOptions) { o.requestTimeout, o.requestTimeoutSet = time.Minute, true })},
		{[]string{"pods", "-v=6", "--chunk-size", "50"}, with(func(o *getOptions) { o.verbosity, o.chunkSize, o.chunkSizeSet = 6, 50, true })},
		{[]string{"pods", "--verbose"}, with(func(o *getOptions) { o.verbosity, o.verbose = 4, true })},
		{[]string{"pods", "--v", "7", "--verbose"}, with(func(o *getOptions) { o.verbosity, o.verbose = 7, true })},
		{[]string{"pods", "--watch-only", "-L", "app,tier", "--show-labels", "--show-kind", "--ignore-not-found"}, with(func(o *getOptions) {
			o.watchOnly, o.labelColumns, o.showLabels, o.showKind, o.ignoreNotFound = true, []string{"app", "tier"}, true, true, true
		})},
		{[]string{"pods", "--watch=false", "-o", "jsonpath={.items[*].metadata.name}", "--sort-by", ".metadata.name"}, with(func(o *getOptions) {
			o.watch, o.output, o.format, o.template, o.sortBy = false, "jsonpath={.items[*].metadata.name}", formatJSONPath, "{.items[*].metadata.name}", ".metadata.name"
		})},
		{[]string{"deploy", "-s", "https://h:6443", "--token", "t", "--certificate-authority", "ca.pem",
			"--client-certificate=c.pem", "--client-key", "k.pem", "--context", "prod", "--kubeconfig", "kc"},
			with(func(o *getOptions) {
				o.requests[0].resource = "deploy"
				o.conn = connFlags{server: "https://h:6443", token: "t", caFile: "ca.pem", certFile: "c.pem", keyFile: "k.pem",
					context: "prod", kubeconfig: "kc"}
			})},
		{[]string{"pods", "--insecure-skip-tls-verify", "--request-timeout=5s", "--metrics-addr", ":9090", "-v", "4", "--no-headers"},
			with(func(o *getOptions) {
				o.conn.insecure, o.requestTimeout, o.requestTimeoutSet, o.metricsAddr, o.verbosity, o.noHeaders = true, 5*time.Second, true, ":9090", 4, true
			})},
		{[]string{"pods", "--sim", "--sim-pods", "10", "--sim-rate=0.5", "--sim-namespaces", "2"},
			with(func(o *getOptions) { o.sim, o.simPods, o.simRate, o.simNamespaces = true, 10, 0.5, 2 })},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			got, err := parseGetArgs(tt.args, &env{stdout: &bytes.Buffer{}})
			require.NoError(t, err)
			for i := range got.requests { // nil and empty name lists are the same
				if got.requests[i].names == nil {
					got.requests[i].names = []string{}
				}
			}
			require.Equal(t, tt.want, *got, "got %+v\nwant %+v", *got, tt.want)
		})
	}
}

func TestRunInProcess(t *testing.T) {
	tests := []struct {
		args       []string
		code       int
		stdout     string // a substring
		stderrLine string // a substring of the one stderr line
	}{
		{[]string{"--version"}, exitOK, "kwatch ", ""},
		{[]string{}, exitOK, "Usage:", ""},
		{[]string{"pods", "--bogus"}, exitUsage, "", "kwatch: unknown flag --bogus"},
		{[]string{"pods", "-Aq"}, exitUsage, "", "unknown flag -q"},
		{[]string{"sim", "--pods", "-1"}, exitUsage, "", "--pods"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), tt.args, &out, &errb)
			require.Equal(t, tt.code, code, "stderr: %s", errb.String())
			require.Contains(t, out.String(), tt.stdout)
			if tt.stderrLine == "" {
				require.Empty(t, errb.String())
				return
			}
			require.Equal(t, 1, strings.Count(errb.String(), "\n"), "one line: %q", errb.String())
			require.Contains(t, errb.String(), tt.stderrLine)
		})
	}
}
