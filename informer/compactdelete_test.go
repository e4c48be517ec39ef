package informer

import (
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/internal/rig/testutil"
)

// badPodJSON is a version of a pod that the metadata scan accepts and a
// testPod does not decode (spec.nodeName is a number).
func badPodJSON(name, rv string) string {
	return fmt.Sprintf(`{"kind":"Pod","apiVersion":"v1","metadata":{"name":%q,"namespace":"ns","resourceVersion":%q,"uid":"u-%s"},"spec":{"nodeName":5}}`, name, rv, name)
}

// TestCompactHandlerGetsEveryDelete: in a compact store a handler is not
// given a version that does not decode; it keeps the last one it was
// given, its next update starts from that one, and a delete always reaches
// it: with the final state when that decodes, else with the last version
// it was given and finalStateUnknown set. A handler that never saw the
// object gets nothing. With either delivery, and with HandlerOptions.NoOld,
// which knows what the handler was given without decoding it.
func TestCompactHandlerGetsEveryDelete(t *testing.T) {
	tests := []struct {
		name   string
		listed []string
		events []string
		want   []string
	}{
		{"a version that does not decode, then a delete whose final state does not either",
			[]string{podJSON("a", "5")},
			[]string{eventJSON("MODIFIED", badPodJSON("a", "11")), eventJSON("DELETED", badPodJSON("a", "12"))},
			[]string{"add ns/a@5 initial", "delete ns/a@5 unknown"}},
		{"a delete whose final state does not decode",
			[]string{podJSON("a", "5")},
			[]string{eventJSON("DELETED", badPodJSON("a", "12"))},
			[]string{"add ns/a@5 initial", "delete ns/a@5 unknown"}},
		{"a delete whose final state decodes, after a version that does not",
			[]string{podJSON("a", "5")},
			[]string{eventJSON("MODIFIED", badPodJSON("a", "11")), eventJSON("DELETED", podJSON("a", "12"))},
			[]string{"add ns/a@5 initial", "delete ns/a@12"}},
		{"an update after versions that do not decode starts from the last one given",
			[]string{podJSON("a", "5")},
			[]string{eventJSON("MODIFIED", badPodJSON("a", "11")), eventJSON("MODIFIED", badPodJSON("a", "12")),
				eventJSON("MODIFIED", podJSON("a", "13"))},
			[]string{"add ns/a@5 initial", "update ns/a@5->13"}},
		{"an object first seen in a version that does not decode comes as an add",
			nil,
			[]string{eventJSON("ADDED", badPodJSON("a", "11")), eventJSON("MODIFIED", podJSON("a", "13"))},
			[]string{"add ns/a@13"}},
		{"an object the handler never saw is not deleted",
			nil,
			[]string{eventJSON("ADDED", badPodJSON("a", "11")), eventJSON("DELETED", badPodJSON("a", "12"))},
			nil},
		{"a delete inferred by a relist, of an object whose last version does not decode",
			[]string{podJSON("a", "5")},
			[]string{eventJSON("MODIFIED", badPodJSON("a", "11")), eventJSON("ERROR", statusJSON(410, "Expired"))},
			[]string{"add ns/a@5 initial", "delete ns/a@5 unknown"}},
	}
	for _, tt := range tests {
		for _, c := range []struct {
			d     Delivery
			noOld bool
		}{{Coalesce, false}, {Ordered, false}, {Coalesce, true}, {Ordered, true}} {
			d := c.d
			t.Run(fmt.Sprintf("%s/delivery=%d/noOld=%t", tt.name, d, c.noOld), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					n := &testutil.MemNet{}
					rec := &recorderT{}
					newMemScripted(t, n, "api:80",
						answer(200, listJSON("10", "", tt.listed...)),
						// Once the handler has the list: else a coalescing
						// handler may never see the listed version at all.
						when(rec.count(len(tt.listed)), stream(false, tt.events...)),
						answer(200, listJSON("20", "")), // the relist after a 410: a is gone
						stream(false),
					)
					opts := memOptions(t, n, "api:80")
					opts.Store = StoreCompact
					inf, err := New(opts)
					require.NoError(t, err)
					_, err = inf.AddHandler(rec, HandlerOptions{Delivery: d, NoOld: c.noOld})
					require.NoError(t, err)
					start(t, inf)
					time.Sleep(time.Minute)
					synctest.Wait()
					want := slices.Clone(tt.want)
					for i, s := range want {
						if c.noOld {
							want[i] = oldRV.ReplaceAllString(s, "@_->")
						}
					}
					require.Equal(t, want, rec.get())
				})
			})
		}
	}
}
