package watch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// Accept headers the client sends.
const (
	acceptJSON         = "application/json"
	acceptMetaList     = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
	acceptMetaWatch    = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
	defaultMaxListItem = DefaultMaxFrameSize
)

// Client talks the list/watch protocol to one API server.
// Build it with NewClient; it is safe for concurrent use and holds no
// goroutines of its own, so it needs no Close.
type Client struct {
	base *url.URL
	// hc sends every request that is not a watch; its Timeout is
	// Config.Timeout. stream sends watches over the same transport with no
	// Timeout: http.Client.Timeout covers reading the whole body, and a
	// healthy watch's body never ends. A watch has its idle deadline
	// (WatchOptions.IdleTimeout) and the caller's context instead.
	hc          *http.Client
	stream      *http.Client
	ns          string
	contentType string // Config.ContentType
	noIntern    bool   // Config.NoProtobufIntern

	mu        sync.Mutex
	resources []Resource // discovery cache; nil until the first Discover
}

// NewClient checks cfg and builds the client's transport. It does not
// contact the server.
func NewClient(cfg *Config) (*Client, error) {
	if cfg == nil {
		return nil, errors.New("watch: nil Config")
	}
	base, err := parseHost(cfg.Host)
	if err != nil {
		return nil, err
	}
	if err := checkContentType(cfg.ContentType); err != nil {
		return nil, err
	}
	normalized := *cfg
	normalized.Host = base.String()
	rt, err := normalized.RoundTripper()
	if err != nil {
		return nil, err
	}
	ns := cfg.Namespace
	if ns == "" {
		ns = "default"
	}
	return &Client{base: base, ns: ns,
		hc:          &http.Client{Transport: rt, Timeout: cfg.Timeout},
		stream:      &http.Client{Transport: rt},
		contentType: cfg.ContentType, noIntern: cfg.NoProtobufIntern}, nil
}

func parseHost(host string) (*url.URL, error) {
	if host == "" {
		return nil, errors.New("watch: Config.Host is empty: no server to talk to")
	}
	if !strings.Contains(host, "://") {
		host = "https://" + host
	}
	u, err := url.Parse(host)
	if err != nil {
		return nil, fmt.Errorf("watch: Config.Host %q is not a URL: %w", host, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("watch: Config.Host %q: scheme must be http or https", host)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("watch: Config.Host %q has no host", host)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	return u, nil
}

// Host is the server's base URL.
func (c *Client) Host() string { return c.base.String() }

// Namespace is the configured default namespace ("default" when unset).
func (c *Client) Namespace() string { return c.ns }

// CloseIdleConnections closes the client's idle keep-alive connections.
// Both of its http.Clients share one transport.
func (c *Client) CloseIdleConnections() { c.hc.CloseIdleConnections() }

// Do sends a request built by the caller, with the client's transport and
// credentials. A relative URL is resolved against the server's base URL.
// Non-2xx answers are not turned into errors: the caller owns the response.
// Config.Timeout bounds the request, body included, unless it is a watch:
// its query has a watch parameter that the server reads as true (present
// and neither "false" nor "0"). The deprecated /watch/ path prefix is not
// recognised: use the query parameter.
func (c *Client) Do(req *http.Request) (*http.Response, error) {
	if !req.URL.IsAbs() {
		req.URL = c.base.ResolveReference(&url.URL{Path: c.base.Path + req.URL.Path, RawQuery: req.URL.RawQuery})
	}
	if isWatchQuery(req.URL.Query()) {
		return c.stream.Do(req)
	}
	return c.hc.Do(req)
}

// isWatchQuery reads the watch parameter as the API server does
// (runtime.Convert_Slice_string_To_bool): absent, "0" and "false" in any
// case are false; any other value, the empty string included, is true.
func isWatchQuery(q url.Values) bool {
	v, ok := q["watch"]
	if !ok || len(v) == 0 {
		return false
	}
	return v[0] != "0" && !strings.EqualFold(v[0], "false")
}

// get sends a GET and turns a non-2xx answer into a *StatusError. The
// caller closes the body of a 2xx response.
func (c *Client) get(ctx context.Context, path string, q url.Values, accept string) (*http.Response, error) {
	u := *c.base
	u.Path = c.base.Path + path
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", accept)
	hc := c.hc
	if isWatchQuery(q) {
		hc = c.stream
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, readStatus(resp)
	}
	return resp, nil
}

// readStatus reads a bounded part of an error answer and closes it.
func readStatus(resp *http.Response) *StatusError {
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	return statusFromResponse(resp.StatusCode, resp.Header, body)
}

// ListPage is one page of a list.
type ListPage[T any] struct {
	Items []T
	ListMeta
}

// List fetches one page of res in namespace ns ("" for all namespaces).
// Follow page.Continue for the next page, or use ListEach to stream items
// without holding a whole page.
func List[T Object](ctx context.Context, c *Client, res Resource, ns string, opts ListOptions) (*ListPage[T], error) {
	page := &ListPage[T]{}
	meta, err := ListEach(ctx, c, res, ns, opts, func(obj T) error {
		page.Items = append(page.Items, obj)
		return nil
	})
	if err != nil {
		return nil, err
	}
	page.ListMeta = meta
	return page, nil
}

// ListEach fetches one page of res and calls each for every item as it is
// decoded, so the page is never held in memory whole. An error from each
// stops the list and is returned as is.
func ListEach[T Object](ctx context.Context, c *Client, res Resource, ns string, opts ListOptions, each func(T) error) (ListMeta, error) {
	accept, codec := protoAccept[T](c)
	if opts.MetadataOnly {
		accept, codec = acceptMetaList, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var idle *idleReader
	if opts.IdleTimeout > 0 {
		idle = newIdleReader(opts.IdleTimeout, cancel)
		defer idle.stop()
	}
	resp, err := c.get(ctx, res.Path(ns), opts.query(), accept)
	if err != nil {
		if idle != nil && idle.expired() {
			err = ErrIdleTimeout
		}
		return ListMeta{}, &OpError{Op: "list", Resource: res.String(), Err: err}
	}
	defer resp.Body.Close()
	var body io.Reader = resp.Body
	if idle != nil {
		idle.r = resp.Body
		idle.touch()
		body = idle
	}
	var eachErr error
	track := func(obj T) error {
		eachErr = each(obj)
		return eachErr
	}
	var meta ListMeta
	switch {
	case !isProtobuf(resp.Header.Get("Content-Type")):
		meta, err = DecodeList(body, defaultMaxListItem, track)
	case codec != nil:
		meta, err = decodeProtoList(body, defaultMaxListItem, codec, track)
	default:
		err = errWrongEncoding
	}
	if err != nil && idle != nil && idle.expired() {
		err = ErrIdleTimeout
	}
	if err != nil {
		if eachErr != nil && errors.Is(err, eachErr) {
			return meta, eachErr
		}
		return meta, &OpError{Op: "list", Resource: res.String(), Err: err}
	}
	return meta, nil
}
