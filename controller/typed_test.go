package controller_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/kube"
)

// The zero TypedResource names no resource: every typed entry point
// refuses it when it is given, not at the first list.
func TestZeroTypedResourceIsRefused(t *testing.T) {
	_, c := start(t)
	m, err := controller.NewManager(c, controller.ManagerOptions{Logger: quiet()})
	require.NoError(t, err)
	var zero kube.TypedResource[*Obj]
	_, err = controller.Cache(m, zero)
	require.ErrorContains(t, err, "zero kube.TypedResource")
	_, err = controller.Informer(m, zero)
	require.ErrorContains(t, err, "zero kube.TypedResource")
	require.ErrorContains(t, controller.Index(m, zero, "x", nil), "zero kube.TypedResource")
	noop := func(context.Context, controller.Key) (controller.Result, error) { return controller.Result{}, nil }
	_, err = controller.New(m, controller.Config[*Obj]{Name: "a", For: zero, Reconcile: noop})
	require.ErrorContains(t, err, "needs Name and For")
	_, err = controller.New(m, controller.Config[*Obj]{Name: "b", For: kube.Typed[*Obj](kube.ConfigMaps), Reconcile: noop,
		Owns: []controller.Source{controller.Owns(zero)}})
	require.ErrorContains(t, err, "zero kube.TypedResource")
}

// A malformed scope is refused where a cache would be built on it, naming
// the field, before any request: a cache, an index, a controller's
// ForScope or a source's scope, and the manager's namespace.
func TestMalformedScopeIsRefused(t *testing.T) {
	_, c := start(t)
	_, err := controller.NewManager(c, controller.ManagerOptions{Namespace: "No/Such", Logger: quiet()})
	require.ErrorContains(t, err, "Scope.Namespace")
	m, err := controller.NewManager(c, controller.ManagerOptions{Logger: quiet()})
	require.NoError(t, err)
	cms := kube.Typed[*Obj](kube.ConfigMaps)
	bad := kube.Scope{LabelSelector: "app in ("}
	_, err = controller.CacheIn(m, cms, bad)
	require.ErrorContains(t, err, "Scope.LabelSelector")
	require.ErrorContains(t, controller.IndexIn(m, cms, kube.Scope{FieldSelector: "nope"}, "x", nil), "Scope.FieldSelector")
	noop := func(context.Context, controller.Key) (controller.Result, error) { return controller.Result{}, nil }
	_, err = controller.New(m, controller.Config[*Obj]{Name: "a", For: cms, ForScope: bad, Reconcile: noop})
	require.ErrorContains(t, err, "Scope.LabelSelector")
	_, err = controller.New(m, controller.Config[*Obj]{Name: "b", For: cms, Reconcile: noop,
		Owns: []controller.Source{controller.OwnsIn(cms, bad)}})
	require.ErrorContains(t, err, "Scope.LabelSelector")
}
