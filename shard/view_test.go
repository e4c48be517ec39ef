package shard

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/leader"
)

func lease(name, rv, holder string, durSec int32, adopted string) *leader.Lease {
	l := &leader.Lease{}
	l.Name, l.ResourceVersion = name, rv
	l.Annotations = map[string]string{AdoptedAnnotation: adopted}
	l.Spec.HolderIdentity = &holder
	l.Spec.LeaseDurationSeconds = &durSec
	return l
}

// step is one list of the ring's Leases, at an offset from the start.
type step struct {
	at    time.Duration
	items []*leader.Lease
}

// TestViewLiveness: a member is dead once its Lease has not changed for
// its own lease duration since this observer saw it change, by the
// observer's clock; a released Lease is out at once; a Lease that
// vanishes is judged by the same rule, not dropped.
func TestViewLiveness(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		steps []step
		at    time.Duration
		want  []string
	}{
		{name: "fresh lease is live", at: 14 * time.Second, want: []string{"me", "b"},
			steps: []step{{0, []*leader.Lease{lease("r-b", "1", "b", 15, "")}}}},
		{name: "unchanged for its duration: dead", at: 15 * time.Second, want: []string{"me"},
			steps: []step{{0, []*leader.Lease{lease("r-b", "1", "b", 15, "")}}, {10 * time.Second, []*leader.Lease{lease("r-b", "1", "b", 15, "")}}}},
		{name: "a change restarts the wait", at: 20 * time.Second, want: []string{"me", "b"},
			steps: []step{{0, []*leader.Lease{lease("r-b", "1", "b", 15, "")}}, {10 * time.Second, []*leader.Lease{lease("r-b", "2", "b", 15, "")}}}},
		{name: "its own duration counts", at: 5 * time.Second, want: []string{"me"},
			steps: []step{{0, []*leader.Lease{lease("r-b", "1", "b", 4, "")}}}},
		{name: "released: out at once", at: time.Second, want: []string{"me"},
			steps: []step{{0, []*leader.Lease{lease("r-b", "1", "", 15, "")}}}},
		{name: "vanished: still live until its duration", at: 14 * time.Second, want: []string{"me", "b"},
			steps: []step{{0, []*leader.Lease{lease("r-b", "1", "b", 15, "")}}, {time.Second, nil}}},
		{name: "own lease is not another member", at: time.Second, want: []string{"me"},
			steps: []step{{0, []*leader.Lease{lease("r-me", "1", "me", 15, "")}}}},
	} {
		var v view
		for _, s := range tc.steps {
			v.observeAt(s.items, t0.Add(s.at))
		}
		got := NewRing(v.live("me", t0.Add(tc.at)), 0).Members()
		require.Equal(t, NewRing(tc.want, 0).Members(), got, tc.name)
	}
}

func TestViewAdopted(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	var v view
	v.observeAt([]*leader.Lease{lease("r-b", "1", "b", 15, "v1"), lease("r-c", "1", "c", 15, "v2")}, t0)
	require.Equal(t, map[string]string{"b": "v1", "c": "v2"}, v.adopted(t0))
	v.observeAt([]*leader.Lease{lease("r-b", "2", "b", 15, "v1")}, t0.Add(14*time.Second))
	require.Equal(t, map[string]string{"b": "v1"}, v.adopted(t0.Add(16*time.Second)), "c is dead")
}

func TestConfigValidation(t *testing.T) {
	c := newTestClient(t)
	for _, tc := range []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"defaults", Config{Client: c, Ring: "r", Identity: "a"}, true},
		{"no client", Config{Ring: "r", Identity: "a"}, false},
		{"no ring", Config{Client: c, Identity: "a"}, false},
		{"no identity", Config{Client: c, Ring: "r"}, false},
		{"fractional lease", Config{Client: c, Ring: "r", Identity: "a", Timing: leader.Timing{LeaseDuration: 1500 * time.Millisecond}}, false},
		{"renew not below lease", Config{Client: c, Ring: "r", Identity: "a", Timing: leader.Timing{LeaseDuration: 10 * time.Second}}, false},
		{"retry not below renew", Config{Client: c, Ring: "r", Identity: "a", Timing: leader.Timing{RetryPeriod: 10 * time.Second}}, false},
	} {
		_, err := New(tc.cfg)
		require.Equal(t, tc.ok, err == nil, "%s: %v", tc.name, err)
	}
	require.NotEqual(t, LeaseName("r", "a"), LeaseName("r", "b"))
}
