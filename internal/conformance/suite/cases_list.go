package suite

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

func listCases() []Case {
	return []Case{
		{Name: "list/pagination-continue", Run: testPagination},
		{Name: "list/rv-empty-is-consistent", Run: testListConsistent},
		{Name: "list/rv0-ignores-limit", Run: testListRV0},
		{Name: "list/label-selector", Run: testLabelSelector},
		{Name: "list/field-selector", Run: testFieldSelector},
		{Name: "list/bad-selector-is-400", Run: testBadSelector},
		{Name: "list/rv-too-large-is-504", Run: testListTooLarge},
	}
}

// testPagination: limit cuts pages, each but the last with a continue token
// and remainingItemCount; every page shows the first page's RV; together
// they hold every pod once, in name order.
func testPagination(t T, e *Env) {
	names := podNames("p", 5)
	createPods(t, e, names, nil)

	opts := watch.ListOptions{Limit: 2}
	var got []string
	var pages int
	var firstRV string
	for {
		page, err := watch.List[*Pod](e.Ctx, e.Admin, kube.Pods, kube.Scope{Namespace: e.NS}, opts)
		require.NoError(t, err, "page %d", pages+1)
		pages++
		if firstRV == "" {
			firstRV = page.ResourceVersion
		}
		require.Equal(t, firstRV, page.ResourceVersion, "page %d RV, want the first page's", pages)
		for _, p := range page.Items {
			got = append(got, p.Name)
		}
		remaining := 5 - len(got)
		if page.Continue == "" {
			require.Zero(t, remaining, "last page came with %d pods missing", remaining)
			break
		}
		require.Len(t, page.Items, 2, "page %d size", pages)
		require.NotNil(t, page.RemainingItemCount, "page %d remainingItemCount", pages)
		require.EqualValues(t, remaining, *page.RemainingItemCount, "page %d remainingItemCount", pages)
		opts.Continue = page.Continue
	}
	require.Equal(t, 3, pages, "pages for 5 pods at limit 2")
	require.Equal(t, names, got, "pods over all pages, in order")
}

// testListConsistent: resourceVersion "" reads the latest state: a pod
// created just before is in it, and the list RV is not older than its RV.
func testListConsistent(t T, e *Env) {
	rv := createPods(t, e, podNames("c", 3), nil)
	page, err := watch.List[*Pod](e.Ctx, e.Admin, kube.Pods, kube.Scope{Namespace: e.NS}, watch.ListOptions{})
	require.NoError(t, err)
	require.Equal(t, podNames("c", 3), namesOf(page.Items))
	require.GreaterOrEqual(t, rvNumber(t, page.ResourceVersion), rvNumber(t, rv), "list RV vs last create RV")
	require.Empty(t, page.Continue)
}

// testListRV0: resourceVersion "0" may be served from a cache, and then
// limit is ignored: the whole list comes back in one page. The cache may
// lag, so the case waits (bounded) until it shows every pod.
func testListRV0(t T, e *Env) {
	names := podNames("z", 5)
	createPods(t, e, names, nil)
	var last []string
	eventually(t, e, 30*time.Second, "RV 0 list to show all 5 pods", func() bool {
		page, err := watch.List[*Pod](e.Ctx, e.Admin, kube.Pods, kube.Scope{Namespace: e.NS}, watch.ListOptions{ResourceVersion: "0", Limit: 2})
		require.NoError(t, err)
		require.Empty(t, page.Continue, "RV 0 list with limit 2 gave a continue token: limit was honoured")
		last = namesOf(page.Items)
		return len(last) == len(names)
	})
	require.Equal(t, names, last)
}

func testLabelSelector(t T, e *Env) {
	names := podNames("l", 6)
	createPods(t, e, names, func(i int) map[string]string {
		return map[string]string{"app": []string{"web", "db", "cache"}[i%3], "tier": []string{"a", "b"}[i%2]}
	})
	tests := []struct {
		selector string
		want     []string
	}{
		{"app=web", []string{"l-0", "l-3"}},
		{"app!=web", []string{"l-1", "l-2", "l-4", "l-5"}},
		{"app in (db,cache),tier=a", []string{"l-2", "l-4"}},
		{"tier", names},
		{"!tier", []string{}},
		{"app=none", []string{}},
	}
	for _, tt := range tests {
		page, err := watch.List[*Pod](e.Ctx, e.Admin, kube.Pods, kube.Scope{Namespace: e.NS, LabelSelector: tt.selector}, watch.ListOptions{})
		require.NoError(t, err, "selector %q", tt.selector)
		require.Equal(t, tt.want, namesOf(page.Items), "selector %q", tt.selector)
	}
}

func testFieldSelector(t T, e *Env) {
	names := podNames("f", 3)
	createPods(t, e, names, map3("app", "x"))
	tests := []struct {
		label, field string
		want         []string
	}{
		{"", "metadata.name=f-1", []string{"f-1"}},
		{"", "metadata.name!=f-1", []string{"f-0", "f-2"}},
		{"", "status.phase=Pending", names},
		{"", "status.phase=Running", []string{}},
		{"app=x", "status.phase=Pending,metadata.name=f-2", []string{"f-2"}},
		{"", "metadata.namespace=" + e.NS, names},
	}
	for _, tt := range tests {
		sc := kube.Scope{Namespace: e.NS, LabelSelector: tt.label, FieldSelector: tt.field}
		page, err := watch.List[*Pod](e.Ctx, e.Admin, kube.Pods, sc, watch.ListOptions{})
		require.NoError(t, err, "selectors %q %q", tt.label, tt.field)
		require.Equal(t, tt.want, namesOf(page.Items), "selectors %q %q", tt.label, tt.field)
	}
}

func map3(k, v string) func(int) map[string]string {
	return func(int) map[string]string { return map[string]string{k: v} }
}

// testBadSelector: a selector the server cannot parse, or a field it does
// not index, is a 400 BadRequest status error.
func testBadSelector(t T, e *Env) {
	tests := []kube.Scope{
		{Namespace: e.NS, LabelSelector: "app in (x"},
		{Namespace: e.NS, FieldSelector: "spec.noSuchField=1"},
	}
	for _, sc := range tests {
		_, err := watch.List[*Pod](e.Ctx, e.Admin, kube.Pods, sc, watch.ListOptions{})
		se, ok := kube.AsStatus(err)
		require.True(t, ok, "%+v: want a status error, got %v", sc, err)
		require.EqualValues(t, http.StatusBadRequest, se.Code, "%+v: %v", sc, err)
		require.Equal(t, "BadRequest", se.Reason, "%+v", sc)
	}
}

// testListTooLarge: a list at a resourceVersion the server has not reached
// waits a few seconds for it, then answers 504 Timeout with the cause
// ResourceVersionTooLarge: a retryable status error.
func testListTooLarge(t T, e *Env) {
	rv := createPods(t, e, podNames("t", 1), nil)
	ahead := strconv.FormatUint(rvNumber(t, rv)+1_000_000, 10)
	_, err := watch.List[*Pod](e.Ctx, e.Admin, kube.Pods, kube.Scope{Namespace: e.NS}, watch.ListOptions{ResourceVersion: ahead})
	requireStatus(t, err, http.StatusGatewayTimeout, "Timeout", "list ahead of the server")
	require.True(t, kube.IsRetryable(err), "504 should be retryable")
	se, _ := kube.AsStatus(err)
	require.True(t, slices.ContainsFunc(se.Causes, func(c kube.StatusCause) bool { return strings.Contains(c.Message, "Too large resource version") }),
		"causes %q, want one about a too large resource version", se.Causes)
}
