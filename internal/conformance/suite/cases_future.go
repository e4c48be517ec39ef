package suite

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

// A server behind its client: after an etcd restore or a replaced control
// plane, a client may hold a resourceVersion the server has not reached.
// The captures watch-pods-future-rv*.txt and list-pods-future-rv*.txt show
// the real server's answers; these cases check both targets give them.
func futureCases() []Case {
	return []Case{
		{Name: "future/list-is-504-too-large", Run: testFutureList},
		{Name: "future/streaming-list-error-event", Run: testFutureStreamingList},
		{Name: "future/watch-is-silent", Run: testFutureWatch},
	}
}

// futureAhead is how far ahead of the server the cases ask, as the captures did.
const futureAhead = 100000

// futureRV creates a pod and returns its RV and one futureAhead past it.
func futureRV(t T, e *Env) (current, ahead uint64) {
	t.Helper()
	rv := rvNumber(t, createPods(t, e, podNames("f", 1), nil))
	return rv, rv + futureAhead
}

// wireStatus is the part of a Status the cases compare field by field.
type wireStatus struct {
	Kind       string `json:"kind"`
	APIVersion string `json:"apiVersion"`
	Status     string `json:"status"`
	Message    string `json:"message"`
	Reason     string `json:"reason"`
	Code       int    `json:"code"`
	Details    struct {
		Causes []struct {
			Reason  string `json:"reason"`
			Message string `json:"message"`
		} `json:"causes"`
		RetryAfterSeconds int `json:"retryAfterSeconds"`
	} `json:"details"`
}

// requireTooLarge checks a Status is the 504 ResourceVersionTooLarge of a
// request at ahead, from a server at current or later.
func requireTooLarge(t T, st wireStatus, ahead, current uint64, what string) {
	t.Helper()
	require.Equal(t, "Status", st.Kind, what)
	require.Equal(t, "v1", st.APIVersion, what)
	require.Equal(t, "Failure", st.Status, what)
	require.Equal(t, http.StatusGatewayTimeout, st.Code, what)
	require.Equal(t, "Timeout", st.Reason, what)
	require.Len(t, st.Details.Causes, 1, "%s: causes", what)
	require.Equal(t, "ResourceVersionTooLarge", st.Details.Causes[0].Reason, what)
	require.Equal(t, "Too large resource version", st.Details.Causes[0].Message, what)
	require.Equal(t, 1, st.Details.RetryAfterSeconds, what)
	prefix := "Timeout: Too large resource version: " + strconv.FormatUint(ahead, 10) + ", current: "
	require.Regexp(t, "^"+prefix+`\d+$`, st.Message, what)
	cur, err := strconv.ParseUint(st.Message[len(prefix):], 10, 64)
	require.NoError(t, err, what)
	require.GreaterOrEqual(t, cur, current, "%s: the current RV in the message", what)
	require.Less(t, cur, ahead, "%s: the current RV in the message", what)
}

// rawGet sends a GET for path with query through the admin client.
func rawGet(t T, e *Env, path string, q url.Values) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(e.Ctx, http.MethodGet, path+"?"+q.Encode(), nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "application/json")
	resp, err := e.Admin.Do(req)
	require.NoError(t, err, "GET %s?%s", path, q.Encode())
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// testFutureList: a list at a resourceVersion the server has not reached,
// with and without resourceVersionMatch=NotOlderThan, is a 504 Timeout
// whose cause is ResourceVersionTooLarge, with Retry-After 1, field for
// field as list-pods-future-rv.txt; the kwatch client reads it as such.
func testFutureList(t T, e *Env) {
	current, ahead := futureRV(t, e)
	for _, rvm := range []string{"", watch.MatchNotOlderThan} {
		what := "list at a future RV, resourceVersionMatch=" + strconv.Quote(rvm)
		q := url.Values{"resourceVersion": {strconv.FormatUint(ahead, 10)}}
		if rvm != "" {
			q.Set("resourceVersionMatch", rvm)
		}
		resp := rawGet(t, e, kube.Pods.Path(e.NS), q)
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxWriteBody))
		require.NoError(t, err, what)
		require.Equal(t, http.StatusGatewayTimeout, resp.StatusCode, "%s: %s", what, body)
		require.Equal(t, "1", resp.Header.Get("Retry-After"), "%s: Retry-After header", what)
		var st wireStatus
		require.NoError(t, json.Unmarshal(body, &st), "%s: %s", what, body)
		requireTooLarge(t, st, ahead, current, what)

		_, err = watch.List[*Pod](e.Ctx, e.Admin, kube.Pods, kube.Scope{Namespace: e.NS}, watch.ListOptions{
			ResourceVersion: strconv.FormatUint(ahead, 10), ResourceVersionMatch: rvm})
		require.True(t, kube.IsResourceVersionTooLarge(err), "%s through the client: %v", what, err)
		se, _ := kube.AsStatus(err)
		require.Equal(t, time.Second, se.RetryAfter, "%s: RetryAfter", what)
	}
}

