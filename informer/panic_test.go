package informer

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/store"
)

// TestAPanickingTransformOrIndexerRefusesTheObjectAndTheWatchGoesOn: a
// panic of Transform or of an index function (the user's code, on the
// watch's goroutine) refuses that object, as their error would: it is
// counted, shown in Health as a *store.PanicError and not cached, and the
// watch goes on to the next event. Before, the panic took the process
// down.
func TestAPanickingTransformOrIndexerRefusesTheObjectAndTheWatchGoesOn(t *testing.T) {
	for _, mode := range []StoreMode{StoreTyped, StoreCompact} {
		t.Run(mode.String(), func(t *testing.T) {
			s := newScripted(t,
				answer(200, listJSON("10", "", podJSON("a", "5"), podJSON("b", "6"))),
				stream(false,
					eventJSON("MODIFIED", podJSON("a", "11")),
					eventJSON("MODIFIED", podJSON("b", "12")),
					eventJSON("ADDED", podJSON("c", "13"))),
			)
			opts := fastOptions(s.srv.URL, t, ListPaged)
			if mode == StoreCompact {
				opts = compactOptions(t, s.srv.URL, ListPaged)
			}
			opts.Logger = quietLogger()
			if mode == StoreTyped {
				opts.Transform = func(p *testPod) (*testPod, error) {
					if p.Name == "a" && p.ResourceVersion == "11" {
						panic("transform boom")
					}
					return p, nil
				}
			}
			opts.Indexers = map[string]store.IndexFunc[*testPod]{"node": func(p *testPod) ([]string, error) {
				if p.Name == "b" && p.ResourceVersion == "12" {
					panic("index boom")
				}
				return []string{p.Spec.NodeName}, nil
			}}
			inf, err := New(opts)
			require.NoError(t, err)
			start(t, inf)
			require.Eventually(t, func() bool { return inf.Store().ResourceVersion() == "13" }, waitLong, tick)

			got := storeRVs(inf)
			// b's index panicked; in StoreTyped a's Transform did too (a
			// compact store has no Transform).
			want := map[string]string{"ns/a": "11", "ns/c": "13"}
			if mode == StoreTyped {
				want = map[string]string{"ns/c": "13"}
			}
			require.Equal(t, want, got, "a refused object is absent, never a stale version")
			st := inf.Stats()
			require.EqualValues(t, 1, st.StoreErrors, "the index panic")
			if mode == StoreTyped {
				require.EqualValues(t, 1, st.TransformErrors, "the transform panic")
			}
			p, ok := errors.AsType[*store.PanicError](inf.Health().LastRefusal)
			require.True(t, ok, "LastRefusal: %v", inf.Health().LastRefusal)
			require.Equal(t, `index "node"`, p.Func)
		})
	}
}
