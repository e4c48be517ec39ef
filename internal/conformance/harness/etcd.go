package harness

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"time"
)

// Etcd is a single-member etcd on loopback with its data in a test
// directory. Start one with StartEtcd; Stop it when done.
type Etcd struct {
	ClientURL string // http://127.0.0.1:PORT
	proc      *Process
}

// etcdReadyTimeout bounds etcd's start on a loaded machine.
const etcdReadyTimeout = 90 * time.Second

// StartEtcd starts etcd from bin with its data and log under dir and waits
// until it reports healthy.
func StartEtcd(ctx context.Context, bin, dir string) (*Etcd, error) {
	client, err := freePort()
	if err != nil {
		return nil, err
	}
	peer, err := freePort()
	if err != nil {
		return nil, err
	}
	clientURL := "http://127.0.0.1:" + strconv.Itoa(client)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(peer)
	proc, err := StartProcess(ProcSpec{
		Name: "etcd",
		Path: bin,
		Args: []string{
			"--name=kwatch",
			"--data-dir=" + filepath.Join(dir, "etcd-data"),
			"--listen-client-urls=" + clientURL,
			"--advertise-client-urls=" + clientURL,
			"--listen-peer-urls=" + peerURL,
			"--initial-advertise-peer-urls=" + peerURL,
			"--initial-cluster=kwatch=" + peerURL,
			"--initial-cluster-state=new",
			// A throwaway test store: durability buys nothing and fsync
			// is slow on a shared disk.
			"--unsafe-no-fsync=true",
			"--log-level=warn",
		},
		LogPath: filepath.Join(dir, "etcd.log"),
	})
	if err != nil {
		return nil, err
	}
	r := readiness{url: clientURL + "/health", proc: proc, timeout: etcdReadyTimeout}
	if err := r.wait(ctx); err != nil {
		proc.Stop()
		return nil, fmt.Errorf("etcd: %w", err)
	}
	return &Etcd{ClientURL: clientURL, proc: proc}, nil
}

// Stop stops etcd and waits for it to exit.
func (e *Etcd) Stop() { e.proc.Stop() }

// Process is etcd's process, for its log and liveness.
func (e *Etcd) Process() *Process { return e.proc }
