package printers

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"text/tabwriter"
)

// CustomColumns is kubectl's -o custom-columns=HEADER:PATH,...: one column
// per path, each cell every result of the path joined by commas, "<none>"
// for none. The zero value has no columns; build one with
// ParseCustomColumns or ParseCustomColumnsFile. Safe for concurrent use.
type CustomColumns struct {
	Headers []string
	paths   []*JSONPath
}

// relaxedPath matches what kubectl accepts for a column or --sort-by:
// ".a.b", "a.b", "{.a.b}" or "{a.b}".
var relaxedPath = regexp.MustCompile(`^\{\.?([^{}]+)\}$|^\.?([^{}]+)$`)

// RelaxedPath turns ".metadata.name" into the template "{.metadata.name}",
// as kubectl reads --sort-by and custom column paths.
func RelaxedPath(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	m := relaxedPath.FindStringSubmatch(s)
	if m == nil {
		return "", fmt.Errorf("unexpected path string %q, expected a 'name1.name2' or '.name1.name2' or '{name1.name2}' or '{.name1.name2}'", s)
	}
	field := m[1]
	if field == "" {
		field = m[2]
	}
	return "{." + field + "}", nil
}

// ParseCustomColumns reads "NAME:.metadata.name,NODE:.spec.nodeName".
func ParseCustomColumns(spec string) (*CustomColumns, error) {
	c := &CustomColumns{}
	for _, col := range strings.Split(spec, ",") {
		header, path, ok := strings.Cut(col, ":")
		if !ok || header == "" {
			return nil, fmt.Errorf("unexpected custom-columns spec: %s, expected <header>:<json-path-expr>", col)
		}
		if err := c.add(header, path); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// ParseCustomColumnsFile reads kubectl's file form: a line of headers and
// a line of paths, each separated by white space.
func ParseCustomColumnsFile(text string) (*CustomColumns, error) {
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) != 2 {
		return nil, fmt.Errorf("custom-columns file: want 2 lines (headers, then paths), got %d", len(lines))
	}
	headers, paths := strings.Fields(lines[0]), strings.Fields(lines[1])
	if len(headers) != len(paths) {
		return nil, fmt.Errorf("custom-columns file: %d headers but %d paths", len(headers), len(paths))
	}
	c := &CustomColumns{}
	for i := range headers {
		if err := c.add(headers[i], paths[i]); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (c *CustomColumns) add(header, path string) error {
	tmpl, err := RelaxedPath(path)
	if err != nil {
		return err
	}
	jp, err := ParseJSONPath(tmpl)
	if err != nil {
		return err
	}
	jp.AllowMissing = true // a missing field is "<none>"
	c.Headers = append(c.Headers, header)
	c.paths = append(c.paths, jp)
	return nil
}

// Cells are obj's row.
func (c *CustomColumns) Cells(obj any) ([]string, error) {
	cells := make([]string, len(c.paths))
	for i, jp := range c.paths {
		vals, err := jp.Find(obj)
		if err != nil {
			return nil, err
		}
		if len(vals) == 0 {
			cells[i] = "<none>"
			continue
		}
		parts := make([]string, len(vals))
		for k, v := range vals {
			parts[k] = fmt.Sprint(printable(v))
		}
		cells[i] = strings.Join(parts, ",")
	}
	return cells, nil
}

// printable is how kubectl's custom columns show a value: fmt's %v of the
// unstructured value (maps as map[k:v]).
func printable(v any) any {
	if v == nil {
		return "<nil>"
	}
	return v
}

// WriteColumns writes rows (and the headers first, unless noHeaders)
// aligned as kubectl aligns custom columns: kubectl's tabwriter settings,
// cells at least 6 wide including 3 spaces of padding.
func WriteColumns(w io.Writer, headers []string, rows [][]string, noHeaders bool) error {
	tw := tabwriter.NewWriter(w, 6, 4, 3, ' ', 0)
	if !noHeaders {
		fmt.Fprintln(tw, strings.Join(headers, "\t"))
	}
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}
