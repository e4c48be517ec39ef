package informer

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/testutil"
)

// TestNoOldGivesNoOldObject: with HandlerOptions.NoOld a handler's
// updates come with the zero T as old, in either store and either
// delivery, a watched update, a resync and a relist's update alike; adds
// and deletes are as without it. In a compact store with no decode cache,
// an update then costs one decode, against two without NoOld.
func TestNoOldGivesNoOldObject(t *testing.T) {
	for _, mode := range []StoreMode{StoreCompact, StoreTyped} {
		for _, d := range []Delivery{Coalesce, Ordered} {
			for _, noOld := range []bool{false, true} {
				t.Run(fmt.Sprintf("%v/delivery=%d/noOld=%t", mode, d, noOld), func(t *testing.T) {
					synctest.Test(t, func(t *testing.T) { testNoOld(t, mode, d, noOld) })
				})
			}
		}
	}
}

func testNoOld(t *testing.T, mode StoreMode, d Delivery, noOld bool) {
	n := &testutil.MemNet{}
	rec := &recorderT{}
	newMemScripted(t, n, "api:80",
		answer(200, listJSON("10", "", podJSON("a", "5"), podJSON("b", "6"))),
		when(rec.count(2), stream(false,
			eventJSON("MODIFIED", podJSON("a", "11")),
			eventJSON("MODIFIED", podJSON("a", "12")),
			eventJSON("DELETED", podJSON("b", "13")),
			eventJSON("ERROR", statusJSON(410, "Expired")))),
		when(rec.count(5), answer(200, listJSON("20", "", podJSON("a", "19")))),
		stream(false),
	)
	opts := memOptions(t, n, "api:80")
	opts.Store, opts.DecodeCache = mode, -1
	opts.ResyncPeriod = 10 * time.Minute
	inf, err := New(opts)
	require.NoError(t, err)
	_, err = inf.AddHandler(rec, HandlerOptions{Delivery: d, NoOld: noOld, Resync: true})
	require.NoError(t, err)
	start(t, inf)
	time.Sleep(time.Minute)
	synctest.Wait()
	time.Sleep(10 * time.Minute) // one resync of a@19
	synctest.Wait()
	decodes := inf.Stats().Decodes

	got := rec.get()
	if len(got) >= 2 {
		slices.Sort(got[:2]) // the first list's adds come in no set order
	}
	if d == Ordered {
		want := []string{"add ns/a@5 initial", "add ns/b@6 initial", "update ns/a@5->11", "update ns/a@11->12",
			"delete ns/b@13", "update ns/a@12->19", "update ns/a@19->19"}
		if noOld {
			for i, s := range want {
				want[i] = oldRV.ReplaceAllString(s, "@_->")
			}
		}
		require.Equal(t, want, got)
	}
	// Coalesce may fold changes together in any way the goroutines'
	// order allows: each update it gives comes with or without its old
	// object as asked, and the last is the resync of a@19.
	updates := 0
	for _, s := range got {
		if strings.HasPrefix(s, "update ") {
			updates++
			require.Equal(t, noOld, strings.Contains(s, "@_->"), "%s, noOld %t", s, noOld)
		}
	}
	require.Equal(t, "update ns/a@"+map[bool]string{false: "19", true: "_"}[noOld]+"->19", got[len(got)-1])

	if mode == StoreCompact {
		perUpdate := 2
		if noOld {
			perUpdate = 1
		}
		others := int64(len(got) - updates) // the adds and deletes
		require.EqualValues(t, others+int64(perUpdate*updates), decodes,
			"an add or delete decodes once, an update %d times: %v", perUpdate, got)
	}
}

var oldRV = regexp.MustCompile(`@[0-9]+->`)
