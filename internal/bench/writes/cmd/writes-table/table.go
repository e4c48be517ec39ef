package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The rows, verbs and kinds of BenchmarkWrites, in its order.
var (
	rows  = []string{"kwatch-json", "client-go-json", "kwatch-proto", "client-go-proto"}
	verbs = []string{"create", "get", "update", "patch", "delete"}
	kinds = []string{"ConfigMap", "Pod"}
)

// key names one leaf benchmark.
type key struct{ verb, kind, row string }

// samples are the runs of one leaf benchmark, one value per run and unit.
type samples map[string][]float64 // unit ("req/s", "allocs/op", "B/op", "ns/op") -> values

// results are a parsed benchmark output.
type results struct {
	env  []string // goos, goarch, pkg, cpu lines
	runs map[key]samples
	raw  []string // the benchmark lines, as printed
	// skipped are the benchmarks that skipped (go test -v prints them),
	// with the first line of their reason.
	skipped []skip
}

type skip struct{ name, reason string }

// benchLine is "BenchmarkWrites/<verb>/<kind>/<row>[-procs] N v unit v unit...".
// A row run more than once in one benchmark (-writes.rounds) has "#NN"
// after its name; its runs count as runs of the row.
var benchLine = regexp.MustCompile(`^BenchmarkWrites/([^/\s]+)/([^/\s]+)/(\S+?)(?:#\d+)?(?:-\d+)?\s+(\d+)\s+(.*)$`)

// parse reads go test -bench output. A FAIL or panic line anywhere is an
// error: the runs of a failed benchmark would be missing or partial.
func parse(out []byte) (*results, error) {
	res := &results{runs: map[key]samples{}}
	sc := bufio.NewScanner(bytes.NewReader(out))
	inSkip := false // the indented lines after a SKIP line may be its reason (tests)
	lastLog := ""   // the last indented line before it (benchmarks log first)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "    ") {
			if s := &res.skipped; inSkip && len(*s) > 0 && (*s)[len(*s)-1].reason == "" {
				(*s)[len(*s)-1].reason = strings.TrimSpace(line)
			}
			lastLog = strings.TrimSpace(line)
			continue
		}
		inSkip = false
		if name, ok := strings.CutPrefix(line, "--- SKIP: "); ok {
			inSkip = res.addSkip(skip{name: roundSuffix.ReplaceAllString(name, ""), reason: lastLog})
			lastLog = ""
			continue
		}
		lastLog = ""
		switch {
		case strings.HasPrefix(line, "FAIL"), strings.HasPrefix(line, "--- FAIL"), strings.HasPrefix(line, "panic:"):
			return nil, fmt.Errorf("line %d: the benchmarks failed: %s", n, line)
		case strings.HasPrefix(line, "goos:"), strings.HasPrefix(line, "goarch:"), strings.HasPrefix(line, "cpu:"):
			res.env = append(res.env, line)
		}
		m := benchLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		k := key{verb: m[1], kind: m[2], row: m[3]}
		f := strings.Fields(m[5])
		if len(f)%2 != 0 {
			return nil, fmt.Errorf("line %d: values and units do not pair up: %s", n, line)
		}
		s := res.runs[k]
		if s == nil {
			s = samples{}
			res.runs[k] = s
		}
		for i := 0; i < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: value %q: %w", n, f[i], err)
			}
			s[f[i+1]] = append(s[f[i+1]], v)
		}
		res.raw = append(res.raw, line)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(res.runs) == 0 {
		return nil, errors.New("no BenchmarkWrites result in the output")
	}
	return res, nil
}

// roundSuffix is what go test appends to the second and later runs of a
// name (-writes.rounds).
var roundSuffix = regexp.MustCompile(`#\d+$`)

// addSkip records s unless the row's skip is recorded already (the rounds
// of a row skip alike), and reports whether it did.
func (r *results) addSkip(s skip) bool {
	for _, old := range r.skipped {
		if old.name == s.name {
			return false
		}
	}
	r.skipped = append(r.skipped, s)
	return true
}

// median is the middle value (the mean of the two middle ones for an even
// count); ok is false for no values.
func median(v []float64) (m float64, ok bool) {
	if len(v) == 0 {
		return 0, false
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2], true
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2, true
}

// spread is (max-min)/median, the runs' range relative to their median.
func spread(v []float64) (float64, bool) {
	m, ok := median(v)
	if !ok || m == 0 {
		return 0, false
	}
	return (slices.Max(v) - slices.Min(v)) / m, true
}

func (r *results) median(k key, unit string) (float64, bool) { return median(r.runs[k][unit]) }

// ratio is the median of a over the median of b, "n/a" when either is
// missing.
func (r *results) ratio(a, b key, unit string) string {
	x, okx := r.median(a, unit)
	y, oky := r.median(b, unit)
	if !okx || !oky || y == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", x/y)
}

