package main

import (
	"flag"
	"fmt"
	"time"
)

// Defaults of the get command's flags.
const (
	defaultRequestTimeout = 30 * time.Second
	defaultSimPods        = 300
	defaultSimNamespaces  = 5
	defaultSimRate        = 3.0
)

// getOptions are the flags and arguments of "kwatch [get] RESOURCE [NAME]".
type getOptions struct {
	resource string // as typed: "pods", "deploy", "Deployment"
	name     string // optional object name

	watch         bool
	namespace     string
	allNamespaces bool
	selector      string
	fieldSelector string
	output        string // "", "wide", "json", "yaml", "name"
	watchEvents   bool
	noHeaders     bool

	conn connFlags

	requestTimeout time.Duration
	metricsAddr    string
	verbose        bool

	sim           bool
	simPods       int
	simNamespaces int
	simRate       float64
}

// connFlags say how to reach the cluster, kubectl's names and meanings.
type connFlags struct {
	kubeconfig, context, server, token string
	caFile, certFile, keyFile          string
	insecure                           bool
}

func getFlagSet(o *getOptions, help *bool) *flagSet {
	f := newFlagSet("get")
	f.boolVar(&o.watch, "w", "watch", true, "after listing, watch for changes (--watch=false lists once)")
	f.stringVar(&o.namespace, "n", "namespace", "", "namespace (default: the kubeconfig context's)")
	f.boolVar(&o.allNamespaces, "A", "all-namespaces", false, "every namespace")
	f.stringVar(&o.selector, "l", "selector", "", "label selector, e.g. app=web,tier!=db")
	f.stringVar(&o.fieldSelector, "", "field-selector", "", "field selector, e.g. status.phase=Running")
	f.stringVar(&o.output, "o", "output", "", "output format: wide, json, yaml or name")
	f.boolVar(&o.watchEvents, "", "output-watch-events", false, `print each change as a watch event {"type": ..., "object": ...}`)
	f.boolVar(&o.noHeaders, "", "no-headers", false, "omit the table header")
	f.stringVar(&o.conn.kubeconfig, "", "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)")
	f.stringVar(&o.conn.context, "", "context", "", "kubeconfig context to use")
	f.stringVar(&o.conn.server, "s", "server", "", "API server URL, overriding the kubeconfig")
	f.stringVar(&o.conn.token, "", "token", "", "bearer token")
	f.stringVar(&o.conn.caFile, "", "certificate-authority", "", "CA certificate file to trust")
	f.stringVar(&o.conn.certFile, "", "client-certificate", "", "client certificate file")
	f.stringVar(&o.conn.keyFile, "", "client-key", "", "client key file")
	f.boolVar(&o.conn.insecure, "", "insecure-skip-tls-verify", false, "do not verify the server's certificate (insecure)")
	f.durationVar(&o.requestTimeout, "request-timeout", defaultRequestTimeout,
		"how long to wait for the server before the first sync")
	f.stringVar(&o.metricsAddr, "", "metrics-addr", "", "serve /metrics, /healthz and /readyz on this address, e.g. 127.0.0.1:9090")
	f.boolVar(&o.verbose, "v", "verbose", false, "log the informer's reconnects and retries on stderr")
	f.boolVar(&o.sim, "", "sim", false, "run against a built-in simulated cluster (all namespaces unless -n)")
	f.intVar(&o.simPods, "sim-pods", defaultSimPods, "pods in the simulated cluster")
	f.intVar(&o.simNamespaces, "sim-namespaces", defaultSimNamespaces, "namespaces the simulated pods spread over")
	f.floatVar(&o.simRate, "sim-rate", defaultSimRate, "simulated changes per second")
	f.boolVar(help, "h", "help", false, "show this help")
	return f
}

// parseGetArgs parses the get command's arguments.
func parseGetArgs(args []string, e *env) (*getOptions, error) {
	o := &getOptions{}
	var help bool
	f := getFlagSet(o, &help)
	pos, err := f.parse(args)
	if err != nil {
		return nil, err
	}
	if help {
		fmt.Fprint(e.stdout, getHelpHead+f.helpText())
		return nil, flag.ErrHelp
	}
	return o, o.validate(pos)
}

func (o *getOptions) validate(pos []string) error {
	if len(pos) > 1 && pos[0] == "get" { // "kwatch -A get pods": flags came first
		pos = pos[1:]
	}
	switch len(pos) {
	case 0:
		return usagef("name a resource to watch, e.g. \"kwatch pods\" (see kwatch --help)")
	case 1:
		o.resource = pos[0]
	case 2:
		o.resource, o.name = pos[0], pos[1]
	default:
		return usagef("too many arguments %q: expected RESOURCE [NAME]", pos)
	}
	switch o.output {
	case "", "wide", "json", "yaml", "name":
	default:
		return usagef("unknown output format %q: use wide, json, yaml or name", o.output)
	}
	switch {
	case o.allNamespaces && o.namespace != "":
		return usagef("--namespace and --all-namespaces exclude each other")
	case o.requestTimeout <= 0:
		return usagef("--request-timeout must be positive, got %s", o.requestTimeout)
	case o.sim && (o.conn != connFlags{}):
		return usagef("--sim runs its own cluster: it takes no --kubeconfig, --context, --server or credentials")
	case o.simPods < 0 || o.simNamespaces < 1 || o.simRate < 0:
		return usagef("--sim-pods must be >= 0, --sim-namespaces >= 1 and --sim-rate >= 0")
	}
	return nil
}

const getHelpHead = `List RESOURCE, then watch it and print every change until interrupted.

Usage:
  kwatch [get] RESOURCE [NAME] [flags]

RESOURCE is a plural, singular, short name or kind (pods, pod, po, Pod,
deploy, deployments.apps). Pods print kubectl's pod table; other resources
NAME and AGE. While watching, an EVENT column (ADDED, MODIFIED, DELETED)
comes first. Flags may come before or after RESOURCE.

Examples:
  kwatch pods
  kwatch pods -A -o wide
  kwatch get deploy -n kube-system
  kwatch pods -l app=web --field-selector status.phase=Running
  kwatch pods -o json --output-watch-events
  kwatch pods --watch=false -o yaml
  kwatch pods --sim --sim-pods 2000 --sim-rate 20

Flags:
`
