package controller_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kwatch/kwatch/client"
	"github.com/kwatch/kwatch/controller"
	"github.com/kwatch/kwatch/kube"
)

// replicaSets pairs the tests' Obj with the replicasets resource, as an
// owner.
var replicaSets = kube.Typed[*Obj](kube.ReplicaSets)

func TestSetControllerReference(t *testing.T) {
	rs := &Obj{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "web", UID: "u-web"}}
	other := ownerRef("ReplicaSet", "apps/v1", "api", true)
	plain := ownerRef("ConfigMap", "v1", "cfg", false)
	tests := []struct {
		name    string
		owner   *Obj
		refs    []metav1.OwnerReference
		want    []string // kind/name/controller of the resulting refs
		wantErr string
	}{
		{"no refs", rs, nil, []string{"ReplicaSet/web/true"}, ""},
		{"keeps other owners", rs, []metav1.OwnerReference{*plain}, []string{"ConfigMap/cfg/false", "ReplicaSet/web/true"}, ""},
		{"replaces its own", rs, []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "web", UID: "u-web"}}, []string{"ReplicaSet/web/true"}, ""},
		{"another controller", rs, []metav1.OwnerReference{*other}, nil, "already controlled by ReplicaSet api"},
		{"owner without uid", &Obj{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "new"}}, nil, nil, "has no uid"},
		{"other namespace", &Obj{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "web", UID: "u-p"}}, nil, nil, "own namespace only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &Obj{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "p", OwnerReferences: tt.refs}}
			err := controller.SetControllerReference(replicaSets, tt.owner, pod)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				require.Equal(t, tt.refs, pod.OwnerReferences, "unchanged on error")
				return
			}
			require.NoError(t, err)
			var got []string
			for _, r := range pod.OwnerReferences {
				got = append(got, r.Kind+"/"+r.Name+"/"+map[bool]string{true: "true", false: "false"}[r.Controller != nil && *r.Controller])
			}
			require.Equal(t, tt.want, got)
			ref := metav1.GetControllerOf(pod)
			require.Equal(t, "apps/v1", ref.APIVersion)
			require.True(t, *ref.BlockOwnerDeletion)
		})
	}
	pod := &Obj{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: "p", OwnerReferences: []metav1.OwnerReference{*other}}}
	var owned *controller.AlreadyOwnedError
	require.True(t, errors.As(controller.SetControllerReference(replicaSets, rs, pod), &owned))
	require.Equal(t, "demo/p", owned.Object)
	require.Equal(t, "api", owned.Owner.Name)
	require.ErrorContains(t, controller.SetControllerReference(kube.TypedResource[*Obj]{}, rs, pod), "zero kube.TypedResource")
}

// List takes a label selector as a string, a labels.Selector and an
// object's metav1.LabelSelector; all given must match.
func TestListSelectors(t *testing.T) {
	_, c := start(t)
	m, err := controller.NewManager(c, controller.ManagerOptions{Logger: quiet()})
	require.NoError(t, err)
	cache, err := controller.Cache(m, kube.Typed[*Obj](kube.ConfigMaps))
	require.NoError(t, err)
	cms := client.For(c, kube.Typed[*Obj](kube.ConfigMaps), client.Options{})
	for name, l := range map[string]map[string]string{
		"a": {"app": "web", "tier": "fe"}, "b": {"app": "web", "tier": "db"}, "c": {"app": "api"}, "d": nil,
	} {
		o := obj(name, nil)
		o.Labels = l
		_, err := cms.Create(context.Background(), o, client.CreateOptions{})
		require.NoError(t, err)
	}
	run(t, m)
	list := func(opts controller.ListOptions) []string {
		got, err := cache.List(context.Background(), opts)
		require.NoError(t, err)
		var out []string
		for _, o := range got {
			out = append(out, o.Name)
		}
		slices.Sort(out)
		return out
	}
	require.Eventually(t, func() bool { return len(list(controller.ListOptions{})) == 4 }, waitLong, tick)
	tests := []struct {
		name string
		opts controller.ListOptions
		want []string
	}{
		{"labels.Selector", controller.ListOptions{Selector: labels.SelectorFromSet(labels.Set{"app": "web"})}, []string{"a", "b"}},
		{"metav1 matchLabels", controller.ListOptions{MatchSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}, []string{"a", "b"}},
		{"metav1 expressions", controller.ListOptions{MatchSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web", "api"}}}}}, []string{"a", "b", "c"}},
		{"empty metav1 matches all", controller.ListOptions{MatchSelector: &metav1.LabelSelector{}}, []string{"a", "b", "c", "d"}},
		{"all must match", controller.ListOptions{LabelSelector: "tier", Selector: labels.SelectorFromSet(labels.Set{"app": "web"}),
			MatchSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "db"}}}, []string{"b"}},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, list(tt.opts), tt.name)
	}
	_, err = cache.List(context.Background(), controller.ListOptions{MatchSelector: &metav1.LabelSelector{
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}}})
	require.ErrorContains(t, err, "MatchSelector")
}

// syncBuffer is a bytes.Buffer safe for the reconcile's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A reconcile's LoggerFrom carries the controller and the key.
func TestReconcileLoggerCarriesControllerAndKey(t *testing.T) {
	_, c := start(t)
	var out syncBuffer
	m, err := controller.NewManager(c, controller.ManagerOptions{Logger: slog.New(slog.NewTextHandler(&out, nil))})
	require.NoError(t, err)
	_, err = controller.New(m, controller.Config[*Obj]{Name: "logs", For: kube.Typed[*Obj](kube.ConfigMaps),
		Reconcile: func(ctx context.Context, key controller.Key) (controller.Result, error) {
			controller.LoggerFrom(ctx).Info("reconciling")
			return controller.Result{}, nil
		}})
	require.NoError(t, err)
	_, err = client.For(c, kube.Typed[*Obj](kube.ConfigMaps), client.Options{}).Create(context.Background(), obj("x", nil), client.CreateOptions{})
	require.NoError(t, err)
	run(t, m)
	require.Eventually(t, func() bool {
		for _, line := range strings.Split(out.String(), "\n") {
			if strings.Contains(line, "msg=reconciling") {
				return strings.Contains(line, "controller=logs") && strings.Contains(line, "key=demo/x")
			}
		}
		return false
	}, waitLong, tick, "log: %s", &out)
	require.Equal(t, slog.Default(), controller.LoggerFrom(context.Background()))
}
