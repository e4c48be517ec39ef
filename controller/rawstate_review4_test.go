package controller

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/informer"
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
	h, c := demoConfigMaps(t, "held")
	held := deleteHeld(t, h, c)
	inf, err := informer.New(informer.Options[*watch.Raw]{Client: c, Resource: kube.ConfigMaps,
		Scope: kube.Scope{Namespace: "demo"}})
	require.NoError(t, err)
	require.Equal(t, informer.StoreTyped, inf.StoreMode())
	runInformer(t, inf)

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
