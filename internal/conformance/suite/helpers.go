package suite

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

// writers is how many writes the suite keeps in flight when it makes many
// pods: enough to keep a server busy, few enough for a loaded machine.
const writers = 8

// podNames are "<prefix>-0" .. "<prefix>-<n-1>".
func podNames(prefix string, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	return names
}

// createPods creates one pod per name, writers at a time, with the labels
// labels(i) returns, and returns the largest resourceVersion created.
func createPods(t T, e *Env, names []string, labels func(i int) map[string]string) string {
	t.Helper()
	rvs := make([]string, len(names))
	forEach(t, len(names), func(i int) error {
		var l map[string]string
		if labels != nil {
			l = labels(i)
		}
		p, err := e.Kube.CreatePod(e.Ctx, e.NS, names[i], l)
		if err == nil {
			rvs[i] = p.ResourceVersion
		}
		return err
	})
	return maxRV(t, rvs)
}

// forEach calls f(0..n-1), writers at a time, and fails t on the first error.
func forEach(t T, n int, f func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := w; i < n; i += writers {
				if err := f(i); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
}

// rvNumber reads a resourceVersion as the number both servers use. The
// protocol calls RVs opaque; the suite compares them only to check order.
func rvNumber(t T, rv string) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(rv, 10, 64)
	require.NoError(t, err, "resourceVersion %q is not a number", rv)
	return n
}

func maxRV(t T, rvs []string) string {
	t.Helper()
	var best uint64
	for _, rv := range rvs {
		best = max(best, rvNumber(t, rv))
	}
	return strconv.FormatUint(best, 10)
}

// listAll follows continue tokens to the end and returns every item and
// the resourceVersion of the first page.
func listAll[O watch.Object](t T, e *Env, c *kube.Client, opts watch.ListOptions) ([]O, string) {
	t.Helper()
	var items []O
	var rv string
	for {
		page, err := watch.List[O](e.Ctx, c, kube.Pods, kube.Scope{Namespace: e.NS}, opts)
		require.NoError(t, err, "list %+v", opts)
		items = append(items, page.Items...)
		if rv == "" {
			rv = page.ResourceVersion
		}
		if page.Continue == "" {
			return items, rv
		}
		opts.Continue = page.Continue
	}
}

// namesOf returns the sorted names of objs.
func namesOf[O watch.Object](objs []O) []string {
	names := make([]string, 0, len(objs))
	for _, o := range objs {
		names = append(names, o.GetName())
	}
	slices.Sort(names)
	return names
}

// eventually polls cond until it is true or the case's budget or limit ends.
func eventually(t T, e *Env, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(e.Ctx, limit)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			require.FailNow(t, "timed out waiting", "%s (waited up to %v)", what, limit)
		case <-tick.C:
		}
	}
}

// openWatch opens a pod watch in the case's namespace, closed at cleanup.
func openWatch[O watch.Object](t T, e *Env, c *kube.Client, opts watch.WatchOptions) *watch.Stream[O] {
	t.Helper()
	st, err := watch.Watch[O](e.Ctx, c, kube.Pods, kube.Scope{Namespace: e.NS}, opts)
	require.NoError(t, err, "open watch %+v", opts)
	t.Cleanup(func() { st.Close() })
	return st
}

// nextChange returns the next event that is not a bookmark.
func nextChange[O watch.Object](t T, st *watch.Stream[O]) watch.Event[O] {
	t.Helper()
	for {
		ev, err := st.Next()
		require.NoError(t, err, "next watch event")
		if ev.Type != watch.Bookmark {
			return ev
		}
	}
}

// newClient builds a kwatch client for cfg.
func newClient(t T, cfg *kube.Config) *kube.Client {
	t.Helper()
	c, err := kube.NewClient(cfg)
	require.NoError(t, err, "client for %s", cfg.Host)
	return c
}
