package watch

import (
	"context"
	"errors"
	"io"

	"github.com/kwatch/kwatch/kube"
)

// Accept headers for lists and watches.
const (
	acceptJSON      = kube.ContentTypeJSON
	acceptMetaList  = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
	acceptMetaWatch = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
	// AcceptTable is kubectl get's Accept header, for lists and watches
	// alike: a Table of meta.k8s.io v1, else v1beta1, else the objects as
	// JSON (a server that cannot print them).
	AcceptTable        = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
	defaultMaxListItem = DefaultMaxFrameSize
)

// ListPage is one page of a list.
type ListPage[T any] struct {
	Items []T
	ListMeta
}

// List fetches one page of the objects of res in sc (a namespace, "" for
// all, and the selectors, which the server judges).
// Follow page.Continue for the next page, or use ListEach to stream items
// without holding a whole page. A 429 or 503 answer is returned, not
// retried: the caller's policy decides (the informer backs off).
func List[T Object](ctx context.Context, c *kube.Client, res kube.Resource, sc kube.Scope, opts ListOptions) (*ListPage[T], error) {
	page := &ListPage[T]{}
	meta, err := ListEach(ctx, c, res, sc, opts, func(obj T) error {
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
func ListEach[T Object](ctx context.Context, c *kube.Client, res kube.Resource, sc kube.Scope, opts ListOptions, each func(T) error) (ListMeta, error) {
	if err := opts.Form.check("ListOptions.Form"); err != nil {
		return ListMeta{}, err
	}
	enc := chooseEncoding[T](c, asked{form: opts.Form, json: opts.JSON}, acceptMetaList)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var idle *idleReader
	if opts.IdleTimeout > 0 {
		idle = newIdleReader(opts.IdleTimeout, cancel)
		defer idle.stop()
	}
	resp, err := c.Send(ctx, kube.Request{Path: res.Path(sc.Namespace), Query: opts.query(sc), Accept: enc.accept, NoRetry: true})
	if err != nil {
		if idle != nil && idle.expired() {
			err = ErrIdleTimeout
		}
		return ListMeta{}, &kube.OpError{Op: "list", Resource: res.String(), Err: err}
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
	proto, err := enc.protobuf(resp.Header.Get("Content-Type"))
	switch {
	case err != nil:
	case proto:
		meta, err = decodeProtoList(body, defaultMaxListItem, enc.codec, track)
	default:
		meta, err = DecodeList(body, defaultMaxListItem, track)
	}
	if err != nil && idle != nil && idle.expired() {
		err = ErrIdleTimeout
	}
	if err != nil {
		if eachErr != nil && errors.Is(err, eachErr) {
			return meta, eachErr
		}
		return meta, &kube.OpError{Op: "list", Resource: res.String(), Err: err}
	}
	return meta, nil
}