// header is what the table says about the run.
type header struct {
	command, commit string
	date            time.Time
}

// render writes the ratios, the medians and the raw output as Markdown.
func render(r *results, h header) string {
	var b strings.Builder
	b.WriteString("# Writes: kwatch's client beside client-go's typed clientset\n\n")
	fmt.Fprintf(&b, "`%s`, %s", h.command, h.date.Format("2006-01-02 15:04 MST"))
	if h.commit != "" {
		fmt.Fprintf(&b, ", commit %s", h.commit)
	}
	fmt.Fprintf(&b, ", %d runs of each benchmark", r.maxRuns())
	if len(r.env) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(r.env, ", "))
	}
	b.WriteString(". One request per iteration; medians of the runs; the server is another process, so allocations are the client's.\n\n")
	b.WriteString("## Ratios kwatch / client-go\n\n")
	b.WriteString("Each cell is kwatch's median over client-go's, JSON rows (kwatch-json / client-go-json) and protobuf rows (kwatch-proto / client-go-proto). ")
	b.WriteString("req/s above 1: kwatch sends more requests per second; CPU (the client process's user and system CPU per request), allocs/op and B/op below 1: kwatch costs less.\n\n")
	b.WriteString("| verb | kind | req/s json | req/s proto | CPU json | CPU proto | allocs/op json | allocs/op proto | B/op json | B/op proto |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, verb := range verbs {
		for _, kind := range kinds {
			kj, cj := key{verb, kind, "kwatch-json"}, key{verb, kind, "client-go-json"}
			kp, cp := key{verb, kind, "kwatch-proto"}, key{verb, kind, "client-go-proto"}
			fmt.Fprintf(&b, "| %s | %s", verb, kind)
			for _, unit := range []string{"req/s", "cpu-ns/op", "allocs/op", "B/op"} {
				fmt.Fprintf(&b, " | %s | %s", r.ratio(kj, cj, unit), r.ratio(kp, cp, unit))
			}
			b.WriteString(" |\n")
		}
	}
	b.WriteString("\n## kwatch-proto / kwatch-json\n\n")
	b.WriteString("What protobuf bodies change for kwatch's client: below 1 in the last three columns, protobuf costs less. ")
	b.WriteString("Gets, patches and deletes send no protobuf body (the answers are JSON in every row), so their rows show the noise.\n\n")
	b.WriteString("| verb | kind | req/s | CPU | allocs/op | B/op |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, verb := range verbs {
		for _, kind := range kinds {
			kj, kp := key{verb, kind, "kwatch-json"}, key{verb, kind, "kwatch-proto"}
			fmt.Fprintf(&b, "| %s | %s", verb, kind)
			for _, unit := range []string{"req/s", "cpu-ns/op", "allocs/op", "B/op"} {
				fmt.Fprintf(&b, " | %s", r.ratio(kp, kj, unit))
			}
			b.WriteString(" |\n")
		}
	}
	b.WriteString("\n## Medians\n\n")
	b.WriteString("spread is the runs' range (max − min) over their median. CPU is the client process's user and system CPU per request. n/a: no run (skipped or not run).\n\n")
	b.WriteString("| verb | kind | row | req/s | spread | CPU µs/req | spread | allocs/op | B/op |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, verb := range verbs {
		for _, kind := range kinds {
			for _, row := range rows {
				k := key{verb, kind, row}
				fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", verb, kind, row,
					r.cell(k, "req/s", 1, "%.0f"), r.spreadCell(k, "req/s"), r.cell(k, "cpu-ns/op", 1e-3, "%.0f"), r.spreadCell(k, "cpu-ns/op"),
					r.cell(k, "allocs/op", 1, "%.0f"), r.cell(k, "B/op", 1, "%.0f"))
			}
		}
	}
	if len(r.skipped) > 0 {
		b.WriteString("\n## Skipped\n\n")
		for _, s := range r.skipped {
			fmt.Fprintf(&b, "- %s: %s\n", s.name, s.reason)
		}
	}
	b.WriteString("\n## Raw output\n\n```\n")
	for _, l := range r.env {
		b.WriteString(l + "\n")
	}
	for _, l := range r.raw {
		b.WriteString(l + "\n")
	}
	b.WriteString("```\n")
	return b.String()
}

// cell is the median of k's unit, times scale.
func (r *results) cell(k key, unit string, scale float64, format string) string {
	m, ok := r.median(k, unit)
	if !ok {
		return "n/a"
	}
	return fmt.Sprintf(format, m*scale)
}

func (r *results) spreadCell(k key, unit string) string {
	s, ok := spread(r.runs[k][unit])
	if !ok {
		return "n/a"
	}
	return fmt.Sprintf("%.0f%%", 100*s)
}

// maxRuns is the largest number of runs of one benchmark.
func (r *results) maxRuns() int {
	n := 0
	for _, s := range r.runs {
		n = max(n, len(s["ns/op"]))
	}
	return n
}
