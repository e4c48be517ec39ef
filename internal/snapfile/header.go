package snapfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"
	"unicode/utf8"
)

// FormatVersion is the version of the file layout this build writes and the
// only one it reads. Any change to the layout in doc.go bumps it.
const FormatVersion = 1

// maxHeaderSize bounds the encoded header (its strings are a resource name,
// selectors, a server identity and a resourceVersion: a few hundred bytes
// in practice). Write refuses a larger one and Read rejects it before
// allocating.
const maxHeaderSize = 64 << 10

// The times a UnixNano can hold.
var (
	minCreated = time.Unix(0, math.MinInt64)
	maxCreated = time.Unix(0, math.MaxInt64)
)

// A Header says what a snapshot holds and where it came from. The zero value
// is not writable: Write needs at least a ResourceVersion. Header is a plain
// value, safe to copy and to share read-only.
type Header struct {
	// The resource, as in kube.Resource: Group ("" for core), Version
	// (the API version, "v1") and Resource (plural, "pods").
	Group, Version, Resource string

	Namespace     string // "" for all namespaces
	LabelSelector string // as sent to the server; "" for none
	FieldSelector string // as sent to the server; "" for none

	// Server identifies the cluster the objects came from, opaque to this
	// package: the informer computes it (for instance the server URL and
	// the cluster's identity), and Check compares it byte for byte.
	Server string

	// ResourceVersion is the store's resourceVersion when the snapshot was
	// taken: the informer resumes its watch from it. Required.
	ResourceVersion string

	// Encoding names how Record.Data is encoded ("protobuf", "json"),
	// opaque to this package.
	Encoding string

	// Created is when the snapshot was taken. Write uses the current time
	// when it is zero; Read returns it in UTC, to the nanosecond.
	Created time.Time

	// Count is the number of records. Write requires it to equal the
	// number the records sequence yields (take both from one consistent
	// view of the store); Read returns it before any record is read, so a
	// caller can size its staging map.
	Count uint64
}

// A Record is one stored object: its store key and its encoded bytes,
// opaque to this package.
type Record struct {
	Key  string // valid UTF-8
	Data []byte
}

// Check returns a *MismatchError if the snapshot header got was not taken by
// an informer configured as want: another server, resource, namespace,
// selector or encoding. ResourceVersion, Created and Count are not compared.
// A nil error means the snapshot may be loaded.
func Check(got, want Header) error {
	fields := []struct {
		field     string
		got, want string
	}{
		{FieldServer, got.Server, want.Server},
		{FieldResource, resourceName(got), resourceName(want)},
		{FieldNamespace, namespaceName(got.Namespace), namespaceName(want.Namespace)},
		{FieldLabelSelector, got.LabelSelector, want.LabelSelector},
		{FieldFieldSelector, got.FieldSelector, want.FieldSelector},
		{FieldEncoding, got.Encoding, want.Encoding},
	}
	for _, f := range fields {
		if f.got != f.want {
			return &MismatchError{Field: f.field, Snapshot: f.got, Want: f.want}
		}
	}
	return nil
}

// resourceName is group/version resource, as a user reads it: "apps/v1
// deployments", "v1 pods".
func resourceName(h Header) string {
	gv := h.Version
	if h.Group != "" {
		gv = h.Group + "/" + h.Version
	}
	return gv + " " + h.Resource
}

func namespaceName(ns string) string {
	if ns == "" {
		return "all namespaces"
	}
	return fmt.Sprintf("namespace %q", ns)
}

// headerStrings lists the header's string fields in their on-disk order.
func (h *Header) headerStrings() []*string {
	return []*string{&h.Group, &h.Version, &h.Resource, &h.Namespace, &h.LabelSelector,
		&h.FieldSelector, &h.Server, &h.ResourceVersion, &h.Encoding}
}

// headerFieldNames names headerStrings' fields for errors.
var headerFieldNames = []string{"group", "version", "resource", "namespace", "label selector",
	"field selector", "server", "resource version", "encoding"}

// encodeHeader appends the header block (without its length prefix) to b.
func encodeHeader(b []byte, h Header) ([]byte, error) {
	if h.ResourceVersion == "" {
		return nil, errors.New("header has no resource version")
	}
	for i, s := range h.headerStrings() {
		if !utf8.ValidString(*s) {
			return nil, fmt.Errorf("header %s is not valid UTF-8", headerFieldNames[i])
		}
		b = binary.AppendUvarint(b, uint64(len(*s)))
		b = append(b, *s...)
	}
	// UnixNano is defined from 1677 to 2262 only; outside it wraps.
	if h.Created.Before(minCreated) || h.Created.After(maxCreated) {
		return nil, fmt.Errorf("header created time %v is out of range", h.Created)
	}
	b = binary.AppendVarint(b, h.Created.UnixNano())
	b = binary.AppendUvarint(b, h.Count)
	if len(b) > maxHeaderSize {
		return nil, fmt.Errorf("header is %d bytes encoded, over the limit of %d", len(b), maxHeaderSize)
	}
	return b, nil
}

// decodeHeader parses a header block that starts at byte base of the file.
// Count is returned as read; the caller checks it against its limits.
func decodeHeader(b []byte, base int64) (Header, *CorruptError) {
	var h Header
	off := 0
	bad := func(what string) *CorruptError {
		return &CorruptError{Offset: base + int64(off), What: what}
	}
	for i, s := range h.headerStrings() {
		n, k := binary.Uvarint(b[off:])
		if k <= 0 || overlong(b[off:], k) {
			return h, bad("header " + headerFieldNames[i] + ": bad length")
		}
		off += k
		if n > uint64(len(b)-off) {
			return h, bad(fmt.Sprintf("header %s: length %d past the end of the header", headerFieldNames[i], n))
		}
		v := b[off : off+int(n)]
		if !utf8.Valid(v) {
			return h, bad("header " + headerFieldNames[i] + ": not valid UTF-8")
		}
		*s = string(v)
		off += int(n)
	}
	nanos, k := binary.Varint(b[off:])
	if k <= 0 || overlong(b[off:], k) {
		return h, bad("header created time: bad varint")
	}
	off += k
	h.Created = time.Unix(0, nanos).UTC()
	count, k := binary.Uvarint(b[off:])
	if k <= 0 || overlong(b[off:], k) {
		return h, bad("header count: bad varint")
	}
	off += k
	h.Count = count
	if off != len(b) {
		return h, bad(fmt.Sprintf("%d unexpected bytes at the end of the header", len(b)-off))
	}
	if h.ResourceVersion == "" {
		return h, bad("header has no resource version")
	}
	return h, nil
}

// overlong reports whether the varint of k bytes at the start of b is
// longer than its value needs (it ends in a 0 byte), as rawUvarint refuses
// one.
func overlong(b []byte, k int) bool { return k > 1 && b[k-1] == 0 }
