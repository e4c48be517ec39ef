package sim

import (
	stdjson "encoding/json"
	"net/http"
	"strconv"
	"time"
)

// Server-side printing (Accept: application/json;as=Table;v=v1;g=meta.k8s.io), which
// kubectl get asks for: each built-in kind's columns and cells as the real server
// computes them (tablecells.go), a custom resource's PrinterColumns, and NAME/AGE
// for anything else.

type column struct {
	name, typ, format, desc string
	priority                int
}

var podColumns = []column{
	{"Name", "string", "name", "Unique name of the pod within its namespace.", 0},
	{"Ready", "string", "", "Ready containers out of all containers.", 0},
	{"Status", "string", "", "The pod phase, or the reason it is in it.", 0},
	{"Restarts", "string", "", "Container restarts summed over the pod.", 0},
	{"Age", "string", "", "Time since the pod was created.", 0},
	{"IP", "string", "", "The pod's IP address.", 1},
	{"Node", "string", "", "The node the pod is scheduled to.", 1},
	{"Nominated Node", "string", "", "The node nominated by preemption.", 1},
	{"Readiness Gates", "string", "", "Readiness gates that are true out of all.", 1},
}

var genericColumns = []column{
	{"Name", "string", "name", descName, 0},
	{"Age", "string", "", descAge, 0},
}

// tableOpts says how to render a Table.
type tableOpts struct {
	rv        string
	include   string // includeObject: "None", "Object", or Metadata by default
	cont      string
	remaining int64
	columns   bool // false omits the column definitions (watch events after the first)
}

// printer is how one resource's Table is printed: its columns and the cells of
// an object, computed from the decoded JSON object when fromJSON is set (m is
// nil otherwise, and for the empty object of a BOOKMARK).
type printer struct {
	cols     []column
	cells    func(o *object, m map[string]any, now time.Time) []any
	fromJSON bool
}

// printerFor returns r's printer.
func printerFor(r *resource) printer {
	key := r.info.key()
	if key == "pods" {
		return printer{cols: podColumns, cells: podCells}
	}
	if cols, ok := builtinColumns[key]; ok {
		return printer{cols: cols, cells: builtinCells[key], fromJSON: true}
	}
	if r.info.Group != "" && r.info.Group != "apps" {
		return customPrinter(r.info.PrinterColumns)
	}
	return printer{cols: genericColumns, cells: func(o *object, _ map[string]any, now time.Time) []any {
		return []any{o.name, age(o.created, now)}
	}}
}

