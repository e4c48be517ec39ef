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

# unit runs the library module's tests only (a few minutes).
unit: vet
	$(GO) test $(RACE) -count=1 -timeout 20m ./...

vet:
	$(GO) vet ./...

# conformance runs the same suite against a real kube-apiserver and etcd
# (built from source once, about 15 minutes on 2 cores, then cached) and
# against the simulator. KWATCH_CONFORMANCE_REAL=0 skips the real server.
conformance:
	cd internal/conformance && $(GO) test $(RACE) -count=1 -v -timeout 60m ./...

# fuzz runs every fuzz target for FUZZTIME each (their seed corpora also run
# as ordinary tests in make test).
FUZZTIME ?= 8s
FUZZ_TARGETS = ./watch:FuzzFramer ./watch:FuzzDecoder ./watch:FuzzDecodeList ./watch:FuzzKubeconfig \
	./store:FuzzStoreOps ./store:FuzzMetaKey ./queue:FuzzEscapeLabelValue \
	./internal/sim:FuzzParseQueries ./internal/sim:FuzzDecodeContinue ./internal/sim:FuzzApplyPatch
fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$pkg $$name"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) -parallel 2 $$pkg || exit 1; \
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
