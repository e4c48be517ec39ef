package harness

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"time"
)

// APIServer is one kube-apiserver on loopback, serving TLS with the
// cluster's certificate. Start one with StartAPIServer; Stop it when done.
type APIServer struct {
	URL  string // https://127.0.0.1:PORT
	proc *Process
}

// APIServerSpec says how to start one kube-apiserver.
type APIServerSpec struct {
	Bin       string // the kube-apiserver program
	Dir       string // working directory for its log and generated files
	Name      string // "cached", "nocache": names its log file
	EtcdURL   string
	PKI       *PKI
	TokenFile string // --token-auth-file
	// AdminToken is used to probe /readyz.
	AdminToken string
	// WatchCache false starts the server with --watch-cache=false, so lists
	// and watches go to etcd and a compacted RV is refused on a watch too.
	WatchCache bool
}

// apiserverReadyTimeout bounds start-up on a loaded two-core machine; a
// cold start takes 10-40 s there.
const apiserverReadyTimeout = 4 * time.Minute

// compactionInterval is how often the API server compacts etcd. Short, so
// that "old RV unavailable" cases wait seconds, not minutes.
const compactionInterval = 10 * time.Second

// StartAPIServer starts kube-apiserver and waits until /readyz answers 200.
func StartAPIServer(ctx context.Context, spec APIServerSpec) (*APIServer, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	proc, err := StartProcess(ProcSpec{
		Name:    "kube-apiserver (" + spec.Name + ")",
		Path:    spec.Bin,
		Args:    apiserverArgs(spec, port),
		Dir:     spec.Dir,
		LogPath: filepath.Join(spec.Dir, "kube-apiserver-"+spec.Name+".log"),
	})
	if err != nil {
		return nil, err
	}
	url := "https://127.0.0.1:" + strconv.Itoa(port)
	r := readiness{url: url + "/readyz", token: spec.AdminToken, ca: spec.PKI.CAPEM, proc: proc, timeout: apiserverReadyTimeout}
	if err := r.wait(ctx); err != nil {
		proc.Stop()
		return nil, fmt.Errorf("kube-apiserver: %w", err)
	}
	return &APIServer{URL: url, proc: proc}, nil
}

func apiserverArgs(spec APIServerSpec, port int) []string {
	return []string{
		"--etcd-servers=" + spec.EtcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		// No controller manager runs, and a loopback address cannot be
		// published as the kubernetes service's endpoint anyway.
		"--endpoint-reconciler-type=none",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + filepath.Join(spec.Dir, "certs-"+spec.Name),
		"--tls-cert-file=" + spec.PKI.ServerCert,
		"--tls-private-key-file=" + spec.PKI.ServerKey,
		"--token-auth-file=" + spec.TokenFile,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + spec.PKI.SAPub,
		"--service-account-signing-key-file=" + spec.PKI.SAKey,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--etcd-compaction-interval=" + compactionInterval.String(),
		// Without a controller manager no namespace gets its default
		// service account, and the ServiceAccount admission plugin would
		// then refuse every pod.
		"--disable-admission-plugins=ServiceAccount",
		"--watch-cache=" + strconv.FormatBool(spec.WatchCache),
		"--profiling=false",
		"--v=1",
	}
}

// Stop stops the server and waits for it to exit.
func (a *APIServer) Stop() { a.proc.Stop() }

// Process is the server's process, for its log and liveness.
func (a *APIServer) Process() *Process { return a.proc }