// appendTable writes a Table of items of r.
func (s *Server) appendTable(b []byte, r *resource, items []*object, t tableOpts) []byte {
	now := s.opts.Clock()
	b = append(b, `{"kind":"Table","apiVersion":"meta.k8s.io/v1`...)
	b = appendListMeta(b, t.rv, t.cont, t.remaining)
	p := printerFor(r)
	b = append(b, `,"columnDefinitions":`...)
	if t.columns {
		b = appendColumns(b, p.cols)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"rows":[`...)
	for i, o := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"cells":[`...)
		var m map[string]any
		if p.fromJSON {
			m = decodeForCells(o)
		}
		for j, cell := range p.cells(o, m, now) {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendCell(b, cell)
		}
		b = append(b, ']')
		switch t.include {
		case "None":
		case "Object":
			b = append(b, `,"object":`...)
			b = append(b, o.raw...)
		default:
			b = append(b, `,"object":`...)
			b = appendPartial(b, o)
		}
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

// appendBookmarkTable writes the Table the real server sends as a BOOKMARK's object
// while watching as=Table: one row printed from an empty object of the kind (cells
// such as "", "0/0", "<unknown>"), whose PartialObjectMetadata carries only the
// resourceVersion and, at the end of a streaming list's initial events, the
// k8s.io/initial-events-end annotation (watch-deployments-as-table.jsonl).
func (s *Server) appendBookmarkTable(b []byte, r *resource, rv uint64, initEnd, columns bool) []byte {
	o := &object{rv: rv}
	p := printerFor(r)
	b = append(b, `{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"`...)
	b = strconv.AppendUint(b, rv, 10)
	b = append(b, `"},"columnDefinitions":`...)
	if columns {
		b = appendColumns(b, p.cols)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"rows":[{"cells":[`...)
	for j, cell := range p.cells(o, nil, s.opts.Clock()) {
		if j > 0 {
			b = append(b, ',')
		}
		b = appendCell(b, cell)
	}
	b = append(b, `],"object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"`...)
	b = strconv.AppendUint(b, rv, 10)
	if initEnd {
		b = append(b, `","annotations":{"k8s.io/initial-events-end":"true"}}}}]}`...)
	} else {
		b = append(b, `"}}}]}`...)
	}
	return b
}

func appendColumns(b []byte, cols []column) []byte {
	b = append(b, '[')
	for i, c := range cols {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = appendQuoted(b, c.name)
		b = append(b, `,"type":`...)
		b = appendQuoted(b, c.typ)
		b = append(b, `,"format":`...)
		b = appendQuoted(b, c.format)
		b = append(b, `,"description":`...)
		b = appendQuoted(b, c.desc)
		b = append(b, `,"priority":`...)
		b = strconv.AppendInt(b, int64(c.priority), 10)
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendCell writes one cell: a string, an integer, a number, a boolean or null,
// as the real server's JSON encoding of its cell values.
func appendCell(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...)
	case string:
		return appendQuoted(b, v)
	case int64:
		return strconv.AppendInt(b, v, 10)
	case float64:
		return strconv.AppendFloat(b, v, 'g', -1, 64)
	case bool:
		return strconv.AppendBool(b, v)
	}
	js, err := stdjson.Marshal(v)
	if err != nil {
		return append(b, "null"...)
	}
	return append(b, js...)
}

// writeTable answers a GET of one object of r as a one-row Table.
func (s *Server) writeTable(w http.ResponseWriter, r *http.Request, res *resource, o *object) {
	b := s.appendTable(nil, res, []*object{o}, tableOpts{rv: o.rvString(), include: r.URL.Query().Get("includeObject"),
		remaining: -1, columns: true})
	w.Header().Set("Content-Type", contentType(modeTable, false))
	w.Header().Set("Cache-Control", "no-cache, private")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// podCells renders a pod's row from its summary.
func podCells(o *object, _ map[string]any, now time.Time) []any {
	p := o.pod
	if p == nil {
		return []any{o.name, "0/0", "", "0", age(o.created, now), "<none>", "<none>", "<none>", "<none>"}
	}
	none := func(s string) string {
		if s == "" {
			return "<none>"
		}
		return s
	}
	gates := "<none>"
	if p.gates > 0 {
		gates = strconv.Itoa(p.gatesReady) + "/" + strconv.Itoa(p.gates)
	}
	return []any{o.name, strconv.Itoa(p.ready) + "/" + strconv.Itoa(p.containers), p.status,
		strconv.FormatInt(p.restarts, 10), age(o.created, now), none(p.podIP), none(p.node), none(p.nominated), gates}
}

// age is the real server's AGE cell: "<unknown>" for no creation time.
func age(created, now time.Time) string {
	if created.IsZero() {
		return "<unknown>"
	}
	return humanDuration(now.Sub(created))
}

// humanDuration renders an age the way kubectl columns do: "45s", "3m12s", "5h",
// "2d3h", "400d", "3y2d".
func humanDuration(d time.Duration) string {
	sec := int64(d / time.Second)
	switch {
	case sec < -1:
		return "<invalid>"
	case sec < 0:
		return "0s"
	case sec < 120:
		return strconv.FormatInt(sec, 10) + "s"
	}
	min := sec / 60
	switch {
	case min < 10:
		return pair(min, "m", sec%60, "s")
	case min < 180:
		return strconv.FormatInt(min, 10) + "m"
	}
	hours := min / 60
	switch {
	case hours < 8:
		return pair(hours, "h", min%60, "m")
	case hours < 48:
		return strconv.FormatInt(hours, 10) + "h"
	case hours < 24*8:
		return pair(hours/24, "d", hours%24, "h")
	case hours < 24*365*2:
		return strconv.FormatInt(hours/24, 10) + "d"
	case hours < 24*365*8:
		return pair(hours/24/365, "y", hours/24%365, "d")
	}
	return strconv.FormatInt(hours/24/365, 10) + "y"
}

func pair(a int64, ua string, b int64, ub string) string {
	s := strconv.FormatInt(a, 10) + ua
	if b != 0 {
		s += strconv.FormatInt(b, 10) + ub
	}
	return s
}
