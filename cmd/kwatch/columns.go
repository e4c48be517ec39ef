package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strconv"

	"github.com/kwatch/kwatch/cmd/kwatch/internal/printers"
	"github.com/kwatch/kwatch/kube"
	"github.com/kwatch/kwatch/watch"
)

// maxColumnsBody bounds the Table read for its columns: one row at most,
// with its metadata.
const maxColumnsBody = 4 << 20

// serverColumns asks the server for the columns of its Table of t's
// resource: a list of one row as a Table, whose columnDefinitions come
// even when it has no row. A table whose first rows came without columns
// (a watch that started with no object: the list's columns went with no
// row, and a watch event need not carry them) prints the server's header,
// as kubectl does, rather than none. nil when the server prints no Table.
func serverColumns(ctx context.Context, t *target, o *getOptions) ([]printers.Column, error) {
	ctx, cancel := withTimeout(ctx, o.requestTimeout)
	defer cancel()
	q := url.Values{"limit": {"1"}}
	if o.selector != "" {
		q.Set("labelSelector", o.selector)
	}
	if fs := fieldSelector(o); fs != "" {
		q.Set("fieldSelector", fs)
	}
	resp, err := t.client.Send(ctx, kube.Request{Path: t.res.Path(t.namespace), Query: q, Accept: watch.AcceptTable})
	if err != nil {
		return nil, fmt.Errorf("asking for the columns of %s: %w", t.res.Resource, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxColumnsBody+1))
	if err != nil {
		return nil, fmt.Errorf("reading the columns of %s: %w", t.res.Resource, err)
	}
	if len(body) > maxColumnsBody {
		return nil, fmt.Errorf("the Table of %s for its columns is over %d bytes", t.res.Resource, maxColumnsBody)
	}
	var tb struct {
		Kind    string            `json:"kind"`
		Columns []printers.Column `json:"columnDefinitions"`
	}
	if err := json.Unmarshal(body, &tb); err != nil {
		return nil, fmt.Errorf("decoding the columns of %s: %w", t.res.Resource, err)
	}
	if tb.Kind != "Table" {
		return printers.FallbackColumns, nil // the server prints no Table: kubectl's NAME and AGE
	}
	if len(tb.Columns) == 0 {
		return nil, nil
	}
	return tb.Columns, nil
}

// positionalColumns names n cells by position: the last resort, for a
// server that sends rows without ever saying their columns.
func positionalColumns(n int) []printers.Column {
	cols := make([]printers.Column, n)
	for i := range cols {
		cols[i] = printers.Column{Name: "Column " + strconv.Itoa(i+1)}
	}
	return cols
}
