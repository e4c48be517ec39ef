package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// The server versions the build modules under build/ pin. A test checks
// that they match the go.mod files there.
const (
	KubernetesVersion = "v1.37.2"
	EtcdVersion       = "v3.6.16"
)

// Binaries are the server programs a Cluster runs.
type Binaries struct {
	APIServer string // kube-apiserver
	Etcd      string // etcd
}

// BuildOptions says where the build recipes are and where binaries are kept.
type BuildOptions struct {
	// SourceDir holds the build modules apiserver/ and etcd/. Required.
	SourceDir string
	// CacheDir is where built binaries are kept between runs. Empty means
	// os.UserCacheDir()/kwatch-conformance. Binaries go in a subdirectory
	// named after the pinned versions.
	CacheDir string
	// Log receives the go command's output; nil discards it.
	Log io.Writer
}

// dir is the versioned directory holding the binaries and the build lock.
func (o BuildOptions) dir() (string, error) {
	root := o.CacheDir
	if root == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("no cache directory for the server binaries: %w", err)
		}
		root = filepath.Join(base, "kwatch-conformance")
	}
	return filepath.Join(root, "kubernetes-"+KubernetesVersion+"-etcd-"+EtcdVersion), nil
}

// build is one program to build: its module directory and package.
type build struct {
	name   string // file name in the cache
	module string // directory under SourceDir
	pkg    string // package path to build
}

var builds = []build{
	{name: "etcd", module: "etcd", pkg: "."},
	{name: "kube-apiserver", module: "apiserver", pkg: "k8s.io/kubernetes/cmd/kube-apiserver"},
}

// CachedBinaries returns the binaries if both are already built.
func CachedBinaries(opts BuildOptions) (Binaries, bool) {
	dir, err := opts.dir()
	if err != nil {
		return Binaries{}, false
	}
	b := binariesIn(dir)
	return b, isExecutable(b.Etcd) && isExecutable(b.APIServer)
}

func binariesIn(dir string) Binaries {
	return Binaries{APIServer: filepath.Join(dir, "kube-apiserver"), Etcd: filepath.Join(dir, "etcd")}
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// EnsureBinaries returns the cached binaries, building the missing ones
// first. A lock file serialises builds across processes: a second run waits
// for the first and then reuses its result. The build runs at the lowest CPU
// priority; a cancelled ctx stops it (the Go build cache keeps the packages
// compiled so far, so the next run resumes rather than restarts).
func EnsureBinaries(ctx context.Context, opts BuildOptions) (Binaries, error) {
	dir, err := opts.dir()
	if err != nil {
		return Binaries{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Binaries{}, err
	}
	unlock, err := lockFile(ctx, filepath.Join(dir, "build.lock"))
	if err != nil {
		return Binaries{}, err
	}
	defer unlock()
	for _, b := range builds {
		out := filepath.Join(dir, b.name)
		if isExecutable(out) {
			continue
		}
		if err := goBuild(ctx, opts, b, out); err != nil {
			return Binaries{}, err
		}
	}
	return binariesIn(dir), nil
}

// goBuild builds one program to a temporary name and renames it into place,
// so a present binary is always a complete one.
func goBuild(ctx context.Context, opts BuildOptions, b build, out string) error {
	tmp := out + ".tmp"
	args := []string{"build", "-o", tmp, b.pkg}
	name, argv := "go", args
	if nice, err := exec.LookPath("nice"); err == nil {
		name, argv = nice, append([]string{"-n", "19", "go"}, args...)
	}
	cmd := exec.CommandContext(ctx, name, argv...)
	cmd.Dir = filepath.Join(opts.SourceDir, b.module)
	cmd.Stdout, cmd.Stderr = logOrDiscard(opts.Log), logOrDiscard(opts.Log)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// Cancel stops the whole group: go and the compilers it runs.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	start := time.Now()
	if err := cmd.Run(); err != nil {
		os.Remove(tmp)
		if ctx.Err() != nil {
			return fmt.Errorf("build %s stopped after %v: %w", b.name, time.Since(start).Round(time.Second), ctx.Err())
		}
		return fmt.Errorf("build %s in %s: %w", b.name, cmd.Dir, err)
	}
	return os.Rename(tmp, out)
}

func logOrDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// lockPoll is how often a waiting run retries the build lock.
const lockPoll = time.Second

// lockFile takes an exclusive flock on path, waiting until it is free or
// ctx ends. The lock dies with the process, so a killed run never leaves a
// stale lock behind.
func lockFile(ctx context.Context, path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for the build lock %s (another run is building): %w", path, ctx.Err())
		case <-time.After(lockPoll):
		}
	}
}
