package writes

import (
	"context"
	"errors"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// BenchmarkWrites runs every verb on every kind through every row:
// BenchmarkWrites/<verb>/<kind>/<row>. Run it with -benchtime Nx: create
// and delete prepare N distinct names (and delete N objects) before the
// loop. One iteration is one request;
// req/s is iterations per second of the timed loop; cpu-ns/op (user and
// system CPU of this process per request, garbage collection included),
// allocs/op and B/op are the client's alone (the server is another
// process). On a shared machine cpu-ns/op is the steadier of the two
// measures of the client's cost: req/s includes the server's time and
// waits for a core.
//
// go test's -count runs each row's runs back to back; -count 1 with
// -writes.rounds N runs the rows of a verb and kind in turn, N times, so
// that a burst of load from elsewhere hits every row alike.
func BenchmarkWrites(b *testing.B) {
	url := serverURL(b)
	admin, conns := dialAll(b, url, nil)
	for _, verb := range Verbs {
		b.Run(string(verb), func(b *testing.B) {
			for _, kind := range Kinds {
				b.Run(string(kind), func(b *testing.B) {
					for range max(1, *rounds) {
						for _, c := range conns {
							b.Run(c.Row.Name, func(b *testing.B) { benchCase(b, c, admin, verb, kind) })
						}
					}
				})
			}
		})
	}
}

func benchCase(b *testing.B, c, admin *Conn, verb Verb, kind Kind) {
	ctx := context.Background()
	cs, err := NewCase(c, admin, verb, kind)
	if err != nil {
		b.Fatal(err)
	}
	if verb == Delete {
		probeDelete(b, c, admin, kind)
	}
	if err := cs.Setup(ctx, b.N); err != nil {
		b.Fatal(err)
	}
	runtime.GC() // the setup's garbage is not the loop's
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU(b)
	for i := range b.N {
		if err := cs.Step(ctx, i); err != nil {
			b.StopTimer()
			if errors.Is(err, ErrProtoDeleteRefused) {
				_ = cs.Teardown(ctx)
				b.Skip(err)
			}
			b.Fatal(err)
		}
	}
	b.StopTimer()
	cpu := processCPU(b) - cpu0
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	if err := cs.Teardown(ctx); err != nil {
		b.Fatal(err)
	}
}

// probeDelete skips a delete benchmark whose row the server refuses (see
// ErrProtoDeleteRefused) before its setup creates b.N objects for nothing.
func probeDelete(b *testing.B, c, admin *Conn, kind Kind) {
	ctx := context.Background()
	cs, err := NewCase(c, admin, Delete, kind)
	if err != nil {
		b.Fatal(err)
	}
	if err := cs.Setup(ctx, 1); err != nil {
		b.Fatal(err)
	}
	err = cs.Step(ctx, 0)
	if terr := cs.Teardown(ctx); terr != nil {
		b.Fatal(terr)
	}
	switch {
	case errors.Is(err, ErrProtoDeleteRefused):
		b.Skip(err)
	case err != nil:
		b.Fatal(err)
	}
}

// processCPU is the user and system CPU this process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
