package suite

import (
	"net/http"
	"strings"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/snapfile"
	"github.com/kwatch/kwatch/kube"
)

// otherClusterUID is the kube-system UID of the cluster a forged snapshot
// claims to come from.
const otherClusterUID = "00000000-0000-4000-8000-00000000000b"

// testSnapshotFromAnotherCluster: a snapshot names its cluster by the
// kube-system namespace's UID, and one that names another cluster behind
// the same address is refused and the informer lists, although its
// resourceVersion is one this server confirms. Cluster A's file at
// cluster B's address is made by rewriting the identity in this server's
// own snapshot: from the informer's side it is the same (the same host,
// an RV the server has reached, another UID), and the target needs no
// second cluster. The file the informer writes next names this cluster
// again and is resumed from.
func testSnapshotFromAnotherCluster(t T, e *Env) {
	subjects := slimAndProtoSubjects(t, snapshotDir(t), "", func() *kube.Config { return e.Target.Config(Admin) })
	names := podNames("sc", 20)
	createPods(t, e, names, nil)
	runFresh(t, e, subjects)

	var ns struct {
		Metadata struct {
			UID string `json:"uid"`
		} `json:"metadata"`
	}
	require.NoError(t, e.Kube.do(e.Ctx, http.MethodGet, "/api/v1/namespaces/kube-system", nil, &ns))
	uid := ns.Metadata.UID
	require.NotEmpty(t, uid, "kube-system has a uid")
	for _, s := range subjects {
		rewriteIdentity(t, e, s.path(), func(server string) string {
			require.True(t, strings.HasSuffix(server, " kube-system="+uid), "%s: the snapshot names the cluster: %q", s.label(), server)
			return strings.Replace(server, uid, otherClusterUID, 1)
		})
	}
	deletePods(t, e, names[:5]) // a change the foreign snapshot cannot know

	for _, s := range subjects {
		s.start(t, e)
		st := s.stats()
		require.False(t, st.Restored, "%s loaded a snapshot of another cluster (stats %+v)", s.label(), st)
		require.Positive(t, st.Relists, "%s did not list (stats %+v)", s.label(), st)
	}
	convergeAll(t, e, subjects)
	logSubjects(t, "start on another cluster's snapshot", subjects)
	stopAll(t, subjects)

	restartAll(t, e, subjects)
	convergeAll(t, e, subjects)
	for _, s := range subjects {
		requireResumedWithoutList(t, s)
	}
	logSubjects(t, "restart on its own snapshot", subjects)
}

// rewriteIdentity rewrites the server identity in the snapshot at path.
func rewriteIdentity(t T, e *Env, path string, rewrite func(string) string) {
	t.Helper()
	var recs []snapfile.Record
	h, err := snapfile.Read(path, snapfile.ReadOptions{}, func(r snapfile.Record) error {
		recs = append(recs, r)
		return nil
	})
	require.NoError(t, err)
	h.Server = rewrite(h.Server)
	seq := func(yield func(snapfile.Record, error) bool) {
		for _, r := range recs {
			if !yield(r, nil) {
				return
			}
		}
	}
	require.NoError(t, snapfile.Write(e.Ctx, path, h, seq, snapfile.WriteOptions{}))
}
