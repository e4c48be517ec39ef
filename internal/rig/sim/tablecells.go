package sim

import (
	stdjson "encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The cells of each built-in kind's Table row, computed from the stored JSON as the
// real server's printers compute them from the typed object: the same fields, the
// same "<none>", the same integers where the server sends integers. m is nil for
// the empty object of a BOOKMARK, whose every field is zero.

var builtinCells = map[string]func(o *object, m map[string]any, now time.Time) []any{
	"deployments.apps": deploymentCells,
	"replicasets.apps": replicaSetCells,
	"namespaces": func(o *object, m map[string]any, now time.Time) []any {
		return []any{o.name, str(m, "status", "phase"), age(o.created, now)}
	},
	"services": serviceCells,
	"configmaps": func(o *object, m map[string]any, now time.Time) []any {
		return []any{o.name, int64(len(obj(m, "data")) + len(obj(m, "binaryData"))), age(o.created, now)}
	},
	"secrets": func(o *object, m map[string]any, now time.Time) []any {
		return []any{o.name, str(m, "type"), int64(len(obj(m, "data"))), age(o.created, now)}
	},
	"nodes": nodeCells,
	"statefulsets.apps": func(o *object, m map[string]any, now time.Time) []any {
		names, images := containerCells(list(m, "spec", "template", "spec", "containers"))
		return []any{o.name, strconv.FormatInt(integer(m, 0, "status", "readyReplicas"), 10) + "/" +
			strconv.FormatInt(integer(m, 1, "spec", "replicas"), 10), age(o.created, now), names, images}
	},
	"events": eventCells,
}

// decodeForCells decodes o's JSON for its cells; nil if it does not decode.
func decodeForCells(o *object) map[string]any {
	var m map[string]any
	dec := stdjson.NewDecoder(strings.NewReader(string(o.raw)))
	dec.UseNumber()
	if dec.Decode(&m) != nil {
		return nil
	}
	return m
}

// at walks m along path; nil when any step is missing or not an object.
func at(m map[string]any, path ...string) any {
	var v any = m
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[p]
	}
	return v
}

func str(m map[string]any, path ...string) string {
	s, _ := at(m, path...).(string)
	return s
}

func obj(m map[string]any, path ...string) map[string]any {
	o, _ := at(m, path...).(map[string]any)
	return o
}

func list(m map[string]any, path ...string) []any {
	l, _ := at(m, path...).([]any)
	return l
}

// integer reads an integer field; def when it is absent from a stored object (the
// real server's defaulting, such as replicas 1); 0 for the empty object.
func integer(m map[string]any, def int64, path ...string) int64 {
	if m == nil {
		return 0
	}
	n, ok := at(m, path...).(stdjson.Number)
	if !ok {
		return def
	}
	i, err := n.Int64()
	if err != nil {
		return def
	}
	return i
}

func deploymentCells(o *object, m map[string]any, now time.Time) []any {
	desired := integer(m, 1, "spec", "replicas")
	names, images := containerCells(list(m, "spec", "template", "spec", "containers"))
	return []any{o.name, strconv.FormatInt(integer(m, 0, "status", "readyReplicas"), 10) + "/" + strconv.FormatInt(desired, 10),
		integer(m, 0, "status", "updatedReplicas"), integer(m, 0, "status", "availableReplicas"), age(o.created, now),
		names, images, labelSelector(obj(m, "spec", "selector"))}
}

func replicaSetCells(o *object, m map[string]any, now time.Time) []any {
	names, images := containerCells(list(m, "spec", "template", "spec", "containers"))
	return []any{o.name, integer(m, 1, "spec", "replicas"), integer(m, 0, "status", "replicas"),
		integer(m, 0, "status", "readyReplicas"), age(o.created, now), names, images,
		labelSelector(obj(m, "spec", "selector"))}
}

// containerCells are the wide CONTAINERS and IMAGES cells: names and images joined
// by commas.
func containerCells(cs []any) (string, string) {
	names := make([]string, 0, len(cs))
	images := make([]string, 0, len(cs))
	for _, c := range cs {
		cm, _ := c.(map[string]any)
		names = append(names, str(cm, "name"))
		images = append(images, str(cm, "image"))
	}
	return strings.Join(names, ","), strings.Join(images, ",")
}

