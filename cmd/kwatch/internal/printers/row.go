package printers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Column is one of a server Table's columnDefinitions: what kubectl needs
// to print it (the description is left out).
type Column struct {
	Name   string `json:"name"`
	Type   string `json:"type"`
	Format string `json:"format"`
	// Priority 0 columns are always shown, others only with -o wide.
	Priority int32 `json:"priority"`
}

// ServerRow is one object as the server prints it: the cells of its row of a
// meta.k8s.io Table, already formatted as kubectl formats them, and the
// metadata of the row's object (PartialObjectMetadata, the default
// includeObject). It satisfies watch.Object through Meta, so an informer
// caches ServerRows as it caches objects: keys, resourceVersions, bookmarks and
// relists work unchanged.
//
// A ServerRow decodes a one-row Table (a Table watch event's object, or a row of
// a Table list as the watch package hands it over) or, from a server that
// cannot print Tables, the plain object: then Cells is nil and Fallback is
// set, and the row prints kubectl's fallback columns NAME and AGE
// (FallbackColumns, FallbackCells). The zero value is an empty row. A row
// cached by an informer is shared with its handlers: read-only, and then
// safe to read from any goroutine.
type ServerRow struct {
	Meta
	// Cells are the row's cells as kubectl prints them (see FormatCell),
	// one per column of the table the row came with.
	Cells []string
	// Columns are the table's column definitions when the row came with
	// them (a list page's first row, a watch's first event); nil otherwise.
	// Rows without them belong to the last columns seen.
	Columns []Column
	// Fallback: the server sent the object itself, not a Table.
	Fallback bool
	// Object is the row's whole object as JSON when the server sent it
	// (includeObject=Object, or a Fallback row), else nil. A printer that
	// does not need it drops it before the row is cached.
	Object []byte
}

// FallbackColumns are kubectl's columns for an object the server did not
// print: NAME and AGE.
var FallbackColumns = []Column{{Name: "Name", Type: "string", Format: "name"}, {Name: "Age", Type: "string"}}

// FallbackCells are the cells of a Fallback row at now.
func (r *ServerRow) FallbackCells(now time.Time) []string {
	return []string{r.Name, Age(r.CreationTimestamp, now)}
}

// tableJSON is the part of a Table a ServerRow reads.
type tableJSON struct {
	Kind    string         `json:"kind"`
	Columns []Column       `json:"columnDefinitions"`
	Rows    []tableRowJSON `json:"rows"`
}

type tableRowJSON struct {
	Cells  []json.RawMessage `json:"cells"`
	Object json.RawMessage   `json:"object"`
}

// rowObject is what a row's object says of itself: its metadata, and
// whether it is only that (PartialObjectMetadata, the default
// includeObject) or the whole object.
type rowObject struct {
	Kind string `json:"kind"`
	Meta `json:"metadata"`
}

var errRowCount = errors.New("a Table with more or fewer than one row")

// UnmarshalJSON decodes a one-row Table, or a plain object (Fallback).
func (r *ServerRow) UnmarshalJSON(b []byte) error {
	var t tableJSON
	if err := fastJSON.Unmarshal(b, &t); err != nil {
		return err
	}
	if t.Kind != "Table" {
		var o Object
		if err := fastJSON.Unmarshal(b, &o); err != nil {
			return err
		}
		*r = ServerRow{Meta: o.Meta, Fallback: true, Object: append([]byte(nil), b...)}
		return nil
	}
	if len(t.Rows) != 1 {
		return fmt.Errorf("%w (%d rows)", errRowCount, len(t.Rows))
	}
	row := &t.Rows[0]
	cells := make([]string, len(row.Cells))
	for i, c := range row.Cells {
		s, err := FormatCell(c)
		if err != nil {
			return fmt.Errorf("cell %d: %w", i, err)
		}
		cells[i] = s
	}
	cols := t.Columns
	if len(cols) == 0 {
		cols = nil
	}
	var obj rowObject
	if len(row.Object) > 0 {
		if err := fastJSON.Unmarshal(row.Object, &obj); err != nil {
			return fmt.Errorf("the row's object: %w", err)
		}
	}
	*r = ServerRow{Meta: obj.Meta, Cells: cells, Columns: cols}
	if obj.Kind != "" && obj.Kind != "PartialObjectMetadata" {
		r.Object = append([]byte(nil), row.Object...)
	}
	return nil
}

