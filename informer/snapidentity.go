package informer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/kwatch/kwatch/internal/backoff"
	"github.com/kwatch/kwatch/kube"
)

// A snapshot names the cluster it came from, and is loaded only by an
// informer that finds the same name: an address (a load balancer, a
// reused IP, blue/green control planes) can reach another cluster later,
// whose resourceVersions may well be past the snapshot's, so the
// confirmation of the RV cannot tell the two apart. The name is the
// client's host, the UID of the cluster's kube-system namespace (made when
// the cluster was, kept for its life, and different in every cluster: one
// GET at the start of each Run), and SnapshotOptions.Cluster if set.
//
// When the GET is refused (403: no RBAC for namespaces; 404: a server
// without kube-system) or keeps failing, the cluster has no name the
// informer can check by itself. With SnapshotOptions.Cluster set, that
// name (the user's word for which cluster is behind the address) and the
// host are the identity, and the informer logs that it uses it. Without
// it, snapshots are off for the Run: nothing is loaded and nothing is
// written, and the log says how to turn them back on. A host alone is
// never the identity: it is what let another cluster's snapshot in.

// kubeSystemPath is the object whose UID names the cluster.
const kubeSystemPath = "/api/v1/namespaces/kube-system"

// maxIdentifyAttempts is how many times a GET that fails for another
// reason than a refusal (unreachable, 5xx, 429, 401) is sent, spaced by the
// informer's backoff, before the Run goes on without the cluster's UID:
// the informer lists and watches whatever this GET does.
const maxIdentifyAttempts = 3

// identifyTimeout bounds one GET; maxIdentityBody bounds its answer (a
// namespace is well under a kilobyte).
const (
	identifyTimeout = 30 * time.Second
	maxIdentityBody = 1 << 20
)

// errNoUID is a kube-system namespace without metadata.uid: not a
// Kubernetes API server's, so no identity either.
var errNoUID = errors.New("namespace kube-system has no metadata.uid")

// identify returns the server identity this Run's snapshots carry, or an
// error when the cluster cannot be named (see above).
func (s *snapshotter) identify(ctx context.Context) (string, error) {
	host := s.inf.opts.Client.Host()
	uid, err := s.kubeSystemUID(ctx)
	if err == nil {
		id := host + " kube-system=" + uid
		if s.opts.Cluster != "" {
			id += " cluster=" + s.opts.Cluster
		}
		return id, nil
	}
	if s.opts.Cluster == "" || ctx.Err() != nil {
		return "", err
	}
	id := host + " cluster=" + s.opts.Cluster
	s.inf.opts.Logger.Info("informer names the cluster of its snapshot by SnapshotOptions.Cluster alone: the kube-system namespace's UID is not available",
		"resource", s.inf.opts.Resource.String(), "snapshot", s.opts.Path, "server", id, "err", err)
	return id, nil
}

// kubeSystemUID GETs the kube-system namespace's UID, trying again after
// a backoff unless the answer is a refusal, up to maxIdentifyAttempts.
func (s *snapshotter) kubeSystemUID(ctx context.Context) (string, error) {
	bo := backoff.New(s.inf.opts.Backoff.internal())
	for attempt := 1; ; attempt++ {
		uid, err := getUID(ctx, s.inf.opts.Client, kubeSystemPath)
		refused := kube.IsForbidden(err) || kube.IsNotFound(err) || errors.Is(err, errNoUID)
		if err == nil || refused || attempt == maxIdentifyAttempts || ctx.Err() != nil {
			return uid, err
		}
		if !sleepCtx(ctx, bo.FailureAt(time.Now())) {
			return "", ctx.Err()
		}
	}
}

// getUID reads metadata.uid of the object at path.
func getUID(ctx context.Context, c *kube.Client, path string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, identifyTimeout)
	defer cancel()
	resp, err := c.Send(ctx, kube.Request{Path: path, NoRetry: true})
	if err != nil {
		return "", fmt.Errorf("GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxIdentityBody+1))
	if err != nil {
		return "", fmt.Errorf("GET %s: %w", path, err)
	}
	if len(body) > maxIdentityBody {
		return "", fmt.Errorf("GET %s: answer larger than %d bytes", path, maxIdentityBody)
	}
	var obj struct {
		Metadata struct {
			UID string `json:"uid"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(body, &obj); err != nil {
		return "", fmt.Errorf("GET %s: decoding: %w", path, err)
	}
	if obj.Metadata.UID == "" {
		return "", fmt.Errorf("GET %s: %w", path, errNoUID)
	}
	return obj.Metadata.UID, nil
}
