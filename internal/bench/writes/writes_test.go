package writes

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRows runs every verb on every kind through every row once, as
// BenchmarkWrites does with -benchtime 1x, and checks that each request
// did what it says (the object is there, changed or gone) and was sent in
// the row's encoding.
func TestRows(t *testing.T) {
	url := serverURL(t)
	rec := &recorder{}
	admin, conns := dialAll(t, url, rec.wrap)
	ctx := context.Background()
	for _, verb := range Verbs {
		for _, kind := range Kinds {
			for _, c := range conns {
				t.Run(fmt.Sprintf("%s/%s/%s", verb, kind, c.Row.Name), func(t *testing.T) {
					cs, err := NewCase(c, admin, verb, kind)
					require.NoError(t, err)
					require.NoError(t, cs.Setup(ctx, 1))
					t.Cleanup(func() { require.NoError(t, cs.Teardown(ctx)) })
					rec.reset()
					err = cs.Step(ctx, 0)
					if errors.Is(err, ErrProtoDeleteRefused) {
						t.Skip(err)
					}
					require.NoError(t, err)
					require.NoError(t, cs.(checker).check(ctx))
					checkEncoding(t, c.Row, verb, rec.take())
				})
			}
		}
	}
}

// checker checks a case's first step did what it should, on the server.
type checker interface {
	check(ctx context.Context) error
}

func (c *verbCase[T]) check(ctx context.Context) error {
	got, err := c.admin.get(ctx, c.names[0])
	switch {
	case c.verb == Delete:
		if !isNotFound(err) {
			return fmt.Errorf("after the delete, get: %v, want not found", err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("after the %s, get: %w", c.verb, err)
	}
	want := "0" // the fixture's
	if c.verb == Update || c.verb == Patch {
		want = "1"
	}
	if v := got.GetAnnotations()[annotationKey]; v != want {
		return fmt.Errorf("after the %s, annotation %s = %q, want %q", c.verb, annotationKey, v, want)
	}
	if c.verb == Get && got.GetResourceVersion() != c.obj.GetResourceVersion() {
		return fmt.Errorf("get answered resourceVersion %q, the server holds %q", c.obj.GetResourceVersion(), got.GetResourceVersion())
	}
	return nil
}

// checkEncoding checks the one request of a step was sent as the row says,
// and answered in JSON.
func checkEncoding(t *testing.T, row Row, verb Verb, reqs []sent) {
	t.Helper()
	require.Len(t, reqs, 1, "requests of one step")
	r := reqs[0]
	wantType := ""
	switch verb {
	case Create, Update:
		wantType = "application/json"
		if row.Proto {
			wantType = "application/vnd.kubernetes.protobuf"
		}
	case Patch:
		wantType = "application/merge-patch+json"
	case Delete:
		if !row.KWatch { // client-go sends DeleteOptions with every delete
			wantType = "application/json"
			if row.Proto {
				wantType = "application/vnd.kubernetes.protobuf"
			}
		}
	}
	if got := r.contentType; got != wantType {
		t.Errorf("%s %s: Content-Type %q, want %q", r.method, r.path, got, wantType)
	}
	if !strings.HasPrefix(r.answer, "application/json") {
		// The package doc and the README's Writes section say the proto
		// rows decode JSON answers; a server answering protobuf makes them
		// measure protobuf decoding too.
		t.Errorf("%s %s: answered %q, not JSON: the proto rows' description is out of date", r.method, r.path, r.answer)
	}
	if verb == Delete {
		return
	}
	if got, want := strings.HasPrefix(r.accept, "application/vnd.kubernetes.protobuf"), row.Proto; got != want {
		t.Errorf("%s %s: Accept %q: asks for protobuf first = %v, want %v", r.method, r.path, r.accept, got, want)
	}
}

// sent is what a request carried.
type sent struct {
	method, path, contentType, accept string
	answer                            string // the response's Content-Type
}

// recorder records the requests of the rows' transports.
type recorder struct {
	mu   sync.Mutex
	reqs []sent // since the last reset
}

func (rec *recorder) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		s := sent{method: req.Method, path: req.URL.Path, contentType: req.Header.Get("Content-Type"), accept: req.Header.Get("Accept")}
		resp, err := next.RoundTrip(req)
		if resp != nil {
			s.answer = resp.Header.Get("Content-Type")
		}
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, s)
		rec.mu.Unlock()
		return resp, err
	})
}

func (rec *recorder) reset() { _ = rec.take() }

func (rec *recorder) take() []sent {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	r := rec.reqs
	rec.reqs = nil
	return r
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
