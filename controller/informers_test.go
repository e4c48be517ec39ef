package controller_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/kube"
)

// The manager is the one owner of its informers: a reader and a handler
// of the same type and resource share one informer (one watch), one asked
// for while Run runs starts at once, Run's end stops every one, and what
// Informer hands out can neither run nor reconfigure it.
func TestManagerKeepsItsInformers(t *testing.T) {
	h, c := start(t)
	require.NoError(t, h.Server.EnsureNamespace("other"))
	_, err := h.Server.Create("configmaps", []byte(`{"metadata":{"namespace":"demo","name":"a"}}`))
	require.NoError(t, err)
	cms := kube.Typed[*Obj](kube.ConfigMaps)
	m, err := controller.NewManager(c, controller.ManagerOptions{Logger: quiet()})
	require.NoError(t, err)
	inf, err := controller.Informer(m, cms)
	require.NoError(t, err)
	reader, err := controller.Cache(m, cms)
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	wait, stopWait := context.WithTimeout(ctx, waitLong)
	defer stopWait()
	require.True(t, inf.WaitForSync(wait))
	_, ok, err := reader.Get(ctx, controller.Key{Namespace: "demo", Name: "a"})
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, 1, inf.Store().Len())
	require.Eventually(t, func() bool { return h.Server.Stats().ActiveWatches == 1 }, waitLong, tick,
		"the reader and the informer's user share one watch")

	late, err := controller.InformerIn(m, cms, kube.Scope{Namespace: "other"})
	require.NoError(t, err)
	require.True(t, late.WaitForSync(wait), "an informer built while Run runs starts at once")
	require.Eventually(t, func() bool { return h.Server.Stats().ActiveWatches == 2 }, waitLong, tick)
	require.Len(t, m.Health(), 2)

	cancel()
	require.NoError(t, <-done)
	require.Eventually(t, func() bool { return h.Server.Stats().ActiveWatches == 0 }, waitLong, tick,
		"Run's end stopped every informer")

	handle := reflect.TypeFor[*controller.SharedInformer[*Obj]]()
	for _, name := range []string{"Run", "SetTransform", "AddRawHandler"} {
		_, has := handle.MethodByName(name)
		require.False(t, has, "SharedInformer has no %s", name)
	}
}
