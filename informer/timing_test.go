package informer

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/testutil"
)

// The informer's schedule, asserted exactly under testing/synctest: every
// server and client runs on an in-memory network in a bubble with a fake
// clock, so no assertion here depends on the machine's speed.

// cut answers a watch with events, then breaks the connection in the
// middle of the next frame, with no final chunk.
func cut(events ...string) step {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		for _, ev := range events {
			fmt.Fprint(w, ev)
		}
		fmt.Fprint(w, `{"type":"MODIFIED","obj`)
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}
}

func since(t0 time.Time, ts []time.Time) []time.Duration {
	out := make([]time.Duration, len(ts))
	for i, x := range ts {
		out[i] = x.Sub(t0)
	}
	return out
}

// TestBackoffSchedule: failures in a row double the wait up to Max; a list
// that commits or a watch that delivered events resets it; a stream that
// delivered events and then broke resumes at once; one that ended with
// nothing backs off.
func TestBackoffSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := &testutil.MemNet{}
		unavailable := answer(http.StatusServiceUnavailable, statusJSON(503, "ServiceUnavailable"))
		s := newMemScripted(t, n, "api:80",
			unavailable, unavailable, unavailable, unavailable, // the list fails four times
			answer(200, listJSON("10", "", podJSON("a", "5"))), // then commits
			cut(eventJSON("MODIFIED", podJSON("a", "11"))),     // a watch delivers, then breaks
			unavailable,     // the confirmation fails
			confirmed("11"), // then succeeds
			stream(true),    // a watch that ends at once with nothing
			confirmed("11"), // confirmed again
			stream(false),   // and a healthy watch
		)
		opts := memOptions(t, n, "api:80")
		opts.Backoff = Backoff{Initial: time.Second, Max: 4 * time.Second, Jitter: -1}
		inf, err := New(opts)
		require.NoError(t, err)
		t0 := time.Now()
		start(t, inf)
		time.Sleep(time.Minute)
		synctest.Wait()
		q := s.requests()
		require.Len(t, q, 11)
		want := []time.Duration{0, 1 * time.Second, 3 * time.Second, 7 * time.Second, 11 * time.Second, // 1, 2, 4, 4 (Max)
			11 * time.Second, // the watch follows the commit at once
			11 * time.Second, // the cut after an event: confirm at once
			12 * time.Second, // the confirmation failed: the first wait again (the watch had delivered)
			12 * time.Second, // confirmed: watch at once
			14 * time.Second, // that watch ended with nothing: the next wait, 2 s
			14 * time.Second, // confirmed: watch at once
		}
		require.Equal(t, want, since(t0, s.arrivals()))
		requireConfirm(t, q[6], "11")
		require.Equal(t, map[string]string{"ns/a": "11"}, storeRVs(inf))
	})
}

// TestIdleDeadlineEndsASilentWatch: a watch that receives no byte for
// IdleTimeout is ended exactly then, the RV confirmed, and the watch
// resumed after the last event seen, its events reaching the store.
func TestIdleDeadlineEndsASilentWatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := &testutil.MemNet{}
		s := newMemScripted(t, n, "api:80",
			answer(200, listJSON("10", "")),
			stream(false, eventJSON("ADDED", podJSON("a", "11"))), // then silent
			confirmed("11"),
			stream(false, eventJSON("ADDED", podJSON("b", "12"))),
		)
		opts := memOptions(t, n, "api:80")
		opts.IdleTimeout = 30 * time.Second
		inf, err := New(opts)
		require.NoError(t, err)
		t0 := time.Now()
		start(t, inf)
		time.Sleep(45 * time.Second) // the last watch is silent too, and ends at 60 s
		synctest.Wait()
		require.Equal(t, []time.Duration{0, 0, 30 * time.Second, 30 * time.Second}, since(t0, s.arrivals()))
		requireConfirm(t, s.requests()[2], "11")
		require.Equal(t, "11", s.requests()[3].Get("resourceVersion"), "resume after the last event seen")
		require.Equal(t, map[string]string{"ns/a": "11", "ns/b": "12"}, storeRVs(inf))
		require.EqualValues(t, 1, inf.Stats().IdleTimeouts)
	})
}

