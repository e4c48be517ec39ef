package sim

import (
	"fmt"
	"time"
)

// Documented defaults for Options. Each zero field of Options takes the value here.
const (
	// DefaultHistorySize is how many events the server retains for watches and for
	// lists at an older resourceVersion. It also bounds how far a watcher may lag behind
	// the newest event before it is terminated.
	DefaultHistorySize = 10000
	// DefaultBookmarkInterval matches the real server's roughly one bookmark a minute.
	DefaultBookmarkInterval = 60 * time.Second
	// DefaultDeadlineBookmarkLead is how long before timeoutSeconds ends a watch the
	// real server's watch cache sends its last BOOKMARK.
	DefaultDeadlineBookmarkLead = 2 * time.Second
	// DefaultTooLargeWait is how long a list at a resourceVersion ahead of the server waits
	// for it before answering 504; the real server waits about 3 s.
	DefaultTooLargeWait = 3 * time.Second
	// DefaultMaxRequestBytes bounds a create, update or patch body (the real server's limit is 3 MiB).
	DefaultMaxRequestBytes = 3 << 20
	// DefaultMaxWatchers bounds concurrently open watch streams; more are refused with 429.
	DefaultMaxWatchers = 100000
	// DefaultMaxStreamsPerConnection is the HTTP/2 concurrent-stream limit, as the
	// real server's default (client-go multiplexes every watch over one connection).
	DefaultMaxStreamsPerConnection = 1000
)

// Options configures a Server. The zero value is a usable plain-HTTP server with the
// default resources, no authentication and the defaults above.
type Options struct {
	// HistorySize is the number of events retained (the "watch cache" window). Zero means
	// DefaultHistorySize. A watcher that falls this many events behind is terminated.
	HistorySize int
	// HistoryWindow additionally expires events older than this for new watches and
	// exact lists (a time-based window like the real cache's). Zero means no time limit.
	HistoryWindow time.Duration
	// BookmarkInterval is the period of BOOKMARK events on watches that allow them.
	// Zero means DefaultBookmarkInterval.
	BookmarkInterval time.Duration
	// DeadlineBookmarkLead is how long before timeoutSeconds ends a watch that allows
	// bookmarks the server sends one more BOOKMARK, if the watched resource has changed
	// since the watch started (anywhere: another namespace, outside the selector), as
	// the real watch cache does. Zero means DefaultDeadlineBookmarkLead; negative turns
	// the pre-deadline bookmark off.
	DeadlineBookmarkLead time.Duration
	// TooLargeWait is how long a list waits for a resourceVersion ahead of the server
	// before failing with 504 ResourceVersionTooLarge. Zero means DefaultTooLargeWait;
	// negative means answer at once.
	TooLargeWait time.Duration
	// MaxRequestBytes bounds request bodies. Zero means DefaultMaxRequestBytes.
	MaxRequestBytes int64
	// MaxWatchers bounds open watch streams. Zero means DefaultMaxWatchers.
	MaxWatchers int
	// MaxStreamsPerConnection bounds concurrent HTTP/2 streams per connection. Zero
	// means DefaultMaxStreamsPerConnection.
	MaxStreamsPerConnection int
	// BearerToken is the admin's token: a request carrying it as "Authorization:
	// Bearer <token>" may do anything. When BearerToken or Users is set, every request
	// except /healthz, /livez and /readyz needs a known token (401 otherwise). Empty
	// (and no Users) means no authentication: every request is the admin's.
	BearerToken string
	// Users are further identities with their own tokens, each allowed only what its
	// Rules grant (403 Forbidden otherwise, with the real server's message). Nil
	// means none.
	Users []User
	// TLS makes Serve speak TLS (HTTP/2 negotiated by ALPN) with a self-signed
	// certificate generated in memory by New; see Server.CACertPEM.
	TLS bool
	// TLSHosts are extra DNS names or IPs for the certificate besides 127.0.0.1, ::1
	// and localhost. Zero means none.
	TLSHosts []string
	// Seed makes generated uids, names and fault randomness reproducible. Zero means 1.
	Seed uint64
	// Clock supplies creation timestamps, table ages and the history window (which
	// assumes the clock does not run backwards). Nil means time.Now.
	Clock func() time.Time
	// Resources are registered in addition to the default ones. Nil means none.
	Resources []ResourceInfo
	// DisableAdmin turns off the /sim/ admin endpoints (faults and stats). False means
	// they are served.
	DisableAdmin bool
}

// withDefaults returns a copy of o with zero fields replaced by defaults, or an error
// naming the first invalid field.
func (o Options) withDefaults() (Options, error) {
	switch {
	case o.HistorySize < 0:
		return o, fmt.Errorf("sim: Options.HistorySize must be >= 0, got %d", o.HistorySize)
	case o.HistoryWindow < 0:
		return o, fmt.Errorf("sim: Options.HistoryWindow must be >= 0, got %v", o.HistoryWindow)
	case o.BookmarkInterval < 0:
		return o, fmt.Errorf("sim: Options.BookmarkInterval must be >= 0, got %v", o.BookmarkInterval)
	case o.MaxRequestBytes < 0:
		return o, fmt.Errorf("sim: Options.MaxRequestBytes must be >= 0, got %d", o.MaxRequestBytes)
	case o.MaxWatchers < 0:
		return o, fmt.Errorf("sim: Options.MaxWatchers must be >= 0, got %d", o.MaxWatchers)
	case o.MaxStreamsPerConnection < 0:
		return o, fmt.Errorf("sim: Options.MaxStreamsPerConnection must be >= 0, got %d", o.MaxStreamsPerConnection)
	}
	if err := validateUsers(o.Users, o.BearerToken); err != nil {
		return o, err
	}
	o.Users = cloneUsers(o.Users)
	if o.HistorySize == 0 {
		o.HistorySize = DefaultHistorySize
	}
	if o.BookmarkInterval == 0 {
		o.BookmarkInterval = DefaultBookmarkInterval
	}
	if o.DeadlineBookmarkLead == 0 {
		o.DeadlineBookmarkLead = DefaultDeadlineBookmarkLead
	}
	if o.TooLargeWait == 0 {
		o.TooLargeWait = DefaultTooLargeWait
	} else if o.TooLargeWait < 0 {
		o.TooLargeWait = 0
	}
	if o.MaxRequestBytes == 0 {
		o.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if o.MaxWatchers == 0 {
		o.MaxWatchers = DefaultMaxWatchers
	}
	if o.MaxStreamsPerConnection == 0 {
		o.MaxStreamsPerConnection = DefaultMaxStreamsPerConnection
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	return o, nil
}