// testFutureStreamingList: a streaming list (sendInitialEvents) at a
// resourceVersion the server has not reached opens with 200, and its first
// and only event is an ERROR carrying the list's 504 Status
// (watch-pods-future-rv-streaming.txt); the kwatch client returns it as the
// stream's error, not as an object.
func testFutureStreamingList(t T, e *Env) {
	current, ahead := futureRV(t, e)
	q := url.Values{"watch": {"1"}, "sendInitialEvents": {"true"}, "resourceVersionMatch": {watch.MatchNotOlderThan},
		"allowWatchBookmarks": {"true"}, "resourceVersion": {strconv.FormatUint(ahead, 10)}}
	resp := rawGet(t, e, kube.Pods.Path(e.NS), q)
	require.Equal(t, http.StatusOK, resp.StatusCode, "the streaming list opens")
	line, err := bufio.NewReader(io.LimitReader(resp.Body, maxWriteBody)).ReadBytes('\n')
	require.NoError(t, err, "the first event: %q", line)
	var ev struct {
		Type   string     `json:"type"`
		Object wireStatus `json:"object"`
	}
	require.NoError(t, json.Unmarshal(line, &ev), "%s", line)
	require.Equal(t, "ERROR", ev.Type, "%s", line)
	requireTooLarge(t, ev.Object, ahead, current, "ERROR event of a streaming list at a future RV")

	st := openWatch[*Pod](t, e, e.Admin, watch.WatchOptions{SendInitialEvents: true, AllowBookmarks: true,
		ResourceVersion: strconv.FormatUint(ahead, 10)})
	got, err := st.Next()
	require.True(t, kube.IsResourceVersionTooLarge(err), "through the client: event %q, error %v", got.Type, err)
}

// futureWatchTimeout is the timeoutSeconds of the silent watch: long
// enough for a periodic or pre-deadline bookmark (the simulator's come
// every 60 s and 2 s before the deadline), short enough for the suite.
const futureWatchTimeout = 5

// testFutureWatch: a plain watch from a resourceVersion the server has not
// reached opens with 200 and then sends nothing at all, no event and no
// bookmark, until timeoutSeconds ends it cleanly (watch-pods-future-rv.txt).
func testFutureWatch(t T, e *Env) {
	_, ahead := futureRV(t, e)
	// Changes after the watch opens, in its namespace and elsewhere, would
	// earn a pre-deadline bookmark on a watch from the present.
	st := openWatch[*Pod](t, e, e.Admin, watch.WatchOptions{AllowBookmarks: true, TimeoutSeconds: futureWatchTimeout,
		ResourceVersion: strconv.FormatUint(ahead, 10)})
	createPods(t, e, podNames("f-later", 2), nil)
	ev, err := st.Next()
	require.True(t, errors.Is(err, io.EOF), "the stream ends at timeoutSeconds with nothing before: got event %q (RV %s), error %v",
		ev.Type, resourceVersionOf(ev), err)
}

// resourceVersionOf is the RV an event carries, or "" without an object.
func resourceVersionOf(ev watch.Event[*Pod]) string {
	if ev.Object == nil {
		return ""
	}
	return ev.Object.ResourceVersion
}
