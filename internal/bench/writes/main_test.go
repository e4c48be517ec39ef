package writes

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"sync"
	"testing"
)

var (
	serveSim = flag.Bool(ServeFlag, false, "be the benchmarks' server process (the benchmarks start it)")
	rounds   = flag.Int("writes.rounds", 1, "BenchmarkWrites runs the rows of each verb and kind this many times in turn "+
		"(names after the first end in #01, #02...), so that with -count 1 the rows alternate run by run")
)

// TestMain is the server process when started with -writes.serve-sim;
// otherwise it runs the tests and benchmarks, and stops the server process
// the first of them started.
func TestMain(m *testing.M) {
	flag.Parse()
	if *serveSim {
		os.Exit(ServeChild(os.Stdin, os.Stdout))
	}
	code := m.Run()
	if server != nil {
		if err := server.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "writes: stopping the server process:", err)
			code = max(code, 1)
		}
	}
	os.Exit(code)
}

var (
	serverOnce sync.Once
	server     *Server // nil until started, or when it failed to start
	serverErr  error
)

// serverURL starts the server process on first use and returns its URL.
func serverURL(tb testing.TB) string {
	tb.Helper()
	serverOnce.Do(func() {
		exe, err := os.Executable()
		if err != nil {
			serverErr = err
			return
		}
		server, serverErr = StartServer(exe)
	})
	if serverErr != nil {
		tb.Fatal(serverErr)
	}
	return server.URL
}

// dialAll builds the admin connection (kwatch-json) and one connection per
// row, in the order of Rows.
func dialAll(tb testing.TB, url string, wrap func(http.RoundTripper) http.RoundTripper) (admin *Conn, rows []*Conn) {
	tb.Helper()
	admin, err := Dial(url, Rows[0], nil)
	if err != nil {
		tb.Fatal(err)
	}
	for _, row := range Rows {
		c, err := Dial(url, row, wrap)
		if err != nil {
			tb.Fatal(err)
		}
		rows = append(rows, c)
	}
	return admin, rows
}
