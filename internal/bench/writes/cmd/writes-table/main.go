// Command writes-table reads the output of BenchmarkWrites (go test -bench,
// several runs of each benchmark with -count) and writes a Markdown table
// of medians and of the ratios kwatch/client-go per verb and kind, the raw
// output below it.
//
//	go test -run '^$' -bench '^BenchmarkWrites$' -benchtime 2000x -count 5 ./writes/ > out.txt
//	go run ./writes/cmd/writes-table -o results/writes.md out.txt
//
// It fails, writing nothing, when the output holds a failure or no result.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	out := flag.String("o", "", "write the table to this file as well as to stdout")
	command := flag.String("command", "make bench-writes", "the command that ran the benchmarks, for the header")
	commit := flag.String("commit", "", "the commit measured, for the header")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: writes-table [-o FILE] [-command CMD] [-commit REV] BENCH-OUTPUT")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *out, header{command: *command, commit: *commit, date: time.Now().UTC()}); err != nil {
		fmt.Fprintln(os.Stderr, "writes-table:", err)
		os.Exit(1)
	}
}

func run(in, out string, h header) error {
	raw, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	res, err := parse(raw)
	if err != nil {
		return err
	}
	md := render(res, h)
	if _, err := os.Stdout.WriteString(md); err != nil {
		return err
	}
	if out == "" {
		return nil
	}
	return os.WriteFile(out, []byte(md), 0o644)
}