// Slim drops what printing never reads once the row is decoded: the
// annotations, which the informer needs only on bookmarks, which do not
// reach the store.
func (r *ServerRow) Slim() *ServerRow {
	r.Annotations = nil
	return r
}

// FormatCell is a Table cell as kubectl prints it: a string as is, with ESC
// shown as "^[" (DisplayCell cuts it at a line break when shown); null as
// nothing; a number, boolean, array or object as Go's
// fmt prints the value kubectl decodes (integers as int64, other numbers
// as float64).
func FormatCell(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", nil
	}
	var s string
	switch {
	case raw[0] == 'n':
		return "", nil
	case plainString(raw): // most cells: no escapes to decode
		s = string(raw[1 : len(raw)-1])
	case plainInt(raw): // an int64 prints as its JSON text
		return string(raw), nil
	case raw[0] == '"':
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
	default:
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return "", err
		}
		s = fmt.Sprint(kubectlValue(v))
	}
	return escapeCell(s), nil
}

// plainString: raw is a JSON string without escapes or control bytes.
func plainString(raw []byte) bool {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return false
	}
	for _, c := range raw[1 : len(raw)-1] {
		if c == '\\' || c == '"' || c < 0x20 || c >= 0x80 {
			return false
		}
	}
	return true
}

// plainInt: raw is a JSON integer that fits an int64 without question (at
// most 18 digits).
func plainInt(raw []byte) bool {
	digits := raw
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 18 || (digits[0] == '0' && len(digits) > 1) {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// kubectlValue turns decoded JSON numbers into what kubectl's unstructured
// decoding makes of them: int64 when the text is an integer, else float64.
func kubectlValue(v any) any {
	switch v := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return i
		}
		f, _ := strconv.ParseFloat(string(v), 64)
		return f
	case []any:
		for i := range v {
			v[i] = kubectlValue(v[i])
		}
	case map[string]any:
		for k := range v {
			v[k] = kubectlValue(v[k])
		}
	}
	return v
}

// escapeCell shows ESC as "^[", as kubectl does so that a cell cannot
// drive the terminal. Line breaks are kept: a cell is sized by its whole
// text, as kubectl sizes it, and cut where it is shown (DisplayCell).
func escapeCell(s string) string {
	if !strings.Contains(s, "\x1b") {
		return s
	}
	return strings.ReplaceAll(s, "\x1b", "^[")
}

// DisplayCell is a cell as shown: cut at its first form feed, newline or
// carriage return with "..." added, as kubectl does so that a cell cannot
// break the table. Its column is as wide as the whole cell (CellWidth).
func DisplayCell(s string) string {
	if i := strings.IndexAny(s, "\f\n\r"); i >= 0 {
		return s[:i] + "..."
	}
	return s
}

// CellWidth is the width kubectl gives a cell: that of its whole text,
// line breaks included, even where it shows only the first line.
func CellWidth(s string) int { return utf8.RuneCountInString(s) }

// Visible returns the indexes of the columns shown: priority 0 only, or
// every column with wide.
func Visible(cols []Column, wide bool) []int {
	var idx []int
	for i, c := range cols {
		if wide || c.Priority == 0 {
			idx = append(idx, i)
		}
	}
	return idx
}

// Headers are the shown columns' names as kubectl prints them: upper case.
func Headers(cols []Column, shown []int) []string {
	h := make([]string, len(shown))
	for i, j := range shown {
		h[i] = strings.ToUpper(cols[j].Name)
	}
	return h
}

// Pick returns the shown cells of a row; a row with fewer cells than
// columns gets empty ones, as kubectl prints a missing cell.
func Pick(cells []string, shown []int) []string {
	out := make([]string, len(shown))
	for i, j := range shown {
		if j < len(cells) {
			out[i] = cells[j]
		}
	}
	return out
}