// TestWatchTimeoutsAreRandomAndResumedAtOnce: each watch asks for a
// timeoutSeconds in [MinWatchTimeout, 2*MinWatchTimeout); the server ending
// it at that deadline is a clean end: the next watch starts at once, from
// the same RV, with no confirmation.
func TestWatchTimeoutsAreRandomAndResumedAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := &testutil.MemNet{}
		untilTimeout := func(w http.ResponseWriter, r *http.Request) {
			secs, _ := strconv.Atoi(r.URL.Query().Get("timeoutSeconds"))
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			time.Sleep(time.Duration(secs) * time.Second)
		}
		steps := []step{answer(200, listJSON("10", ""))}
		for range 5 {
			steps = append(steps, untilTimeout)
		}
		s := newMemScripted(t, n, "api:80", steps...)
		opts := memOptions(t, n, "api:80")
		opts.MinWatchTimeout = time.Minute
		opts.IdleTimeout = -1 // the last watch waits silently for good
		inf, err := New(opts)
		require.NoError(t, err)
		t0 := time.Now()
		start(t, inf)
		time.Sleep(time.Hour)
		synctest.Wait()
		q, at := s.requests(), since(t0, s.arrivals())
		require.Len(t, q, 7, "the list, five watches, and a sixth that waits")
		asked := map[string]bool{}
		for i := 1; i < len(q); i++ {
			require.Equal(t, "1", q[i].Get("watch"), "request %d is a watch: no confirmation after a clean end", i)
			require.Equal(t, "10", q[i].Get("resourceVersion"))
			secs, err := strconv.Atoi(q[i].Get("timeoutSeconds"))
			require.NoError(t, err)
			require.True(t, secs >= 60 && secs < 120, "timeoutSeconds %d outside [60, 120)", secs)
			asked[q[i].Get("timeoutSeconds")] = true
			if i > 1 {
				prev, _ := strconv.Atoi(q[i-1].Get("timeoutSeconds"))
				require.Equal(t, at[i-1]+time.Duration(prev)*time.Second, at[i], "watch %d starts when the last one timed out", i)
			}
		}
		require.Greater(t, len(asked), 1, "timeouts are spread, not all the same")
	})
}

// TestResyncSchedule: a handler that asks for resyncs gets OnUpdate(obj,
// obj) for every object once per ResyncPeriod; one that does not, never.
func TestResyncSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := &testutil.MemNet{}
		newMemScripted(t, n, "api:80", answer(200, listJSON("10", "", podJSON("a", "5"))), stream(false))
		opts := memOptions(t, n, "api:80")
		opts.ResyncPeriod = 10 * time.Second
		inf, err := New(opts)
		require.NoError(t, err)
		with, without := &recorderT{}, &recorderT{}
		_, err = inf.AddHandler(with, HandlerOptions{Resync: true})
		require.NoError(t, err)
		_, err = inf.AddHandler(without, HandlerOptions{})
		require.NoError(t, err)
		start(t, inf)
		time.Sleep(25 * time.Second)
		synctest.Wait()
		require.Equal(t, []string{"add ns/a@5 initial", "update ns/a@5->5", "update ns/a@5->5"}, with.get())
		require.Equal(t, []string{"add ns/a@5 initial"}, without.get())
	})
}

// TestRefusingServerMeetsTheBackoff: a server that answers every watch with
// 410 at once, or every list from "" with 504 ResourceVersionTooLarge,
// gets requests at growing intervals, not in a loop.
func TestRefusingServerMeetsTheBackoff(t *testing.T) {
	gone := stream(true, eventJSON("ERROR", statusJSON(410, "Expired")))
	tooLargeBody := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Timeout: Too large resource version: 9, current: 5","reason":"Timeout","details":{"causes":[{"reason":"ResourceVersionTooLarge","message":"Too large resource version"}]},"code":504}`
	tests := []struct {
		name  string
		steps []step
	}{
		{"every watch 410", []step{answer(200, listJSON("10", "")), gone,
			answer(200, listJSON("10", "")), gone, answer(200, listJSON("10", "")), gone,
			answer(200, listJSON("10", "")), gone, answer(200, listJSON("10", "")), gone}},
		{"every list from empty 504", []step{answer(200, listJSON("10", "")), gone,
			answer(504, tooLargeBody), answer(504, tooLargeBody), answer(504, tooLargeBody), answer(504, tooLargeBody),
			answer(504, tooLargeBody)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := &testutil.MemNet{}
				s := newMemScripted(t, n, "api:80", tt.steps...)
				opts := memOptions(t, n, "api:80")
				opts.Backoff = Backoff{Initial: time.Second, Max: time.Minute, Jitter: -1}
				inf, err := New(opts)
				require.NoError(t, err)
				start(t, inf)
				time.Sleep(10 * time.Minute)
				synctest.Wait()
				at := s.arrivals()
				require.GreaterOrEqual(t, len(at), len(tt.steps), "the script ran to its end")
				// The gaps between the scripted lists grow: 1 s, 2 s, 4 s, ...
				var lists []time.Time
				for i, q := range s.requests()[:len(tt.steps)] {
					if q.Get("watch") == "" {
						lists = append(lists, at[i])
					}
				}
				require.GreaterOrEqual(t, len(lists), 4)
				k := len(lists)
				g1, g2, g3 := lists[k-3].Sub(lists[k-4]), lists[k-2].Sub(lists[k-3]), lists[k-1].Sub(lists[k-2])
				require.True(t, g1 >= time.Second && g2 > g1 && g3 > g2, "gaps between lists %v %v %v do not grow", g1, g2, g3)
			})
		})
	}
}
