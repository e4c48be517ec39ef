package suite

import (
	"fmt"
	"sort"
	"sync"
	"time"
)

// timeline records each candidate's leading intervals, all on the
// machine's real-time clock (time.Now in the test process, and the
// candidate processes' own time.Now on the same machine). Safe for
// concurrent use.
type timeline struct {
	mu   sync.Mutex
	open map[string]time.Time // candidate -> start of its current leadership
	done []interval
}

type interval struct {
	who        string
	start, end time.Time
}

func newTimeline() *timeline { return &timeline{open: map[string]time.Time{}} }

func (tl *timeline) start(who string, at time.Time) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.open[who] = at.Round(0)
}

// stop closes who's open interval, if any.
func (tl *timeline) stop(who string, at time.Time) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if s, ok := tl.open[who]; ok {
		tl.done = append(tl.done, interval{who: who, start: s, end: at.Round(0)})
		delete(tl.open, who)
	}
}

// leading returns who leads now (by the open intervals) and since when.
func (tl *timeline) leading() (string, time.Time, bool) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	for who, s := range tl.open {
		return who, s, true
	}
	return "", time.Time{}, false
}

// overlaps returns every pair of intervals of different candidates that
// share any instant, open ones included (as if they ended now), and the
// intervals in order of their start.
func (tl *timeline) overlaps() ([]string, []interval) {
	tl.mu.Lock()
	all := append([]interval(nil), tl.done...)
	for who, s := range tl.open {
		all = append(all, interval{who: who, start: s, end: time.Now().Round(0)})
	}
	tl.mu.Unlock()
	sort.Slice(all, func(i, j int) bool { return all[i].start.Before(all[j].start) })
	var bad []string
	for i := range all {
		for j := i + 1; j < len(all); j++ {
			if all[j].start.Before(all[i].end) && all[i].who != all[j].who {
				bad = append(bad, fmt.Sprintf("%s led %s-%s and %s from %s", all[i].who,
					all[i].start.Format(time.StampMicro), all[i].end.Format(time.StampMicro),
					all[j].who, all[j].start.Format(time.StampMicro)))
			}
		}
	}
	return bad, all
}
