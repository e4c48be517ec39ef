package soak

import (
	"io"
	"log/slog"
	"time"

	"github.com/kwatch/kwatch/informer"
)

// Config shapes a soak run. Zero fields take the defaults given.
type Config struct {
	Duration   time.Duration // whole run; 1 minute
	Pods       int           // names churned over (about half exist at a time); 400
	Namespaces int           // 4
	Rate       int           // writes per second during churn; 400
	// Cycle is how long each churn-and-fault phase lasts; 1 s.
	Cycle time.Duration
	// ConvergeBound is how long informers get to converge after a cycle
	// before the objects still wrong count as lost; 60 s.
	ConvergeBound time.Duration
	// FireBound is how long a cycle keeps churning past Cycle for its fault
	// to fire before the cycle counts it as not fired; 10 s.
	FireBound time.Duration
	Workers   int    // workqueue workers; 4
	Seed      uint64 // 1
	// Store is how the informers keep their stores; the zero value is the
	// informer's default (the compact store), without snapshot files or
	// restarts. In StoreCompact each informer also keeps a snapshot file, and every
	// RestartEvery cycles all of them are stopped for the first quarter of
	// the cycle's churn and started again on their files, and the cycle's
	// fault is made once they watch again (so a restored informer resumes
	// into the writes it missed, then meets the fault); after the last cycle they are stopped once more, the server
	// changes while they are down, and they must resume from their files
	// without listing and converge.
	Store informer.StoreMode
	// RestartEvery is how many cycles pass between restarts in
	// StoreCompact; 2.
	RestartEvery int
	// SnapshotDir holds the snapshot files in StoreCompact; "" makes a
	// temporary directory, removed at the end.
	SnapshotDir string
	// Out receives progress lines and the summary; nil discards them.
	Out io.Writer
	// Logger receives the informers' logs; nil discards them.
	Logger *slog.Logger
}

func (c *Config) defaults() {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.Pods, 400)
	def(&c.Namespaces, 4)
	def(&c.Rate, 400)
	def(&c.Workers, 4)
	def(&c.RestartEvery, 2)
	if c.Duration <= 0 {
		c.Duration = time.Minute
	}
	if c.Cycle <= 0 {
		c.Cycle = time.Second
	}
	if c.ConvergeBound <= 0 {
		c.ConvergeBound = time.Minute
	}
	if c.FireBound <= 0 {
		c.FireBound = 10 * time.Second
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.Out == nil {
		c.Out = io.Discard
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}
