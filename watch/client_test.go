package watch

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kwatch/kwatch/kube"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fakeServer answers from a table of path -> handler and records requests.
type fakeServer struct {
	mu       sync.Mutex
	requests []*http.Request
	routes   map[string]http.HandlerFunc
}

func newFake(t *testing.T, routes map[string]http.HandlerFunc) (*fakeServer, *kube.Client) {
	f := &fakeServer{routes: routes}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.requests = append(f.requests, r.Clone(context.Background()))
		h := f.routes[r.URL.Path]
		f.mu.Unlock()
		if h == nil {
			capture(t, "status-404.json", 404)(w, r)
			return
		}
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	c, err := kube.NewClient(&kube.Config{Host: srv.URL})
	require.NoError(t, err)
	return f, c
}

func (f *fakeServer) last() *http.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[len(f.requests)-1]
}

// capture answers with a real server's captured body.
func capture(t *testing.T, name string, code int) http.HandlerFunc {
	body := readCapture(t, name)
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		w.Write(body)
	}
}

func TestListPagesWithRealCaptures(t *testing.T) {
	f, c := newFake(t, map[string]http.HandlerFunc{
		"/api/v1/namespaces/demo/pods": func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Get("continue") == "" {
				capture(t, "list-pods-page1.json", 200)(w, r)
				return
			}
			capture(t, "list-pods-page2.json", 200)(w, r)
		},
	})
	ctx := context.Background()
	page, err := List[*testPod](ctx, c, kube.Pods, kube.Scope{Namespace: "demo", LabelSelector: "app=x", FieldSelector: "status.phase=Pending"}, ListOptions{Limit: 2})
	require.NoError(t, err)
	q := f.last().URL.Query()
	require.Equal(t, url.Values{"limit": {"2"}, "labelSelector": {"app=x"}, "fieldSelector": {"status.phase=Pending"}}, q)
	require.Equal(t, "application/json", f.last().Header.Get("Accept"))
	require.Len(t, page.Items, 2)
	require.NotEmpty(t, page.Continue)
	require.NotNil(t, page.RemainingItemCount)
	require.NotEmpty(t, page.ResourceVersion)

	page2, err := List[*testPod](ctx, c, kube.Pods, kube.Scope{Namespace: "demo"}, ListOptions{Limit: 2, Continue: page.Continue})
	require.NoError(t, err)
	require.Equal(t, page.Continue, f.last().URL.Query().Get("continue"))
	require.NotEmpty(t, page2.Items)
	require.True(t, strings.HasPrefix(f.last().Header.Get("User-Agent"), "kwatch/"))
}

func TestListMetadataOnlyAsksForPartialObjectMetadata(t *testing.T) {
	f, c := newFake(t, map[string]http.HandlerFunc{"/api/v1/pods": capture(t, "list-pods-metadata-only.json", 200)})
	page, err := List[*metav1.PartialObjectMetadata](context.Background(), c, kube.Pods, kube.Scope{}, ListOptions{Form: FormMetadata})
	require.NoError(t, err)
	require.Contains(t, f.last().Header.Get("Accept"), "as=PartialObjectMetadataList;g=meta.k8s.io;v=v1")
	require.NotEmpty(t, page.Items)
	require.Equal(t, "PartialObjectMetadata", page.Items[0].Kind)
}

