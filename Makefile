# kwatch: build, test and measure.
GO ?= go
RACE ?= -race

.PHONY: all build test unit vet kubectl run sim soak conformance fuzz bench bench-quick bench-million bench-test bench-writes bench-controller bench-replicaset

all: build

build:
	$(GO) build ./...

# test runs every test: the library module's tests with the race
# detector, the nested adapter modules' tests, a short fuzz of every parser,
# and the conformance suite against a real kube-apiserver and etcd and
# against the simulator.
test: unit adapters bench-test fuzz conformance

# unit runs the library module's tests only (a few minutes), with the
# kubectl built below first on PATH, then the allocation-count tests once
# more without the race detector, under which they skip: it makes sync.Pool
# drop items at random, so counts vary.
unit: vet layers examples kubectl tmux shells
	PATH="$(KUBECTL_DIR):$$PATH" $(GO) test $(RACE) -count=1 -timeout 20m ./...
	$(GO) test -count=1 -run 'Allocations$$' ./watch/

# layers checks the layering by import path (.ci/layers): no library
# package imports a test rig (internal/rig/...), and no Example and nothing
# under examples/ imports internal/ at all.
.PHONY: layers examples
layers:
	.ci/layers

# examples builds every Example in the godoc (this module's and the adapter
# modules') in a scratch module outside this one, offline from the module
# cache, as a user copying it would (.ci/examples).
examples:
	$(GO) run ./.ci/examples -modules '$(ADAPTER_MODULES)'

# kubectl: the tests drive a real kubectl (internal/rig/sim's kubectl test),
# which must come from the project, not from whatever the machine has. It
# is built from .ci/kubectl, a recipe pinning k8s.io/kubernetes at the
# version the conformance suite builds kube-apiserver from (checked here),
# with the Go module proxy as the only source: CI has no other. Built once
# into KUBECTL_DIR (about 2 minutes on 2 cores after the conformance build,
# whose packages it shares), then reused. KUBECTL_DIR=<dir holding a
# kubectl> tests with another one.
TOOLS_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/kwatch-tools
KUBE_VERSION = $(shell cd .ci/kubectl && $(GO) list -m -f '{{.Version}}' k8s.io/kubernetes)
KUBECTL_DIR ?= $(TOOLS_DIR)/kubectl-$(KUBE_VERSION)
KUBE_MODULES = k8s.io/kubernetes k8s.io/client-go k8s.io/kubectl k8s.io/cli-runtime
KUBE_LIST = $(GO) list -m -f '{{.Path}} {{.Version}}{{with .Replace}} => {{.Version}}{{end}}' $(KUBE_MODULES)
# The version kubectl reports: go build leaves it "v0.0.0-master".
KUBE_LDFLAGS = $(foreach p,k8s.io/client-go/pkg/version k8s.io/component-base/version,\
	-X $(p).gitVersion=$(KUBE_VERSION) -X $(p).gitTreeState=clean \
	-X $(p).gitMajor=$(word 1,$(subst ., ,$(KUBE_VERSION:v%=%))) -X $(p).gitMinor=$(word 2,$(subst ., ,$(KUBE_VERSION))))

kubectl:
	@want=$$(cd internal/conformance/build/apiserver && $(KUBE_LIST)); got=$$(cd .ci/kubectl && $(KUBE_LIST)); \
	if [ "$$want" != "$$got" ]; then \
		printf 'kubectl: .ci/kubectl pins\n%s\nbut the conformance build pins\n%s\n' "$$got" "$$want" >&2; exit 1; \
	fi
	@if [ ! -x "$(KUBECTL_DIR)/kubectl" ]; then \
		echo "building kubectl $(KUBE_VERSION) into $(KUBECTL_DIR)"; \
		mkdir -p "$(KUBECTL_DIR)" && cd .ci/kubectl && \
		nice -n 19 $(GO) build -trimpath -ldflags '$(KUBE_LDFLAGS)' -o "$(KUBECTL_DIR)/kubectl.tmp" k8s.io/kubernetes/cmd/kubectl && \
		mv "$(KUBECTL_DIR)/kubectl.tmp" "$(KUBECTL_DIR)/kubectl"; \
	fi
	@"$(KUBECTL_DIR)/kubectl" version --client=true --output=yaml | grep -q 'gitVersion: $(KUBE_VERSION)' || \
		{ echo "kubectl: $(KUBECTL_DIR)/kubectl is not $(KUBE_VERSION)" >&2; exit 1; }

