package shard

import (
	"encoding/binary"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
)

// DefaultVirtualNodes is the number of points each member has on the
// ring. With 512, the busiest of 3 members holds at most 1.25 times the
// mean of 1,000 keys (TestRingBalance checks it over many member names).
const DefaultVirtualNodes = 512

// Ring is a consistent hash ring over a set of members, each placed at
// VirtualNodes points. A key belongs to the member of the first point at
// or after the key's hash, wrapping around. Adding a member moves to it
// about 1/N of the keys and no key between other members; removing one
// moves only its own keys.
//
// A Ring is immutable once built and safe for concurrent use. The nil
// *Ring and a Ring without members own nothing: Owner returns "".
type Ring struct {
	members []string // sorted, unique
	points  []point  // sorted by hash
	version string
}

type point struct {
	hash   uint64
	member int32 // index into members
}

// NewRing builds the ring of members (in any order; duplicates and ""
// are dropped) with vnodes points each (DefaultVirtualNodes if vnodes <= 0).
// Every replica of one ring must use the same vnodes: it is part of the
// version.
func NewRing(members []string, vnodes int) *Ring {
	if vnodes <= 0 {
		vnodes = DefaultVirtualNodes
	}
	ms := slices.Clone(members)
	slices.Sort(ms)
	ms = slices.Compact(ms)
	if len(ms) > 0 && ms[0] == "" {
		ms = ms[1:]
	}
	r := &Ring{members: ms, version: versionOf(ms, vnodes)}
	r.points = make([]point, 0, len(ms)*vnodes)
	var buf []byte
	for i, m := range ms {
		for v := range vnodes {
			buf = strconv.AppendInt(append(append(buf[:0], m...), '#'), int64(v), 10)
			r.points = append(r.points, point{hash: hashBytes(buf), member: int32(i)})
		}
	}
	slices.SortFunc(r.points, func(a, b point) int {
		if a.hash != b.hash {
			if a.hash < b.hash {
				return -1
			}
			return 1
		}
		return strings.Compare(ms[a.member], ms[b.member]) // ties broken the same on every replica
	})
	return r
}

// Owner is the member key belongs to, "" for an empty ring.
func (r *Ring) Owner(key string) string {
	if r == nil || len(r.points) == 0 {
		return ""
	}
	h := hashBytes([]byte(key))
	i, _ := slices.BinarySearchFunc(r.points, h, func(p point, h uint64) int {
		switch {
		case p.hash < h:
			return -1
		case p.hash > h:
			return 1
		}
		return 0
	})
	if i == len(r.points) {
		i = 0
	}
	return r.members[r.points[i].member]
}

// Members are the ring's members, sorted. The slice must not be changed.
func (r *Ring) Members() []string {
	if r == nil {
		return nil
	}
	return r.members
}

// Has reports whether m is a member.
func (r *Ring) Has(m string) bool {
	if r == nil {
		return false
	}
	_, ok := slices.BinarySearch(r.members, m)
	return ok
}

// Version names the ring: a hash of its sorted members and its virtual
// node count. Replicas that see the same members compute the same
// version; it is what each publishes as adopted.
func (r *Ring) Version() string {
	if r == nil {
		return ""
	}
	return r.version
}

func versionOf(sorted []string, vnodes int) string {
	h := fnv.New64a()
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(vnodes))
	h.Write(n[:])
	for _, m := range sorted {
		binary.BigEndian.PutUint64(n[:], uint64(len(m)))
		h.Write(n[:])
		h.Write([]byte(m))
	}
	return strconv.FormatUint(h.Sum64(), 36)
}

// hashBytes is FNV-1a followed by a 64-bit finalizer (splitmix64's): FNV
// alone leaves similar strings ("a#1", "a#2") close together, which
// would cluster one member's points.
func hashBytes(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}
