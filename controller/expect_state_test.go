package controller

import (
	"context"
	"fmt"
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

// TestStateReadsTheDeletionTimestampInEitherStore: what the expectations
// read of a cached object is the same from a typed and a compact store;
// the compact one reads the deletionTimestamp from the metadata alone
// (it runs with the expectations' mutex held, and a decode into T is not
// to be reached there).
func TestStateReadsTheDeletionTimestampInEitherStore(t *testing.T) {
	for _, mode := range []informer.StoreMode{informer.StoreTyped, informer.StoreCompact} {
		t.Run(mode.String(), func(t *testing.T) {
			h, c := demoConfigMaps(t, "held", "plain")
			held := deleteHeld(t, h, c)
			inf, err := informer.New(informer.Options[*review2Obj]{Client: c, Resource: kube.ConfigMaps,
				Scope: kube.Scope{Namespace: "demo"}, Tuning: informer.Tuning{Store: mode}})
			require.NoError(t, err)
			runInformer(t, inf)

			state := stateFunc(inf)
			st := state("demo/held", true)
			require.Equal(t, objState{present: true, uid: string(held.UID), rv: held.ResourceVersion, deleting: true}, st)
			require.False(t, state("demo/held", false).deleting, "a deletionTimestamp is read for deletes only")
			require.False(t, state("demo/plain", true).deleting)
			require.True(t, state("demo/plain", true).present)
			require.Equal(t, objState{}, state("demo/none", true))
		})
	}
}

// demoConfigMaps starts a simulator with the ConfigMaps names in
// namespace demo, "held" with a finalizer that keeps it once deleted.
func demoConfigMaps(t *testing.T, names ...string) (*simkit.Harness, *kube.Client) {
	t.Helper()
	h := simkit.Start(t, sim.Options{})
	require.NoError(t, h.Server.EnsureNamespace("demo"))
	for _, name := range names {
		fin := ""
		if name == "held" {
			fin = `,"finalizers":["demo/keep"]`
		}
		_, err := h.Server.Create("configmaps", []byte(fmt.Sprintf(
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"demo","name":%q%s}}`, name, fin)))
		require.NoError(t, err)
	}
	c, err := kube.NewClient(&kube.Config{Host: h.URL})
	require.NoError(t, err)
	return h, c
}

// deleteHeld deletes demo/held through c and returns it as its finalizer
// keeps it, with a deletionTimestamp.
func deleteHeld(t *testing.T, h *simkit.Harness, c *kube.Client) sim.Object {
	t.Helper()
	cms := client.For(c, kube.Typed[*review2Obj](kube.ConfigMaps), client.Options{})
	require.NoError(t, cms.Delete(context.Background(), "demo", "held", client.DeleteOptions{}))
	held, err := h.Server.Get("configmaps", "demo", "held")
	require.NoError(t, err, "the finalizer keeps it")
	return held
}

// runInformer runs inf until the test ends, waits for its sync and
// returns the context it runs in.
func runInformer[T watch.Object](t *testing.T, inf *informer.Informer[T]) context.Context {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- inf.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	require.Eventually(t, inf.HasSynced, 30*time.Second, 5*time.Millisecond) // a bound on a broken run only
	return ctx
}