# tmux: the live view's terminal test (cmd/kwatch) runs kwatch in tmux and
# reads its screen. With CI set, a missing tmux is installed from Debian's
# packages (CI runs as root on a clean Debian-like machine), and the test
# fails without it; elsewhere a missing tmux only makes that test skip.
.PHONY: tmux
tmux:
	@if ! command -v tmux >/dev/null 2>&1; then \
		if [ -n "$$CI" ]; then \
			echo "installing tmux for the live view's terminal test"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux >/dev/null || exit 1; \
		else \
			echo "tmux not found: the live view's terminal test will skip (CI=1 make tmux installs it with apt-get)"; \
		fi; \
	fi

# shells: the completion test (cmd/kwatch) types into real bash (with
# bash-completion), zsh and fish in tmux. With CI set, missing ones are
# installed from Debian's packages, as tmux is, and the test fails without
# them; elsewhere a missing shell only makes its part skip.
.PHONY: shells
shells: tmux
	@missing=""; \
	for s in zsh fish; do command -v $$s >/dev/null 2>&1 || missing="$$missing $$s"; done; \
	[ -f /usr/share/bash-completion/bash_completion ] || missing="$$missing bash-completion"; \
	if [ -n "$$missing" ]; then \
		if [ -n "$$CI" ]; then \
			echo "installing$$missing for the completion test"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bash$$missing >/dev/null || exit 1; \
		else \
			echo "missing$$missing: the completion test will skip them (CI=1 make shells installs them with apt-get)"; \
		fi; \
	fi

vet:
	$(GO) vet ./...

# conformance runs the same suite against a real kube-apiserver and etcd
# (built from source once, about 15 minutes on 2 cores, then cached) and
# against the simulator. KWATCH_CONFORMANCE_REAL=0 skips the real server.
conformance:
	cd internal/conformance && $(GO) test $(RACE) -count=1 -v -timeout 60m ./...

# fuzz runs every fuzz target for a fixed number of executions (their seed
# corpora also run as ordinary tests). A count rather than a duration: with
# -fuzztime as a duration, Go 1.26's fuzz coordinator can report its own
# deadline as a failure ("context deadline exceeded") on a loaded machine.
# FUZZSCALE multiplies every count (FUZZSCALE=10 for a longer run).
FUZZSCALE ?= 1
FUZZ_TARGETS = ./watch:FuzzFramer:30000 ./watch:FuzzDecoder:30000 ./watch:FuzzDecodeList:30000 \
	./kube:FuzzKubeconfig:30000 ./kube:FuzzStatusFromResponse:30000 ./watch:FuzzProtobuf:30000 ./watch:FuzzJSONString:30000 ./store:FuzzStoreOps:4000 ./store:FuzzMetaKey:30000 \
	./metrics:FuzzEscapeLabelValue:30000 ./internal/rig/sim:FuzzParseQueries:30000 \
	./internal/rig/sim:FuzzDecodeContinue:30000 ./internal/rig/sim:FuzzApplyPatch:30000 ./internal/rig/sim:FuzzProtobufBody:30000 ./internal/rig/sim:FuzzDeleteOptions:30000 \
	./internal/snapfile:FuzzRead:30000 ./watch:FuzzRawJSON:30000 ./watch:FuzzRawProtobuf:30000 \
	./cmd/kwatch/internal/printers:FuzzJSONPath:30000 ./cmd/kwatch/internal/printers:FuzzCustomColumns:30000 ./cmd/kwatch/internal/printers:FuzzServerRow:30000 \
	./kube:FuzzParseExecCredential:30000 ./watch:FuzzParseRecord:30000 ./watch:FuzzProtobufRawWatch:30000 ./watch:FuzzDeepNesting:10000 \
	./internal/pbwire:FuzzCheckDepth:30000 ./internal/termtext:FuzzEscape:30000 \
	./webhook:FuzzDecodeAdmissionReview:30000 ./webhook:FuzzDecodeConversionReview:30000 ./webhook:FuzzMutationPatch:30000 ./internal/jsonpatch:FuzzDiff:30000 \
	./internal/protodec:FuzzDecode:30000
fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; rest=$${t#*:}; name=$${rest%%:*}; n=$$(( $${rest##*:} * $(FUZZSCALE) )); \
		echo "fuzz $$pkg $$name $${n}x"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $${n}x -parallel 2 $$pkg || exit 1; \
	done

# run is the README's main command: kwatch pods against the simulated cluster.
run:
	$(GO) run ./cmd/kwatch pods --sim

sim:
	$(GO) run ./cmd/kwatch sim --addr 127.0.0.1:8080

# soak runs the chaos soak; DURATION=10m for a long one, STORE=compact for
# the compact store with snapshot restarts, MODE=ha for the HA soak (three
# managers under leader election and three sharded replicas, Filter and
# Label mode, at once, with the default Lease timings; DURATION=30m for
# the long run).
DURATION ?= 2m
STORE ?= typed
MODE ?= informers
soak:
	$(GO) run ./internal/rig/soak/cmd/soak -mode $(MODE) -duration $(DURATION) -store $(STORE)

# bench runs kwatch and client-go side by side (internal/bench, its own
# module) and writes internal/bench/results; bench-quick is a smoke run.
bench:
	cd internal/bench && $(GO) run ./cmd/bench

bench-quick:
	cd internal/bench && $(GO) run ./cmd/bench -quick

# bench-million runs one kwatch informer, then one manager with one
# controller, each on its defaults and in its own process, over
# MILLION_PODS pods of the harness's size from a protobuf server in a
# process of its own (one encoded message per pod), and prints each one's
# sync time and peak RSS (internal/bench/cmd/million). Not a test: at
# 1,000,000 pods it takes minutes and about 3 GiB for the server.
MILLION_PODS ?= 1000000
bench-million:
	cd internal/bench && $(GO) run ./cmd/million -pods $(MILLION_PODS)

# bench-controller runs kwatch's controller layer against controller-runtime
# (same server, workload and workers) and writes
# internal/bench/results/controller.{json,md}; CONTROLLER_PODS=2000,50000.
CONTROLLER_PODS ?= 2000,10000
bench-controller:
	cd internal/bench && $(GO) run ./cmd/bench -scenarios controller -pods $(CONTROLLER_PODS)

# bench-replicaset runs a ReplicaSet scenario for kwatch's example, a
# kwatch controller with no expectation code and controller-runtime's, at
# watch lags of 0, 200 ms and 1 s (internal/bench/replicaset), and writes
# internal/bench/results/replicaset.{md,json}. A few minutes.
bench-replicaset:
	cd internal/bench && $(GO) run ./cmd/replicaset -lags 0,200ms,1s -o results/replicaset

# bench-writes runs the write-path benchmarks (internal/bench/writes: create,
# get, update, merge patch and delete of ConfigMaps and Pods through kwatch's
# client and client-go's typed clientset, in JSON and protobuf), WRITES_N
# requests per run and 5 runs of each, and writes medians and the ratios
# kwatch/client-go to internal/bench/results/writes.md. A count of requests
# rather than a duration, so every row sends the same requests; -v so the
# table names a skipped row and its reason. -count runs a row's runs back to
# back; WRITES_COUNT=1 WRITES_ROUNDS=5 runs the rows of each verb and kind in
# turn instead, so a burst of load from elsewhere hits every row alike.
WRITES_N ?= 2000
WRITES_COUNT ?= 5
WRITES_ROUNDS ?= 1
bench-writes:
	cd internal/bench && out=$$(mktemp) && trap 'rm -f "$$out"' EXIT && \
	$(GO) test -run '^$$' -v -bench '^BenchmarkWrites$$' -benchtime $(WRITES_N)x -count $(WRITES_COUNT) -timeout 60m \
		./writes/ -writes.rounds $(WRITES_ROUNDS) | tee "$$out" && \
	$(GO) run ./writes/cmd/writes-table -o results/writes.md \
		-command 'make bench-writes WRITES_N=$(WRITES_N) WRITES_COUNT=$(WRITES_COUNT) WRITES_ROUNDS=$(WRITES_ROUNDS)' \
		-commit "$$(git describe --always --dirty)" "$$out"

# bench-test runs a tiny version of the harness, so CI sees it still works.
bench-test:
	cd internal/bench && $(GO) test $(RACE) -short -count=1 ./...

# adapters vets and tests the nested modules that adapt kwatch to other
# libraries (metrics/prometheus: prometheus/client_golang), kept out of the
# library module so that it does not depend on them.
ADAPTER_MODULES = metrics/prometheus
.PHONY: adapters
adapters:
	@for m in $(ADAPTER_MODULES); do \
		echo "adapter module $$m"; \
		(cd $$m && $(GO) vet ./... && $(GO) test $(RACE) -count=1 ./...) || exit 1; \
	done
