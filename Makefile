# kwatch: build, test and measure.
GO ?= go
RACE ?= -race

.PHONY: all build test test-short vet fuzz bench run sim

all: build

build:
	$(GO) build ./...

# test runs every test of the library module with the race detector.
test: vet
	$(GO) test $(RACE) -count=1 -timeout 20m ./...

vet:
	$(GO) vet ./...

# run is the README's main command: kwatch pods against the simulated cluster.
run:
	$(GO) run ./cmd/kwatch pods --sim

sim:
	$(GO) run ./cmd/kwatch sim --addr 127.0.0.1:8080
