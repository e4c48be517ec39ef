# kwatch: build, test and measure.
GO ?= go
RACE ?= -race

.PHONY: all build test unit vet run sim soak conformance fuzz bench bench-quick bench-test

all: build

build:
	$(GO) build ./...

# test runs every test: the library module's tests with the race
# detector, a short fuzz of every parser, and the conformance suite against
# a real kube-apiserver and etcd and against the simulator.
test: unit bench-test fuzz conformance

# unit runs the library module's tests only (a few minutes), then the
# allocation-count tests once more without the race detector, under which
# they skip: it makes sync.Pool drop items at random, so counts vary.
unit: vet
	$(GO) test $(RACE) -count=1 -timeout 20m ./...
	$(GO) test -count=1 -run 'Allocations$$' ./watch/

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
	./watch:FuzzKubeconfig:30000 ./watch:FuzzProtobuf:30000 ./watch:FuzzJSONString:30000 ./store:FuzzStoreOps:4000 ./store:FuzzMetaKey:30000 \
	./queue:FuzzEscapeLabelValue:30000 ./internal/sim:FuzzParseQueries:30000 \
	./internal/sim:FuzzDecodeContinue:30000 ./internal/sim:FuzzApplyPatch:30000
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

# soak runs the chaos soak; DURATION=10m for a long one.
DURATION ?= 2m
soak:
	$(GO) run ./internal/soak/cmd/soak -duration $(DURATION)

# bench runs kwatch and client-go side by side (internal/bench, its own
# module) and writes internal/bench/results; bench-quick is a smoke run.
bench:
	cd internal/bench && $(GO) run ./cmd/bench

bench-quick:
	cd internal/bench && $(GO) run ./cmd/bench -quick

# bench-test runs a tiny version of the harness, so CI sees it still works.
bench-test:
	cd internal/bench && $(GO) test $(RACE) -short -count=1 ./...
