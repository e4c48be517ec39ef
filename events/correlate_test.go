package events

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestCorrelator(t *testing.T) {
	c := newCorrelator(time.Minute, 2)
	n := 0
	name := func() string { n++; return "e" + strconv.Itoa(n) }
	k := func(msg string) aggKey { return aggKey{ref: pod("web"), typ: TypeNormal, reason: "R", message: msg} }
	tests := []struct {
		key        aggKey
		at         time.Duration
		wantName   string
		wantCount  int32
		wantRepeat bool
		wantFirst  time.Duration
	}{
		{k("a"), 0, "e1", 1, false, 0},
		{k("a"), 30 * time.Second, "e1", 2, true, 0},
		{k("a"), 90 * time.Second, "e1", 3, true, 0},                   // within a minute of the last, not the first
		{k("a"), 80 * time.Second, "e1", 4, true, 0},                   // earlier than the last: taken as the last
		{k("a"), 151 * time.Second, "e2", 1, false, 151 * time.Second}, // past the window: a new Event
		{k("b"), 151 * time.Second, "e3", 1, false, 151 * time.Second},
		{k("c"), 151 * time.Second, "e4", 1, false, 151 * time.Second}, // evicts a, the least recently seen
		{k("a"), 152 * time.Second, "e5", 1, false, 152 * time.Second}, // forgotten: new
	}
	for i, tt := range tests {
		s, repeat := c.observe(tt.key, "demo", t0.Add(tt.at), name)
		if s.name != tt.wantName || s.count != tt.wantCount || repeat != tt.wantRepeat || !s.first.Equal(t0.Add(tt.wantFirst)) {
			t.Errorf("row %d: observe(%s at +%v) = %s count %d repeat %v first +%v; want %s count %d repeat %v first +%v",
				i, tt.key.message, tt.at, s.name, s.count, repeat, s.first.Sub(t0), tt.wantName, tt.wantCount, tt.wantRepeat, tt.wantFirst)
		}
		if c.len() > 2 {
			t.Fatalf("row %d: %d entries, bound 2", i, c.len())
		}
	}
	c.forget(k("a"))
	_, repeat := c.observe(k("a"), "demo", t0.Add(153*time.Second), name)
	require.False(t, repeat, "a forgotten key starts a new Event")
}

func TestObjectLimiter(t *testing.T) {
	l := newObjectLimiter(time.Minute, 2, 2)
	a, b, c := limitKeyOf(pod("a")), limitKeyOf(pod("b")), limitKeyOf(pod("c"))
	tests := []struct {
		key  limitKey
		at   time.Duration
		want bool
	}{
		{a, 0, true},
		{a, 0, true},
		{a, 0, false},                // burst of 2 spent
		{b, 0, true},                 // another object has its own bucket
		{a, 30 * time.Second, false}, // half a token
		{a, time.Minute, true},       // one token a minute
		{c, time.Minute, true},       // a third object: drops b's bucket, refilled, and keeps a's
		{a, time.Minute, false},      // kept: still empty
		{b, time.Minute, true},       // a fourth bucket: none is full, so all are dropped
		{a, time.Minute, true},       // a fresh bucket for a
	}
	for i, tt := range tests {
		if got := l.allowAt(tt.key, t0.Add(tt.at)); got != tt.want {
			t.Errorf("row %d: allowAt(%s, +%v) = %v, want %v", i, tt.key.name, tt.at, got, tt.want)
		}
		if len(l.buckets) > 2 {
			t.Fatalf("row %d: %d buckets, bound 2", i, len(l.buckets))
		}
	}
}

func TestEventName(t *testing.T) {
	long := strings.Repeat("a", 250)
	tests := []struct {
		object, want string
	}{
		{"web-1", "web-1.17f"},
		{"web-1.example.com", "web-1.example.com.17f"},
		{"system:aggregate-to-edit", "system-aggregate-to-edit.17f"},
		{"Upper_Case", "upper-case.17f"},
		{":odd:", "odd.17f"},
		{"::", "17f"},
		{long, long[:249] + ".17f"},
		{strings.Repeat("a", 248) + "-b", strings.Repeat("a", 248) + ".17f"}, // the cut leaves a '-' at the end
	}
	for _, tt := range tests {
		got := eventName(tt.object, "17f")
		if got != tt.want {
			t.Errorf("eventName(%q) = %q, want %q", tt.object, got, tt.want)
		}
		if len(got) > maxNameLength {
			t.Errorf("eventName(%q) is %d bytes, over %d", tt.object, len(got), maxNameLength)
		}
	}
}
