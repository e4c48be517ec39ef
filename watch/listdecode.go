package watch

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	jsoniter "github.com/json-iterator/go"
	"github.com/kwatch/kwatch/kube"
)

// ListMeta is the metadata of one list page: the resourceVersion the list
// shows, the continue token of the next page ("" on the last) and the
// server's count of items after this page, when it gives one.
type ListMeta struct {
	ResourceVersion    string `json:"resourceVersion"`
	Continue           string `json:"continue"`
	RemainingItemCount *int64 `json:"remainingItemCount"`
}

// DecodeList decodes a List body ({"kind":"PodList","metadata":{...},
// "items":[...]}, fields in any order; PartialObjectMetadataList too)
// item by item, calling each with every item decoded into a fresh T, in
// order, without holding the whole list in memory: only the item being
// decoded is buffered. Each item, and each other field's value, is bounded
// by maxItemSize bytes (0 or less means DefaultMaxFrameSize) and by
// MaxNestingDepth.
//
// A Table body (kind "Table", asked for with a Table Form) is
// decoded row by row: each row is handed to T as a one-row Table,
// {"kind":"Table","apiVersion":"meta.k8s.io/v1","columnDefinitions":[...],"rows":[row]},
// which is also the shape of a Table watch event's object. Only the page's
// first row carries the columnDefinitions (when the body sends them before
// the rows, as servers do); the others get none, as every watch event
// after the first.
//
// An error from each stops decoding and is returned unchanged. Bad input
// is a *DecodeError naming the offset and the item; a body that is not a
// list (no items, or a kind not ending in "List") wraps ErrNotList, and a
// Status body also wraps its *StatusError. Items passed to each before an
// error are not taken back: a caller building a store from a page should
// discard it on error.
func DecodeList[T Object](r io.Reader, maxItemSize int, each func(T) error) (ListMeta, error) {
	if maxItemSize <= 0 {
		maxItemSize = DefaultMaxFrameSize
	}
	d := &listDecoder{
		f:    newFramer(r, min(maxItemSize, maxFrameLimit), "maxItemSize", "list body"),
		iter: json.BorrowIterator(nil),
	}
	defer d.release()
	var meta ListMeta
	err := d.fields(func(key string) error {
		switch {
		case d.status != nil:
			return d.keepStatusField(key)
		case key == "items":
			d.sawItems = true
			return decodeItems(d, each)
		case key == "rows": // a Table (a Table Form)
			d.sawItems = true
			return decodeRows(d, each)
		case key == "columnDefinitions":
			return d.columnDefinitions()
		case key == "metadata":
			return d.metadata(&meta)
		case key == "kind":
			return d.kind()
		}
		_, _, err := d.f.value()
		return err
	})
	if err != nil {
		return meta, err
	}
	if d.status != nil {
		d.status.WriteByte('}')
		se := kube.EventStatus(d.status.Bytes(), false)
		return meta, fmt.Errorf("%w: the body is a Status: %w", ErrNotList, se)
	}
	if !d.sawItems {
		return meta, &DecodeError{Offset: d.f.offset(), What: "list body", Err: fmt.Errorf("%w: no items field", ErrNotList)}
	}
	return meta, nil
}

// listDecoder reads a list body's top-level object with a framer; each
// field's value is framed on its own, so memory is bounded by the largest
// single value.
type listDecoder struct {
	f        *framer
	iter     *jsoniter.Iterator
	sawItems bool
	// columns is a Table's columnDefinitions value, kept until the first
	// row takes it.
	columns []byte
	// status collects the fields of a body whose kind is "Status", as a
	// JSON object still missing its closing brace.
	status *bytes.Buffer
}

func (d *listDecoder) release() {
	d.iter.ResetBytes(nil)
	json.ReturnIterator(d.iter)
	d.f.buf = nil
}

// fields reads the top-level object, calling field with each key once the
// framer stands at the key's value, which field must consume. After the
// closing brace only whitespace may follow.
func (d *listDecoder) fields(field func(key string) error) error {
	if err := d.expect('{', "to start the list"); err != nil {
		return err
	}
	for first := true; ; first = false {
		c, err := d.f.peek()
		if err != nil {
			return err
		}
		if c == '}' {
			d.f.consume()
			return d.f.rest()
		}
		if !first {
			if err := d.expect(',', "or '}' after a field"); err != nil {
				return err
			}
		}
		key, err := d.key()
		if err != nil {
			return err
		}
		if err := field(key); err != nil {
			return err
		}
	}
}

// expect consumes c or fails naming what was found instead.
func (d *listDecoder) expect(c byte, why string) error {
	got, err := d.f.peek()
	if err != nil {
		return err
	}
	if got != c {
		d.f.fail(d.f.start, fmt.Errorf("%w %s; want %s %s", ErrUnexpectedByte, quoteByte(got), quoteByte(c), why))
		return d.f.err
	}
	d.f.consume()
	return nil
}

// key reads a field name and its colon.
func (d *listDecoder) key() (string, error) {
	v, off, err := d.f.value()
	if err != nil {
		return "", err
	}
	if v[0] != '"' {
		return "", &DecodeError{Offset: off, What: "list body", Err: fmt.Errorf("%w %s; want a field name", ErrUnexpectedByte, quoteByte(v[0]))}
	}
	key, err := d.unquote(v, off)
	if err != nil {
		return "", err
	}
	return key, d.expect(':', "after a field name")
}

