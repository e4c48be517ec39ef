package live

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"
)

// ConnState is where the connection to the server stands.
type ConnState int

const (
	// Connecting: nothing has been heard from the server yet.
	Connecting ConnState = iota
	// Listing: the initial list is arriving; the table is not complete.
	Listing
	// Watching: a watch is open; the table is the server's state.
	Watching
	// Reconnecting: the watch is down and the informer is retrying; the
	// table is the state as of Conn.LastActivity.
	Reconnecting
	// Relisting: the informer is listing again (after a 410, or a server
	// that went back in time); the table is replaced when the list is done.
	Relisting
)

func (s ConnState) String() string {
	switch s {
	case Connecting:
		return "connecting"
	case Listing:
		return "listing"
	case Watching:
		return "watching"
	case Reconnecting:
		return "reconnecting"
	case Relisting:
		return "relisting"
	}
	return fmt.Sprintf("ConnState(%d)", int(s))
}

// Conn is the connection's state as the informer reports it. The zero
// value is Connecting, with nothing heard.
type Conn struct {
	State ConnState
	// Since is when State began; zero if unknown.
	Since time.Time
	// LastError is the informer's last failure, "" when none is pending.
	LastError string
	// LastActivity is when the informer last heard from the server (an
	// event, a bookmark or a list): how stale the table may be. Zero
	// before anything.
	LastActivity time.Time
	// Listed counts the objects received by the list in progress.
	Listed int64
	// Relists counts the lists after the first one.
	Relists int64
	// Refused counts the objects the informer refused to cache (so the
	// table lacks them), and LastRefusal says why it last did; 0 and "" if
	// it never did.
	Refused     int64
	LastRefusal string
}

// quietAfter is how long a watch may stay silent before the view points it
// out: a healthy watch with bookmarks hears from the server about once a
// minute even when nothing changes.
const quietAfter = 2 * time.Minute

// connLine describes c at now as one line of spans.
func connLine(c Conn, now time.Time) Line {
	var l Line
	switch c.State {
	case Watching:
		l = l.add("● watching", StyleGood)
		if !c.Since.IsZero() {
			l = l.add(" for "+human(now.Sub(c.Since)), StyleNormal)
		}
	case Listing, Relisting:
		l = l.add("◌ "+c.State.String(), StyleWarn)
		l = l.add(fmt.Sprintf(": %d objects so far", c.Listed), StyleNormal)
	case Reconnecting:
		l = l.add("○ reconnecting", StyleBad)
		if !c.Since.IsZero() {
			l = l.add(fmt.Sprintf(" since %s (%s)", c.Since.Format(time.TimeOnly), human(now.Sub(c.Since))), StyleBad)
		}
	default:
		l = l.add("◌ connecting", StyleWarn)
	}
	switch {
	case c.LastActivity.IsZero():
	case c.State == Watching && now.Sub(c.LastActivity) > quietAfter:
		l = l.add(" · quiet for "+human(now.Sub(c.LastActivity)), StyleWarn)
	case c.State == Watching:
		l = l.add(" · last heard "+human(now.Sub(c.LastActivity))+" ago", StyleDim)
	default:
		l = l.add(" · table as of "+c.LastActivity.Format(time.TimeOnly), StyleWarn)
	}
	if c.Relists > 0 {
		l = l.add(fmt.Sprintf(" · %d relists", c.Relists), StyleDim)
	}
	if c.Refused > 0 {
		l = l.add(fmt.Sprintf(" · %d objects refused, not shown: %s", c.Refused, c.LastRefusal), StyleWarn)
	}
	if c.LastError != "" && c.State != Watching {
		l = l.add(" · last error: "+c.LastError, StyleBad)
	}
	return l
}

// human is a duration as kubectl prints ages ("5s", "3m2s", "4h").
func human(d time.Duration) string {
	return duration.HumanDuration(max(d, 0))
}
