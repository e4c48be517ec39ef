package controller_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"

	"github.com/kwatch/kwatch/controller"
)

// The second reader's rig: a replica whose requests pass a proxy in
// front of the server (an L7 load balancer, a service-mesh sidecar, the
// aggregator in front of an aggregated API server). The proxy can
// forward a write and then answer the replica itself, with a status of
// its own, as such a proxy does when its upstream connection breaks
// after it forwarded the request (Envoy's 503 "upstream reset before
// headers", a 502 Bad Gateway): the server got the write and may apply
// it, the replica holds an answer that says nothing about it.

// proxied is a RoundTripper in front of a replica's link. When answer
// returns a code for a request, the request is forwarded to the server
// once later is closed and the replica gets code at once.
type proxied struct {
	base   http.RoundTripper
	link   *fenceLink
	answer atomic.Pointer[func(*http.Request) (int, <-chan struct{})]
}

func (p *proxied) RoundTrip(r *http.Request) (*http.Response, error) {
	if f := p.answer.Load(); f != nil {
		if code, later := (*f)(r); code != 0 {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				return nil, err
			}
			_ = r.Body.Close()
			fwd := r.Clone(context.Background())
			fwd.Body = io.NopCloser(bytes.NewReader(body))
			p.link.deliverLater(fwd, later)
			status := fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","status":"Failure","code":%d,"reason":"ServiceUnavailable","message":"upstream reset after the request was forwarded"}`, code)
			return &http.Response{StatusCode: code, Status: http.StatusText(code), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
				Header:  http.Header{"Content-Type": {"application/json"}},
				Body:    io.NopCloser(bytes.NewReader([]byte(status))),
				Request: r, ContentLength: int64(len(status))}, nil
		}
	}
	return p.base.RoundTrip(r)
}

// proxyOnce is a proxied.answer that answers code to the first write of
// key marked mark (closing held), forwarding it once gate is closed.
func proxyOnce(code int, key controller.Key, mark string, held, gate chan struct{}) *func(*http.Request) (int, <-chan struct{}) {
	var once atomic.Bool
	f := func(r *http.Request) (int, <-chan struct{}) {
		if !isWriteOf(r, key, mark) || !once.CompareAndSwap(false, true) {
			return 0, nil
		}
		close(held)
		return code, gate
	}
	return &f
}
