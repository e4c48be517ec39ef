package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/kwatch/kwatch/cmd/kwatch/internal/printers"
	"github.com/kwatch/kwatch/informer"
)

// Defaults of the get command's flags.
const (
	defaultRequestTimeout = 30 * time.Second
	defaultChunkSize      = 500
	defaultSimPods        = 300
	defaultSimNamespaces  = 5
	defaultSimRate        = 3.0
)

// getOptions are the flags and arguments of "kwatch [get] TYPE [NAME...]".
type getOptions struct {
	// requests are the arguments: one per resource type named, each with
	// the object names asked for (none: every object).
	requests []request
	// resource and names are the request being run, one of requests.
	resource string
	names    []string
	missing  []error // named objects found missing, reported at the end
	// emptyTypes counts the requests whose list was empty, and noneFound
	// is kubectl's line for them: with several types kubectl says it once,
	// and only when every one was empty (runGet).
	emptyTypes int
	noneFound  string
	// shared is the one output of several types printed as one document
	// (newSharedOutput); nil when each prints its own.
	shared *sharedOutput

	watch          bool
	watchOnly      bool
	namespace      string
	allNamespaces  bool
	selector       string
	fieldSelector  string
	output         string // as typed: "", "wide", "json", "jsonpath={.x}", ...
	format         outputFormat
	template       string // the jsonpath or custom-columns spec, files read
	templateFile   bool   // the template came from a -file form
	allowMissing   bool   // --allow-missing-template-keys
	watchEvents    bool
	noHeaders      bool
	sortBy         string
	labelColumns   []string
	showLabels     bool
	showKind       bool
	ignoreNotFound bool
	chunkSize      int64
	diff           bool // --diff: what each MODIFIED change changed
	diffNoise      bool // --diff-noise: also the fields every write changes
	dropManaged    bool // --drop-managed-fields in watch events
	chunkSizeSet   bool // --chunk-size was given: list in pages of it, not as a stream

	conn connFlags

	// requestTimeout bounds the wait for the server before the first sync
	// (and, when set on the command line, each request); 0 is no bound.
	requestTimeout    time.Duration
	requestTimeoutSet bool
	metricsAddr       string
	verbosity         int  // -v: 0 errors only, 2 informer info, 4 debug, 6 requests, 7 headers
	verbose           bool // --verbose, kwatch's older spelling of -v=4

	sim           bool
	simPods       int
	simNamespaces int
	simRate       float64

	live liveOptions // addLiveFlags' flags
}

// request is one resource type of the command line and the names asked
// for ("pods web-1 web-2", "pod/web-1").
type request struct {
	resource string // as typed: "pods", "deploy", "deployments.apps"
	names    []string
}

// outputFormat is -o's kind, its template (if any) aside.
type outputFormat int

const (
	formatTable outputFormat = iota
	formatWide
	formatJSON
	formatYAML
	formatName
	formatJSONPath
	formatCustomColumns
)

// connFlags say how to reach the cluster, kubectl's names and meanings.
type connFlags struct {
	kubeconfig, context, server, token string
	caFile, certFile, keyFile          string
	insecure                           bool
}

