# kwatch: build, test and measure.
GO ?= go
RACE ?= -race

.PHONY: all build test vet run sim soak

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

# soak runs the chaos soak; DURATION=10m for a long one.
DURATION ?= 2m
soak:
	$(GO) run ./internal/soak/cmd/soak -duration $(DURATION)
