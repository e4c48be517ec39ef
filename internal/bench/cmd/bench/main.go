// Command bench runs kwatch and client-go side by side against the
// simulated API server and writes the results as JSON, Markdown and an SVG
// latency chart.
//
//	go run ./cmd/bench -quick     # smoke run, under two minutes
//	go run ./cmd/bench            # full run: 10,000 and 100,000 pods
//
// The same binary is the engine process (-role=engine, driven over stdin
// and stdout by the harness) and the workqueue benchmark (-role=queue).
package main

import (
	"os"

	"github.com/kwatch/kwatch/internal/bench/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:])) }
