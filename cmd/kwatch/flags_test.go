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
	base := getOptions{resource: "pods", watch: true, requestTimeout: defaultRequestTimeout,
		simPods: defaultSimPods, simNamespaces: defaultSimNamespaces, simRate: defaultSimRate}
	with := func(f func(o *getOptions)) getOptions {
		o := base
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
		{[]string{"pods", "-A", "-owide"}, with(func(o *getOptions) { o.allNamespaces, o.output = true, "wide" })},
		{[]string{"pods", "-Aw"}, with(func(o *getOptions) { o.allNamespaces = true })},
		{[]string{"pods", "-o=json", "--output-watch-events"}, with(func(o *getOptions) { o.output, o.watchEvents = "json", true })},
		{[]string{"pods", "--watch=false"}, with(func(o *getOptions) { o.watch = false })},
		{[]string{"pods", "-w=false"}, with(func(o *getOptions) { o.watch = false })},
		{[]string{"pods", "web-1", "-l", "app=web,tier!=db"}, with(func(o *getOptions) { o.name, o.selector = "web-1", "app=web,tier!=db" })},
		{[]string{"pods", "-l", "-weird"}, with(func(o *getOptions) { o.selector = "-weird" })},
		{[]string{"pods", "--field-selector", "status.phase=Running"}, with(func(o *getOptions) { o.fieldSelector = "status.phase=Running" })},
		{[]string{"pods", "--", "-dash-name"}, with(func(o *getOptions) { o.name = "-dash-name" })},
		{[]string{"deploy", "-s", "https://h:6443", "--token", "t", "--certificate-authority", "ca.pem",
			"--client-certificate=c.pem", "--client-key", "k.pem", "--context", "prod", "--kubeconfig", "kc"},
			with(func(o *getOptions) {
				o.resource = "deploy"
				o.conn = connFlags{server: "https://h:6443", token: "t", caFile: "ca.pem", certFile: "c.pem", keyFile: "k.pem",
					context: "prod", kubeconfig: "kc"}
			})},
		{[]string{"pods", "--insecure-skip-tls-verify", "--request-timeout=5s", "--metrics-addr", ":9090", "-v", "--no-headers"},
			with(func(o *getOptions) {
				o.conn.insecure, o.requestTimeout, o.metricsAddr, o.verbose, o.noHeaders = true, 5*time.Second, ":9090", true, true
			})},
		{[]string{"pods", "--sim", "--sim-pods", "10", "--sim-rate=0.5", "--sim-namespaces", "2"},
			with(func(o *getOptions) { o.sim, o.simPods, o.simRate, o.simNamespaces = true, 10, 0.5, 2 })},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			got, err := parseGetArgs(tt.args, &env{stdout: &bytes.Buffer{}})
			require.NoError(t, err)
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
		{[]string{"pods", "-Aq"}, exitUsage, "", "unknown flag -Aq"},
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