// labelSelector prints a LabelSelector as the real server's selector String does:
// matchLabels as k=v, then expressions, sorted and comma-joined; "" for none.
func labelSelector(sel map[string]any) string {
	if sel == nil {
		return ""
	}
	var parts []string
	for k, v := range obj(sel, "matchLabels") {
		s, _ := v.(string)
		parts = append(parts, k+"="+s)
	}
	for _, e := range list(sel, "matchExpressions") {
		em, _ := e.(map[string]any)
		var vals []string
		for _, v := range list(em, "values") {
			s, _ := v.(string)
			vals = append(vals, s)
		}
		sort.Strings(vals)
		key := str(em, "key")
		switch str(em, "operator") {
		case "In":
			parts = append(parts, key+" in ("+strings.Join(vals, ",")+")")
		case "NotIn":
			parts = append(parts, key+" notin ("+strings.Join(vals, ",")+")")
		case "Exists":
			parts = append(parts, key)
		case "DoesNotExist":
			parts = append(parts, "!"+key)
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func serviceCells(o *object, m map[string]any, now time.Time) []any {
	typ := str(m, "spec", "type")
	clusterIP := "<none>"
	if ips := list(m, "spec", "clusterIPs"); len(ips) > 0 {
		clusterIP, _ = ips[0].(string)
	} else if ip := str(m, "spec", "clusterIP"); ip != "" {
		clusterIP = ip
	}
	var ports []string
	for _, p := range list(m, "spec", "ports") {
		pm, _ := p.(map[string]any)
		proto := str(pm, "protocol")
		if proto == "" {
			proto = "TCP"
		}
		s := strconv.FormatInt(integer(pm, 0, "port"), 10)
		if np := integer(pm, 0, "nodePort"); np > 0 {
			s += ":" + strconv.FormatInt(np, 10)
		}
		ports = append(ports, s+"/"+proto)
	}
	portCell := strings.Join(ports, ",")
	if portCell == "" {
		portCell = "<none>"
	}
	return []any{o.name, typ, clusterIP, externalIP(m, typ), portCell, age(o.created, now),
		labelsString(obj(m, "spec", "selector"))}
}

// externalIP is the EXTERNAL-IP cell of a service of type typ.
func externalIP(m map[string]any, typ string) string {
	var ext []string
	for _, ip := range list(m, "spec", "externalIPs") {
		s, _ := ip.(string)
		ext = append(ext, s)
	}
	switch typ {
	case "ClusterIP", "NodePort":
		if len(ext) > 0 {
			return strings.Join(ext, ",")
		}
		return "<none>"
	case "LoadBalancer":
		var lb []string
		for _, in := range list(m, "status", "loadBalancer", "ingress") {
			im, _ := in.(map[string]any)
			if ip := str(im, "ip"); ip != "" {
				lb = append(lb, ip)
			} else if h := str(im, "hostname"); h != "" {
				lb = append(lb, h)
			}
		}
		sort.Strings(lb)
		all := append(lb, ext...)
		if len(all) == 0 {
			return "<pending>"
		}
		return strings.Join(all, ",")
	case "ExternalName":
		return str(m, "spec", "externalName")
	}
	return "<unknown>"
}

// labelsString prints a label map as k=v pairs sorted by key; "<none>" when empty.
func labelsString(l map[string]any) string {
	if len(l) == 0 {
		return "<none>"
	}
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		s, _ := l[k].(string)
		parts[i] = k + "=" + s
	}
	return strings.Join(parts, ",")
}

func nodeCells(o *object, m map[string]any, now time.Time) []any {
	status := "Unknown"
	for _, c := range list(m, "status", "conditions") {
		cm, _ := c.(map[string]any)
		if str(cm, "type") == "Ready" {
			status = "NotReady"
			if str(cm, "status") == "True" {
				status = "Ready"
			}
		}
	}
	if b, _ := at(m, "spec", "unschedulable").(bool); b {
		status += ",SchedulingDisabled"
	}
	var roles []string
	for k, v := range obj(m, "metadata", "labels") {
		s, _ := v.(string)
		switch {
		case strings.HasPrefix(k, "node-role.kubernetes.io/") && len(k) > len("node-role.kubernetes.io/"):
			roles = append(roles, strings.TrimPrefix(k, "node-role.kubernetes.io/"))
		case k == "kubernetes.io/role" && s != "":
			roles = append(roles, s)
		}
	}
	sort.Strings(roles)
	roles = dedupe(roles)
	roleCell := strings.Join(roles, ",")
	if roleCell == "" {
		roleCell = "<none>"
	}
	info := obj(m, "status", "nodeInfo")
	unknown := func(s string) string {
		if s == "" {
			return "<unknown>"
		}
		return s
	}
	kernel := unknown(str(info, "kernelVersion"))
	if arch := str(info, "architecture"); arch != "" {
		kernel += " (" + arch + ")"
	}
	return []any{o.name, status, roleCell, age(o.created, now), str(info, "kubeletVersion"),
		nodeAddress(m, "InternalIP"), nodeAddress(m, "ExternalIP"), unknown(str(info, "osImage")), kernel,
		unknown(str(info, "containerRuntimeVersion"))}
}

func dedupe(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

func nodeAddress(m map[string]any, typ string) string {
	for _, a := range list(m, "status", "addresses") {
		am, _ := a.(map[string]any)
		if str(am, "type") == typ {
			return str(am, "address")
		}
	}
	return "<none>"
}

// eventCells is a core/v1 Event's row: LAST SEEN (lastTimestamp, else the first
// time, or series.lastObservedTime), TYPE, REASON, OBJECT (kind/name), the wide
// SUBOBJECT and SOURCE, MESSAGE, then FIRST SEEN (firstTimestamp, else eventTime),
// COUNT (series.count, else count, 1 when unset) and NAME.
func eventCells(o *object, m map[string]any, now time.Time) []any {
	since := func(path ...string) string {
		s := str(m, path...)
		if s == "" {
			return "<unknown>"
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return "<unknown>"
		}
		return humanDuration(now.Sub(t))
	}
	first := since("firstTimestamp")
	if str(m, "firstTimestamp") == "" {
		first = since("eventTime")
	}
	last := since("lastTimestamp")
	if str(m, "lastTimestamp") == "" {
		last = first
	}
	count := integer(m, 0, "count")
	if obj(m, "series") != nil {
		last = since("series", "lastObservedTime")
		count = integer(m, 0, "series", "count")
	} else if count == 0 {
		count = 1
	}
	target := strings.ToLower(str(m, "involvedObject", "kind"))
	if name := str(m, "involvedObject", "name"); name != "" {
		target += "/" + name
	}
	source := str(m, "source", "component")
	if source == "" {
		source = str(m, "reportingComponent")
	}
	instance := str(m, "source", "host")
	if instance == "" {
		instance = str(m, "reportingInstance")
	}
	if instance != "" {
		source += ", " + instance
	}
	return []any{last, str(m, "type"), str(m, "reason"), target, str(m, "involvedObject", "fieldPath"), source,
		strings.TrimSpace(str(m, "message")), first, count, o.name}
}

// PrinterColumn is one of a custom resource's additionalPrinterColumns.
type PrinterColumn struct {
	// Name is the column's header, for example "Size".
	Name string
	// Type is "integer", "number", "string", "boolean" or "date".
	Type string
	// Format is an optional format hint, for example "name".
	Format string
	// Description is the column's description; empty means the real server's
	// "Custom resource definition column (in JSONPath format): <JSONPath>".
	Description string
	// Priority 0 shows the column always, higher only with -o wide.
	Priority int32
	// JSONPath is a simple path into the object: ".spec.size", ".status.conditions[0].type".
	JSONPath string
}

// defaultPrinterColumns is what a custom resource without printer columns prints:
// the real server adds one Age column of type date.
var defaultPrinterColumns = []PrinterColumn{{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"}}

// customPrinter prints a custom resource: NAME, then its printer columns, with
// cells typed as the real server types them (integers, numbers, booleans; a
// string column prints the value as text; a date prints as an age).
func customPrinter(pcs []PrinterColumn) printer {
	if len(pcs) == 0 {
		pcs = defaultPrinterColumns
	}
	cols := []column{{"Name", "string", "name", descName, 0}}
	for _, pc := range pcs {
		desc := pc.Description
		if desc == "" {
			desc = "Custom resource definition column (in JSONPath format): " + pc.JSONPath
		}
		cols = append(cols, column{pc.Name, pc.Type, pc.Format, desc, int(pc.Priority)})
	}
	cells := func(o *object, m map[string]any, now time.Time) []any {
		row := []any{o.name}
		for _, pc := range pcs {
			row = append(row, customCell(pc, jsonPath(m, pc.JSONPath), now))
		}
		return row
	}
	return printer{cols: cols, cells: cells, fromJSON: true}
}

// jsonPath evaluates a simple path (".a.b", ".a[0].b"); nil when it finds nothing.
func jsonPath(m map[string]any, path string) any {
	if m == nil {
		return nil
	}
	var v any = m
	for _, step := range strings.Split(strings.TrimPrefix(path, "."), ".") {
		name, idx, _ := strings.Cut(step, "[")
		if name != "" {
			mm, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = mm[name]
		}
		for idx != "" {
			n, rest, _ := strings.Cut(idx, "]")
			i, err := strconv.Atoi(n)
			l, ok := v.([]any)
			if err != nil || !ok || i < 0 || i >= len(l) {
				return nil
			}
			v = l[i]
			idx = strings.TrimPrefix(rest, "[")
		}
	}
	return v
}

// customCell types one value as the real server's custom resource printer does: a
// value of the wrong type, or none, is null.
func customCell(pc PrinterColumn, v any, now time.Time) any {
	if v == nil {
		return nil
	}
	switch pc.Type {
	case "integer":
		if n, ok := v.(stdjson.Number); ok {
			if i, err := n.Int64(); err == nil {
				return i
			}
			if f, err := n.Float64(); err == nil {
				return int64(f)
			}
		}
	case "number":
		if n, ok := v.(stdjson.Number); ok {
			if f, err := n.Float64(); err == nil {
				return f
			}
		}
	case "boolean":
		if b, ok := v.(bool); ok {
			return b
		}
	case "date":
		if s, ok := v.(string); ok {
			t, err := time.Parse(time.RFC3339, s)
			if err != nil {
				return "<invalid>"
			}
			return humanDuration(now.Sub(t))
		}
	case "string":
		switch v := v.(type) {
		case string:
			return v
		case stdjson.Number:
			return v.String()
		default:
			js, err := stdjson.Marshal(v)
			if err != nil {
				return nil
			}
			return string(js)
		}
	default:
		return fmt.Sprint(v)
	}
	return nil
}