func TestStatusErrorsFromRealCaptures(t *testing.T) {
	tests := []struct {
		file   string
		code   int
		check  func(error) bool
		reason string
	}{
		{"status-401.json", 401, kube.IsUnauthorized, "Unauthorized"},
		{"status-403.json", 403, kube.IsForbidden, "Forbidden"},
		{"status-404.json", 404, kube.IsNotFound, "NotFound"},
		{"status-410-list-exact-compacted.json", 410, kube.IsGone, "Expired"},
		{"status-410-expired-continue.json", 410, kube.IsGone, "Expired"},
		{"status-400-fieldselector.json", 400, func(err error) bool { se, _ := kube.AsStatus(err); return se.Code == 400 }, "BadRequest"},
		{"status-sendinitialevents-without-rvm.json", 422, func(err error) bool { se, _ := kube.AsStatus(err); return len(se.Causes) == 1 }, "Invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			_, c := newFake(t, map[string]http.HandlerFunc{"/api/v1/pods": capture(t, tt.file, tt.code)})
			_, err := List[*testPod](context.Background(), c, kube.Pods, kube.Scope{}, ListOptions{})
			require.Error(t, err)
			require.True(t, tt.check(err), "predicate for %s on %v", tt.file, err)
			se, ok := kube.AsStatus(err)
			require.True(t, ok)
			require.EqualValues(t, tt.code, se.Code)
			require.Equal(t, tt.reason, se.Reason)
			var op *kube.OpError
			require.ErrorAs(t, err, &op)
			require.Equal(t, "list", op.Op)
			require.Contains(t, err.Error(), "list pods: server answered")
		})
	}
	// The expired continue token's answer carries a fresh token.
	_, c := newFake(t, map[string]http.HandlerFunc{"/api/v1/pods": capture(t, "status-410-expired-continue.json", 410)})
	_, err := List[*testPod](context.Background(), c, kube.Pods, kube.Scope{}, ListOptions{Continue: "old"})
	se, _ := kube.AsStatus(err)
	require.NotEmpty(t, se.Continue)
}

func TestRetryAfterAndNonStatusBodies(t *testing.T) {
	_, c := newFake(t, map[string]http.HandlerFunc{
		"/api/v1/pods": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(429)
			io.WriteString(w, `{"kind":"Status","code":200,"reason":"TooManyRequests","message":"slow down"}`)
		},
		"/api/v1/namespaces/x/pods": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(502)
			io.WriteString(w, "<html>bad gateway</html>")
		},
	})
	_, err := List[*testPod](context.Background(), c, kube.Pods, kube.Scope{}, ListOptions{})
	require.True(t, kube.IsRetryable(err))
	ra, ok := kube.RetryAfter(err)
	require.True(t, ok)
	require.Equal(t, 7*time.Second, ra)
	se, _ := kube.AsStatus(err)
	require.EqualValues(t, 429, se.Code, "the HTTP code wins over a Status body's wrong code")

	_, err = List[*testPod](context.Background(), c, kube.Pods, kube.Scope{Namespace: "x"}, ListOptions{})
	se, ok = kube.AsStatus(err)
	require.True(t, ok)
	require.EqualValues(t, 502, se.Code)
	require.Contains(t, se.Message, "bad gateway", "a body that is not a Status is kept in the message")
	require.True(t, kube.IsRetryable(err))
}

func TestWatchRequestAndEvents(t *testing.T) {
	f, c := newFake(t, map[string]http.HandlerFunc{
		"/api/v1/pods": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(200)
			w.Write(readCapture(t, "watch-streaming-list.jsonl"))
		},
	})
	st, err := Watch[*testPod](context.Background(), c, kube.Pods, kube.Scope{}, WatchOptions{
		SendInitialEvents: true, AllowBookmarks: true, TimeoutSeconds: 30, ResourceVersion: "",
	})
	require.NoError(t, err)
	defer st.Close()
	q := f.last().URL.Query()
	require.Equal(t, url.Values{"watch": {"1"}, "sendInitialEvents": {"true"}, "resourceVersionMatch": {"NotOlderThan"},
		"allowWatchBookmarks": {"true"}, "timeoutSeconds": {"30"}}, q)
	var adds int
	var end Event[*testPod]
	for {
		ev, err := st.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		if ev.Type == Added {
			adds++
		}
		end = ev
	}
	require.Positive(t, adds)
	require.Equal(t, Bookmark, end.Type)
	require.Equal(t, "true", end.Object.GetAnnotations()[InitialEventsEndAnnotation])
}

func TestWatch410InsideA200Stream(t *testing.T) {
	_, c := newFake(t, map[string]http.HandlerFunc{"/api/v1/namespaces/demo/pods": func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(200)
		w.Write(readCapture(t, "watch-410-too-old-rv.jsonl"))
	}})
	st, err := Watch[*testPod](context.Background(), c, kube.Pods, kube.Scope{Namespace: "demo"}, WatchOptions{ResourceVersion: "230"})
	require.NoError(t, err)
	defer st.Close()
	_, err = st.Next()
	require.True(t, kube.IsGone(err), "got %v", err)
	var op *kube.OpError
	require.ErrorAs(t, err, &op)
	require.Equal(t, "stream", op.Op)
}