// unquote decodes a framed JSON string as every JSON string is decoded
// (jsonstring.go): a Status field's name, copied by keepStatusField, must
// stay valid UTF-8 for strconv.Quote to write it as JSON.
func (d *listDecoder) unquote(v []byte, off int64) (string, error) {
	if bytes.IndexByte(v, '\\') < 0 {
		return validString(string(v[1 : len(v)-1])), nil
	}
	d.iter.ResetBytes(v)
	d.iter.Error = nil
	s := readEscapedString(d.iter)
	if d.iter.Error != nil {
		return "", &DecodeError{Offset: off, What: "list body", Err: d.iter.Error}
	}
	return s, nil
}

// kind checks that the body is a list; a Status switches to collecting it.
func (d *listDecoder) kind() error {
	v, off, err := d.f.value()
	if err != nil {
		return err
	}
	kind := ""
	if v[0] == '"' {
		if kind, err = d.unquote(v, off); err != nil {
			return err
		}
	}
	switch {
	case kind == "Status" && !d.sawItems:
		d.status = bytes.NewBufferString(`{"kind":"Status"`)
		return nil
	case strings.HasSuffix(kind, "List"):
		return nil
	case kind == "Table":
		return nil
	}
	return &DecodeError{Offset: off, What: "list kind", Err: fmt.Errorf("%w: kind %s", ErrNotList, clip(string(v)))}
}

// keepStatusField appends a field of a Status body, bounded like an item.
func (d *listDecoder) keepStatusField(key string) error {
	v, off, err := d.f.value()
	if err != nil {
		return err
	}
	if d.status.Len()+len(key)+len(v) > d.f.limit {
		return &DecodeError{Offset: off, What: "Status body", Err: fmt.Errorf("%w: exceeds the %d-byte limit (maxItemSize)", ErrFrameTooLarge, d.f.limit)}
	}
	d.status.WriteByte(',')
	d.status.WriteString(strconv.Quote(key))
	d.status.WriteByte(':')
	d.status.Write(v)
	return nil
}

func (d *listDecoder) metadata(meta *ListMeta) error {
	v, off, err := d.f.value()
	if err != nil {
		return err
	}
	d.iter.ResetBytes(v)
	d.iter.Error = nil
	d.iter.ReadVal(meta)
	if d.iter.Error != nil {
		return &DecodeError{Offset: off, What: "list metadata", Err: d.iter.Error}
	}
	return nil
}

// decodeItems reads the items array, passing each decoded item to each.
func decodeItems[T Object](d *listDecoder, each func(T) error) error {
	return d.eachElement("list items", "items", "an item", func(i int) error {
		obj, err := decodeItem[T](d, i)
		if err != nil {
			return err
		}
		return each(obj)
	})
}

// eachElement reads the array of field (what names it in errors, one
// names an element) and calls fn with each element's index while the
// framer stands at it; null is an empty array.
func (d *listDecoder) eachElement(what, field, one string, fn func(i int) error) error {
	c, err := d.f.peek()
	if err != nil {
		return err
	}
	if c == 'n' { // null: an empty array
		v, off, err := d.f.value()
		if err == nil && string(v) != "null" {
			err = &DecodeError{Offset: off, What: what, Err: fmt.Errorf("%w: %s is %s, want an array", ErrUnexpectedByte, field, clip(string(v)))}
		}
		return err
	}
	if err := d.expect('[', "to start the "+field); err != nil {
		return err
	}
	for i := 0; ; i++ {
		c, err := d.f.peek()
		if err != nil {
			return err
		}
		if c == ']' {
			d.f.consume()
			return nil
		}
		if i > 0 {
			if err := d.expect(',', "or ']' after "+one); err != nil {
				return err
			}
		}
		if err := fn(i); err != nil {
			return err
		}
	}
}

// decodeItem frames and decodes item i of the list.
func decodeItem[T Object](d *listDecoder, i int) (obj T, err error) {
	v, off, err := d.f.value()
	if err != nil {
		var de *DecodeError
		if errors.As(err, &de) { // too large, too deep or cut short: say which item
			de.What = "list item " + strconv.Itoa(i)
		}
		return obj, err
	}
	if v[0] != '{' {
		return obj, &DecodeError{Offset: off, What: "list item " + strconv.Itoa(i),
			Err: fmt.Errorf("%w %s; want an object", ErrUnexpectedByte, quoteByte(v[0]))}
	}
	return decodeBytes[T](d, v, off, "list item "+strconv.Itoa(i))
}

// decodeBytes decodes one framed JSON object v, found at offset off and
// named what in errors, into a fresh T.
func decodeBytes[T Object](d *listDecoder, v []byte, off int64, what string) (obj T, err error) {
	fail := func(err error) error {
		return &DecodeError{Offset: off, What: what, Err: err}
	}
	// jsoniter and the caller's UnmarshalJSON methods are third-party code
	// fed hostile input; a panic in them must become an error.
	defer func() {
		if p := recover(); p != nil {
			var zero T
			obj, err = zero, fail(fmt.Errorf("JSON decoder panicked: %v", p))
		}
	}()
	if ok, err := decodeRawJSON(&obj, v); ok {
		if err != nil {
			return obj, fail(err)
		}
		return obj, nil
	}
	d.iter.ResetBytes(v)
	d.iter.Error = nil
	d.iter.ReadVal(&obj)
	if d.iter.Error != nil {
		var zero T
		return zero, fail(fmt.Errorf("does not decode into %T: %w", obj, d.iter.Error))
	}
	return obj, nil
}
