package controller

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/informer"
	"github.com/kwatch/kwatch/internal/rig/sim"
	"github.com/kwatch/kwatch/internal/rig/simkit"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

// TestReview4StateOfARawTypedCacheSeesTheDeletionTimestamp (fourth
// reader; it failed on ae4d85a, before stateFunc read a typed store of
// *watch.Raw as a compact one): a cache of *watch.Raw is
// StoreTyped (EffectiveStore: T is already the compact form), and
// stateFunc took its typed branch, which read a deletionTimestamp only
// through GetDeletionTimestamp. *watch.Raw has none (its metadata is
// read with Meta()), so a delete's expectation on an object a finalizer
// keeps was never shown by this cache: it waited for the bound. rawState,
// the compact branch, reads the same record and sees it.
func TestReview4StateOfARawTypedCacheSeesTheDeletionTimestamp(t *testing.T) {
	h := simkit.Start(t, sim.Options{})
	require.NoError(t, h.Server.EnsureNamespace("demo"))
	_, err := h.Server.Create("configmaps", []byte(
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"demo","name":"held","finalizers":["demo/keep"]}}`))
	require.NoError(t, err)
	c, err := kube.NewClient(&kube.Config{Host: h.URL})
	require.NoError(t, err)
	cms := client.For(c, kube.Typed[*review2Obj](kube.ConfigMaps), client.Options{})
	require.NoError(t, cms.Delete(context.Background(), "demo", "held", client.DeleteOptions{}))
	held, err := h.Server.Get("configmaps", "demo", "held")
	require.NoError(t, err, "the finalizer keeps it")

	inf, err := informer.New(informer.Options[*watch.Raw]{Client: c, Resource: kube.ConfigMaps,
		Scope: kube.Scope{Namespace: "demo"}})
	require.NoError(t, err)
	require.Equal(t, informer.StoreTyped, inf.StoreMode())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- inf.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	require.Eventually(t, inf.HasSynced, 30*time.Second, 5*time.Millisecond) // a bound on a broken run only

	r, ok := inf.Store().Get("demo/held")
	require.True(t, ok)
	m, err := r.Meta()
	require.NoError(t, err)
	require.NotNil(t, m.DeletionTimestamp, "the cached record has the deletionTimestamp")
	require.True(t, rawState(inf.Store(), "demo/held", true).deleting, "read from the record, it is seen")
	st := stateFunc(inf)("demo/held", true)
	require.Equal(t, objState{present: true, uid: string(held.UID), rv: held.ResourceVersion, deleting: true}, st,
		"stateFunc of a *watch.Raw cache must see the deletionTimestamp too")
}