// addGetFlags defines the get command's flags on fs, kubectl's names,
// shorthands and defaults.
func addGetFlags(fs *pflag.FlagSet, o *getOptions) {
	fs.BoolVarP(&o.watch, "watch", "w", true, "after listing, watch for changes (--watch=false lists once)")
	fs.BoolVar(&o.watchOnly, "watch-only", false, "watch for changes without printing the initial list")
	fs.StringVarP(&o.namespace, "namespace", "n", "", "namespace (default: the kubeconfig context's)")
	fs.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "every namespace")
	fs.StringVarP(&o.selector, "selector", "l", "", "label selector, e.g. app=web,tier!=db")
	fs.StringVar(&o.fieldSelector, "field-selector", "", "field selector, e.g. status.phase=Running")
	fs.StringVarP(&o.output, "output", "o", "",
		"output format: wide, json, yaml, name, jsonpath=TEMPLATE, jsonpath-file=FILE, custom-columns=SPEC, custom-columns-file=FILE")
	fs.BoolVar(&o.allowMissing, "allow-missing-template-keys", true,
		"with -o jsonpath or custom-columns, print nothing for a missing field instead of failing")
	fs.BoolVar(&o.watchEvents, "output-watch-events", false, `print each change as a watch event: {"type": ..., "object": ...}, or an EVENT column`)
	fs.BoolVar(&o.noHeaders, "no-headers", false, "omit the table header")
	fs.StringVar(&o.sortBy, "sort-by", "", "sort the initial list by this JSONPath, e.g. '{.metadata.name}' or .status.startTime")
	fs.StringSliceVarP(&o.labelColumns, "label-columns", "L", nil, "a column for each of these labels, e.g. -L app,tier")
	fs.BoolVar(&o.showLabels, "show-labels", false, "a LABELS column")
	fs.BoolVar(&o.showKind, "show-kind", false, "name objects as kind/name")
	fs.BoolVar(&o.ignoreNotFound, "ignore-not-found", false, "a named object that does not exist is not an error")
	fs.Int64Var(&o.chunkSize, "chunk-size", defaultChunkSize, "list in pages of this many objects (0: one page)")
	fs.BoolVar(&o.diff, "diff", false,
		"while watching, under each MODIFIED change the fields it changed (spec.replicas: 3 → 5); with -o json|yaml, a JSON patch beside each object")
	fs.BoolVar(&o.diffNoise, "diff-noise", false, "with --diff, also the fields every write changes (resourceVersion, generation, managedFields)")
	fs.BoolVar(&o.dropManaged, "drop-managed-fields", false, "leave metadata.managedFields out of --output-watch-events objects (kubectl keeps them there)")
	fs.StringVar(&o.conn.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)")
	fs.StringVar(&o.conn.context, "context", "", "kubeconfig context to use")
	fs.StringVarP(&o.conn.server, "server", "s", "", "API server address, overriding the kubeconfig (no scheme: http, as kubectl)")
	fs.StringVar(&o.conn.token, "token", "", "bearer token")
	fs.StringVar(&o.conn.caFile, "certificate-authority", "", "CA certificate file to trust")
	fs.StringVar(&o.conn.certFile, "client-certificate", "", "client certificate file")
	fs.StringVar(&o.conn.keyFile, "client-key", "", "client key file")
	fs.BoolVar(&o.conn.insecure, "insecure-skip-tls-verify", false, "do not verify the server's certificate (insecure)")
	o.requestTimeout = defaultRequestTimeout
	fs.Var(timeoutValue{&o.requestTimeout}, "request-timeout",
		"how long to wait for the server before the first sync (given, also each request): 3 (seconds), 1m, 0 for no bound")
	fs.Lookup("request-timeout").DefValue = "30s"
	fs.StringVar(&o.metricsAddr, "metrics-addr", "", "serve /metrics, /healthz and /readyz on this address, e.g. 127.0.0.1:9090")
	fs.IntVarP(&o.verbosity, "v", "v", 0, "log level: 2 informer events, 4 retries and reconnects, 6 requests, 7 request headers")
	fs.BoolVar(&o.verbose, "verbose", false, "the informer's retries and reconnects (-v=4)")
	fs.BoolVar(&o.sim, "sim", false, "run against a built-in simulated cluster (all namespaces unless -n)")
	fs.IntVar(&o.simPods, "sim-pods", defaultSimPods, "pods in the simulated cluster")
	fs.IntVar(&o.simNamespaces, "sim-namespaces", defaultSimNamespaces, "namespaces the simulated pods spread over")
	fs.Float64Var(&o.simRate, "sim-rate", defaultSimRate, "simulated changes per second")
	addLiveFlags(fs, o)
}