// silentWatch answers a watch with 200 and then nothing.
func silentWatch(w http.ResponseWriter, r *http.Request) {
	w.WriteHeader(200)
	w.(http.Flusher).Flush()
	<-r.Context().Done()
}

func TestWatchIdleDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, err := kube.NewClient(startPipeHandler(t, http.HandlerFunc(silentWatch)))
		require.NoError(t, err)
		start := time.Now()
		st, err := Watch[*testPod](t.Context(), c, kube.Pods, kube.Scope{}, WatchOptions{IdleTimeout: 100 * time.Millisecond})
		require.NoError(t, err)
		defer st.Close()
		_, err = st.Next()
		require.ErrorIs(t, err, ErrIdleTimeout)
		require.Equal(t, 100*time.Millisecond, time.Since(start), "the deadline counts from the request")
	})
}

func TestWatchCloseUnblocksNext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, err := kube.NewClient(startPipeHandler(t, http.HandlerFunc(silentWatch)))
		require.NoError(t, err)
		st, err := Watch[*testPod](t.Context(), c, kube.Pods, kube.Scope{}, WatchOptions{})
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() { _, err := st.Next(); done <- err }()
		synctest.Wait() // Next is blocked reading the silent stream
		select {
		case err := <-done:
			t.Fatalf("Next returned %v before Close", err)
		default:
		}
		require.NoError(t, st.Close())
		require.Error(t, <-done, "Close unblocks Next")
		require.NoError(t, st.Close(), "Close twice is fine")
	})
}

func discoveryServer(t *testing.T) (*fakeServer, *kube.Client) {
	return newFake(t, map[string]http.HandlerFunc{
		"/apis":         capture(t, "apis.json", 200),
		"/api/v1":       capture(t, "api-v1.json", 200),
		"/apis/apps/v1": capture(t, "apis-apps-v1.json", 200),
	})
}

func TestResolveByEveryName(t *testing.T) {
	_, c := discoveryServer(t)
	tests := []struct {
		name, wantResource, wantGroup string
		namespaced                    bool
	}{
		{"pods", "pods", "", true},
		{"pod", "pods", "", true},
		{"po", "pods", "", true},
		{"Pod", "pods", "", true},
		{"deploy", "deployments", "apps", true},
		{"deployments.apps", "deployments", "apps", true},
		{"deployments.v1.apps", "deployments", "apps", true},
		{"Deployment", "deployments", "apps", true},
		{"nodes", "nodes", "", false},
		{"no", "nodes", "", false},
		{"cm", "configmaps", "", true},
		{"rs", "replicasets", "apps", true},
	}
	for _, tt := range tests {
		r, err := c.Resolve(context.Background(), tt.name)
		require.NoError(t, err, tt.name)
		require.Equal(t, tt.wantResource, r.Resource, tt.name)
		require.Equal(t, tt.wantGroup, r.Group, tt.name)
		require.Equal(t, tt.namespaced, r.Namespaced, tt.name)
	}
	r, _ := c.Resolve(context.Background(), "deploy")
	require.Equal(t, "/apis/apps/v1/namespaces/ns/deployments", r.Path("ns"))
	require.Equal(t, "/apis/apps/v1/deployments", r.Path(""))
}

func TestResolveUnknownIsTypedAndRefreshes(t *testing.T) {
	f, c := discoveryServer(t)
	_, err := c.Resolve(context.Background(), "flunders")
	var unknown *kube.UnknownResourceError
	require.ErrorAs(t, err, &unknown)
	require.Equal(t, `the server doesn't have a resource type "flunders"`, err.Error())
	f.mu.Lock()
	n := len(f.requests)
	f.mu.Unlock()
	require.Greater(t, n, 3, "an unknown name refreshes discovery once before giving up")
}

func TestNewClientRejectsBadHosts(t *testing.T) {
	for _, host := range []string{"", "ftp://x", "http://", "http://%zz"} {
		_, err := kube.NewClient(&kube.Config{Host: host})
		require.Error(t, err, host)
		require.Contains(t, err.Error(), "Config.Host", host)
	}
	c, err := kube.NewClient(&kube.Config{Host: "example.invalid:6443"})
	require.NoError(t, err)
	require.Equal(t, "https://example.invalid:6443", c.Host(), "a bare host:port means https")
	require.Equal(t, "default", c.Namespace())
}
