package suite

import (
	"context"

	"github.com/kwatch/kwatch/kube"
)

// User names a set of credentials a Target hands out.
type User int

const (
	// Admin may do anything.
	Admin User = iota
	// Plain is authenticated but granted nothing: every list is a 403.
	Plain
	// Stranger carries a token the server does not know: every request is a 401.
	Stranger
)

// Target is one API server the suite runs against: the real kube-apiserver
// or the simulator. Implementations are safe for concurrent use.
type Target interface {
	// Name is "real" or "sim"; it names the subtests and the summary line.
	Name() string
	// Config returns fresh client settings for user. The caller may modify them.
	Config(u User) *kube.Config
	// StorageConfig returns admin settings for a server whose watches read
	// storage rather than a cache, so that a watch from a compacted RV is
	// refused with an ERROR event. It may be the same server as Config's.
	StorageConfig() *kube.Config
	// Expire returns once rv is older than the oldest resourceVersion the
	// server serves: a list at rv with resourceVersionMatch=Exact, a
	// continue token from a list at rv and a watch from rv on StorageConfig's
	// server are all refused with 410 afterwards.
	Expire(ctx context.Context, rv string) error
}