// validate checks the flags together and reads the positional arguments:
// TYPE [NAME...], TYPE1,TYPE2 [NAME...] or TYPE/NAME... . changed reports
// whether a flag was set on the command line.
func (o *getOptions) validate(args []string, changed func(string) bool) error {
	reqs, err := parseRequests(args)
	if err != nil {
		return err
	}
	o.requests = reqs
	if err := o.checkNamesAndSelectors(args); err != nil {
		return err
	}
	o.requestTimeoutSet = changed("request-timeout")
	o.chunkSizeSet = changed("chunk-size")
	if o.watchOnly {
		o.watch = true
	}
	if o.verbose {
		o.verbosity = max(o.verbosity, verboseDebug)
	}
	if err := o.readOutput(); err != nil {
		return err
	}
	if err := o.checkTemplates(); err != nil {
		return err
	}
	switch {
	case o.allNamespaces && o.namespace != "":
		return usagef("--namespace and --all-namespaces exclude each other")
	case o.sim && (o.conn != connFlags{}):
		return usagef("--sim runs its own cluster: it takes no --kubeconfig, --context, --server or credentials")
	case o.simPods < 0 || o.simNamespaces < 1 || o.simRate < 0:
		return usagef("--sim-pods must be >= 0, --sim-namespaces >= 1 and --sim-rate >= 0")
	case o.chunkSize < 0:
		return usagef("--chunk-size must be >= 0, got %d", o.chunkSize)
	case o.watch && len(o.requests) > 1:
		return kubectlUsagef("you may only specify a single resource type")
	case o.watch && len(o.requests[0].names) > 1: // kubectl lists them first, then says this
		return kubectlUsagef("you may only watch a single resource or type of resource at a time")
	case o.sortBy != "" && o.watchEvents:
		return usagef("--sort-by sorts a table or list; it cannot sort --output-watch-events")
	case o.diff && !o.watch:
		return usagef("--diff shows what each change changed: it needs a watch (-w), not --watch=false")
	case o.diffNoise && !o.diff:
		return usagef("--diff-noise shows more of --diff: add --diff")
	}
	if o.diff && (o.format == formatJSON || o.format == formatYAML) {
		o.watchEvents = true // the patch goes beside the object, in the event
	}
	return nil
}

// checkNamesAndSelectors refuses names beside -l or --field-selector in
// kubectl's words, which depend on the form the names took: "pods/x" and
// "pods,svc x" are resource/name arguments to kubectl, "pods x" a name.
// kubectl says this before it looks at anything else (-o among them).
func (o *getOptions) checkNamesAndSelectors(args []string) error {
	if o.selector == "" && o.fieldSelector == "" || len(args) < 2 && !strings.Contains(args[0], "/") {
		return nil
	}
	if strings.Contains(args[0], "/") || strings.Contains(args[0], ",") {
		return kubectlUsagef("selectors and the all flag cannot be used when passing resource/name arguments")
	}
	return kubectlUsagef("name cannot be provided when a selector is specified")
}

// parseRequests reads the positional arguments as kubectl does.
func parseRequests(args []string) ([]request, error) {
	if len(args) == 0 {
		return nil, usagef("name a resource to watch, e.g. \"kwatch pods\" (see kwatch help get)")
	}
	if strings.Contains(args[0], "/") {
		var reqs []request
		for _, a := range args {
			typ, name, ok := strings.Cut(a, "/")
			if !ok || typ == "" || name == "" {
				return nil, kubectlUsagef("arguments in resource/name form must have a single resource and name")
			}
			reqs = addName(reqs, typ, name)
		}
		return reqs, nil
	}
	var reqs []request
	for _, typ := range strings.Split(args[0], ",") {
		if typ == "" {
			return nil, usagef("empty resource type in %q", args[0])
		}
		reqs = append(reqs, request{resource: typ, names: args[1:]})
	}
	for _, a := range args[1:] {
		if strings.Contains(a, "/") {
			return nil, usagef("arguments in resource/name form must have a single resource and name (got %q after %q)", a, args[0])
		}
	}
	return reqs, nil
}

// addName adds TYPE/NAME to reqs, grouping names of one type as kubectl
// prints them: in the order the types first appear.
func addName(reqs []request, typ, name string) []request {
	for i := range reqs {
		if reqs[i].resource == typ {
			reqs[i].names = append(reqs[i].names, name)
			return reqs
		}
	}
	return append(reqs, request{resource: typ, names: []string{name}})
}

// readOutput reads -o into a format and, for templates, their text.
func (o *getOptions) readOutput() error {
	kind, arg, _ := strings.Cut(o.output, "=")
	switch kind {
	case "":
		o.format = formatTable
	case "wide":
		o.format = formatWide
	case "json":
		o.format = formatJSON
	case "yaml":
		o.format = formatYAML
	case "name":
		o.format = formatName
	case "jsonpath", "jsonpath-file", "custom-columns", "custom-columns-file":
		o.format = formatJSONPath
		if strings.HasPrefix(kind, "custom-columns") {
			o.format = formatCustomColumns
		}
		text := arg
		if strings.HasSuffix(kind, "-file") {
			b, err := os.ReadFile(arg)
			if err != nil {
				return usagef("-o %s: %v", kind, err)
			}
			text = string(b)
			o.templateFile = true
		}
		if strings.TrimSpace(text) == "" {
			return usagef("-o %s needs a template, e.g. -o %s", kind, exampleTemplate(kind))
		}
		o.template = text
	default:
		return kubectlUsagef("unable to match a printer suitable for the output format %q, allowed formats are: "+
			"custom-columns,custom-columns-file,json,jsonpath,jsonpath-file,name,wide,yaml", o.output)
	}
	return nil
}

