package engine

import (
	"os"
	"time"

	"github.com/kwatch/kwatch/informer"
)

// EnvSnapshot names the environment variable through which the harness
// gives a compact engine its snapshot file (informer.SnapshotOptions.Path):
// the harness's restart scenario runs one process that exits (writing the
// file) and then a second one that starts from it.
const EnvSnapshot = "KWATCH_BENCH_SNAPSHOT"

// snapshotInterval is the least time between two background writes. It is
// longer than any engine process lives, so only the write when Run returns
// happens and no measured phase pays for one.
const snapshotInterval = time.Hour

// compactSnapshot sets opts.Snapshot when the harness asked for one.
func compactSnapshot(opts *informer.Options[*podFull]) {
	if path := os.Getenv(EnvSnapshot); path != "" {
		// Cluster: the harness's front serves no kube-system namespace to
		// name the cluster by, and without a name snapshots would be off.
		opts.Snapshot = &informer.SnapshotOptions{Path: path, Interval: snapshotInterval, Cluster: "bench"}
	}
}
