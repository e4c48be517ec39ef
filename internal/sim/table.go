package sim

import (
	"strconv"
	"time"
)

// Server-side printing (Accept: application/json;as=Table;v=v1;g=meta.k8s.io), which
// kubectl get asks for: the pod columns of the real server, NAME/AGE for the rest.

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
	{"Name", "string", "name", "Unique name of the object.", 0},
	{"Age", "string", "", "Time since the object was created.", 0},
}

// tableOpts says how to render a Table.
type tableOpts struct {
	rv        string
	include   string // includeObject: "None", "Object", or Metadata by default
	cont      string
	remaining int64
	columns   bool // false omits the column definitions (watch events after the first)
	pods      bool // the pod columns rather than NAME/AGE
}

// appendTable writes a Table of items.
func (s *Server) appendTable(b []byte, items []*object, t tableOpts) []byte {
	now := s.opts.Clock()
	b = append(b, `{"kind":"Table","apiVersion":"meta.k8s.io/v1`...)
	b = appendListMeta(b, t.rv, t.cont, t.remaining)
	cols := genericColumns
	if t.pods {
		cols = podColumns
	}
	b = append(b, `,"columnDefinitions":[`...)
	if t.columns {
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
	}
	b = append(b, `],"rows":[`...)
	for i, o := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"cells":[`...)
		for j, cell := range cells(o, now) {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendQuoted(b, cell)
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

// cells renders one row.
func cells(o *object, now time.Time) []string {
	age := humanDuration(now.Sub(o.created))
	p := o.pod
	if p == nil {
		return []string{o.name, age}
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
	return []string{o.name, strconv.Itoa(p.ready) + "/" + strconv.Itoa(p.containers), p.status,
		strconv.FormatInt(p.restarts, 10), age, none(p.podIP), none(p.node), none(p.nominated), gates}
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