func exampleTemplate(kind string) string {
	if strings.HasPrefix(kind, "custom-columns") {
		return "custom-columns=NAME:.metadata.name"
	}
	return "jsonpath='{.items[*].metadata.name}'"
}

// checkTemplates parses -o's template and --sort-by's path now, so that
// a typo is a usage error before anything connects.
func (o *getOptions) checkTemplates() error {
	if o.format == formatJSONPath || o.format == formatCustomColumns {
		if _, err := newTemplateSink(io.Discard, o); err != nil {
			return err
		}
	}
	if o.sortBy == "" {
		return nil
	}
	tmpl, err := printers.RelaxedPath(o.sortBy)
	if err == nil {
		_, err = printers.ParseJSONPath(tmpl)
	}
	if err != nil {
		return usagef("--sort-by: %v", err)
	}
	return nil
}

// pageSize is --chunk-size for the informer's lists: 0 (kubectl's "one
// page") asks for pages too large to be cut.
func pageSize(o *getOptions) int64 {
	if o.chunkSize == 0 {
		return 1 << 31
	}
	return o.chunkSize
}

// listMode: with --chunk-size given, lists are paged in chunks of it, as
// kubectl pages them; otherwise the informer picks (a streaming list where
// the server has them).
func listMode(o *getOptions) informer.ListMode {
	if o.chunkSizeSet {
		return informer.ListPaged
	}
	return informer.ListAuto
}

// tableOutput: the command prints kubectl's table (perhaps wide).
func (o *getOptions) tableOutput() bool { return o.format == formatTable || o.format == formatWide }

// String is the request for messages: "pods", "pods web-1".
func (r request) String() string {
	return strings.TrimSpace(r.resource + " " + strings.Join(r.names, " "))
}

var _ fmt.Stringer = request{}

const getLong = `List RESOURCE, then watch it and print every change until interrupted.

Usage:
  kwatch [get] TYPE [NAME...] [flags]
  kwatch [get] TYPE/NAME... [flags]
  kwatch [get] TYPE1,TYPE2 [NAME...] --watch=false [flags]

TYPE is a plural, singular, short name or kind (pods, pod, po, Pod,
deploy, deployments.apps). The table is kubectl's; while watching, every
change is a new row (with --output-watch-events, an EVENT column says
ADDED, MODIFIED or DELETED). Flags may come before or after TYPE.

--diff shows what kubectl cannot: under each MODIFIED row, one line per
field that changed since the version printed before it for that object,
coloured on a terminal:

  web-5d4f-x2   1/1   Running   1   3d
      status.containerStatuses[name=web].restartCount: 0 → 1
      metadata.labels.tier: (added) front

Lists are matched by key (containers, env and ports by name, conditions
by type); resourceVersion, generation, status.observedGeneration and
managedFields are left out unless --diff-noise. A change the informer
computed after a relist (it may span changes made while disconnected)
says "(computed after a relist)". With -o json or yaml, --diff prints
watch events with a "patch" (RFC 6902, noise included: it rebuilds the
object exactly) beside each MODIFIED object, and "relisted": true after a
relist.

--live shows the table full-screen, updated in place: cells that changed
are marked for a few seconds; ↑↓ select a row and Enter opens a
scrollable pane of its last changes (the same fields as --diff); Esc
goes back.

Examples:
  kwatch pods
  kwatch pods -A -o wide
  kwatch get deploy -n kube-system
  kwatch pods -l app=web --field-selector status.phase=Running
  kwatch pods -o json --output-watch-events
  kwatch deploy --diff
  kwatch pods -o json --diff | jq -c .patch
  kwatch pods --live
  kwatch pods --watch=false -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}'
  kwatch pods --watch=false -o custom-columns=NAME:.metadata.name,NODE:.spec.nodeName --sort-by=.spec.nodeName
  kwatch pods,services --watch=false
  kwatch pod/web-1 -o yaml --watch=false
  kwatch pods --sim --sim-pods 2000 --sim-rate 20
`
