package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// fmtNum prints v with three significant digits, without exponent.
func fmtNum(v float64) string {
	a := v
	if a < 0 {
		a = -a
	}
	switch {
	case a == 0:
		return "0"
	case a >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// WriteMarkdown renders res as Markdown tables.
func WriteMarkdown(w io.Writer, res *Results) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# kwatch vs client-go: %s run\n\n", res.Mode)
	fmt.Fprintf(&b, "Started %s, took %.0f s; %s, %d CPUs. Values are medians over runs; ratios are kwatch/client-go.\n\n",
		res.Started, res.WallS, res.GoVersion, res.CPUs)
	for _, s := range res.Settings {
		fmt.Fprintf(&b, "- %s\n", s)
	}
	writeHeadlines(&b, res)
	writeTargets(&b, res)
	for _, n := range podCounts(res.Rows) {
		writeMedians(&b, res, n)
		writeRatios(&b, res, n)
	}
	writeQueue(&b, res)
	if len(res.Failures) > 0 {
		b.WriteString("\n## Failures\n\n")
		for _, f := range res.Failures {
			fmt.Fprintf(&b, "- %s\n", f)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func podCounts(rows []*Row) []int {
	var ns []int
	for _, r := range rows {
		if !slices.Contains(ns, r.Pods) {
			ns = append(ns, r.Pods)
		}
	}
	slices.Sort(ns)
	return ns
}

func rowNames(rows []*Row, pods int) []string {
	var names []string
	for _, r := range rows {
		if r.Pods == pods {
			names = append(names, r.Name)
		}
	}
	return names
}

// writeHeadlines writes one table per headline pair: the headline
// metrics of both rows and their ratio at every pod count.
func writeHeadlines(b *strings.Builder, res *Results) {
	for i, h := range res.Headlines {
		var pods []int
		for _, n := range podCounts(res.Rows) {
			if Find(res.Rows, h.Kwatch, n, 0) != nil && Find(res.Rows, h.ClientGo, n, 0) != nil {
				pods = append(pods, n)
			}
		}
		if len(pods) == 0 {
			continue
		}
		fmt.Fprintf(b, "\n## %s: %s / %s\n\n| metric | unit | better |", headlineName(i), h.Kwatch, h.ClientGo)
		for _, n := range pods {
			fmt.Fprintf(b, " %d pods: %s | %s | ratio |", n, h.Kwatch, h.ClientGo)
		}
		fmt.Fprintf(b, "\n|---|---|---|%s\n", strings.Repeat("---|---|---|", len(pods)))
		for _, key := range HeadlineMetrics {
			m, ok := MetricByKey(key)
			if !ok {
				continue
			}
			better := "lower"
			if m.Higher {
				better = "higher"
			}
			fmt.Fprintf(b, "| %s | %s | %s |", m.Title, m.Unit, better)
			for _, n := range pods {
				kv, kok := Find(res.Rows, h.Kwatch, n, 0).Median[key]
				cv, cok := Find(res.Rows, h.ClientGo, n, 0).Median[key]
				cells := [3]string{"–", "–", "–"}
				if kok {
					cells[0] = fmtNum(kv)
				}
				if cok {
					cells[1] = fmtNum(cv)
				}
				if kok && cok && cv != 0 {
					cells[2] = fmtNum(kv/cv) + "x"
				}
				fmt.Fprintf(b, " %s | %s | %s |", cells[0], cells[1], cells[2])
			}
			b.WriteString("\n")
		}
		fmt.Fprintf(b, "\n%s. Medians over runs (%s).\n", h.Title, runsNote(res, h, pods))
	}
}

// headlineName names the i-th headline table.
func headlineName(i int) string {
	if i == 0 {
		return "Headline"
	}
	return "Headline " + strconv.Itoa(i+1)
}

// runsNote says how many runs each pod count's medians of h are over.
func runsNote(res *Results, h Headline, pods []int) string {
	var parts []string
	for _, n := range pods {
		k, c := Find(res.Rows, h.Kwatch, n, 0), Find(res.Rows, h.ClientGo, n, 0)
		parts = append(parts, fmt.Sprintf("%d pods: %d and %d runs", n, len(k.Runs["sync_wall_s"]), len(c.Runs["sync_wall_s"])))
	}
	return strings.Join(parts, "; ")
}

func writeTargets(b *strings.Builder, res *Results) {
	b.WriteString("\n## Targets\n\n| target | pods/workers | metric | kwatch | client-go | ratio | met |\n|---|---|---|---|---|---|---|\n")
	for _, c := range res.Comparisons {
		if c.Met == nil {
			continue
		}
		where := strconv.Itoa(c.Pods) + " pods"
		if c.Workers > 0 {
			where = strconv.Itoa(c.Workers) + " workers"
		}
		met := "no"
		if *c.Met {
			met = "yes"
		}
		fmt.Fprintf(b, "| %s vs %s: %s | %s | %s | %s | %s | %s | %s |\n", c.Kwatch, c.ClientGo, c.Target, where,
			c.Metric, fmtNum(c.KwatchV), fmtNum(c.ClientV), fmtNum(c.Ratio), met)
	}
}

func writeMedians(b *strings.Builder, res *Results, pods int) {
	names := rowNames(res.Rows, pods)
	fmt.Fprintf(b, "\n## %d pods: medians\n\n| metric | unit | %s |\n|---|---|%s\n", pods,
		strings.Join(names, " | "), strings.Repeat("---|", len(names)))
	for _, m := range Metrics {
		fmt.Fprintf(b, "| %s | %s |", m.Title, m.Unit)
		for _, name := range names {
			r := Find(res.Rows, name, pods, 0)
			v, ok := r.Median[m.Key]
			cell := "–"
			if ok {
				cell = fmtNum(v) + " (" + strconv.Itoa(len(r.Runs[m.Key])) + ")"
			}
			b.WriteString(" " + cell + " |")
		}
		b.WriteString("\n")
	}
	b.WriteString("\nIn parentheses: number of runs.\n")
}

func writeRatios(b *strings.Builder, res *Results, pods int) {
	type col struct{ k, c string }
	var cols []col
	for _, c := range res.Comparisons {
		if c.Pods == pods && !slices.Contains(cols, col{c.Kwatch, c.ClientGo}) {
			cols = append(cols, col{c.Kwatch, c.ClientGo})
		}
	}
	if len(cols) == 0 {
		return
	}
	fmt.Fprintf(b, "\n## %d pods: ratios kwatch/client-go\n\n| metric |", pods)
	for _, c := range cols {
		fmt.Fprintf(b, " %s / %s |", c.k, c.c)
	}
	fmt.Fprintf(b, "\n|---|%s\n", strings.Repeat("---|", len(cols)))
	for _, m := range Metrics {
		fmt.Fprintf(b, "| %s |", m.Title)
		for _, c := range cols {
			cell := "–"
			for _, x := range res.Comparisons {
				if x.Pods == pods && x.Kwatch == c.k && x.ClientGo == c.c && x.Metric == m.Key {
					cell = fmtNum(x.Ratio)
				}
			}
			b.WriteString(" " + cell + " |")
		}
		b.WriteString("\n")
	}
}

func writeQueue(b *strings.Builder, res *Results) {
	if len(res.Queue) == 0 {
		return
	}
	b.WriteString("\n## Workqueue: Add+Get+Done items/s\n\n| workers | kwatch | client-go | ratio |\n|---|---|---|---|\n")
	for _, c := range res.Comparisons {
		if c.Metric == QueueMetric.Key {
			fmt.Fprintf(b, "| %d | %s | %s | %s |\n", c.Workers, fmtNum(c.KwatchV), fmtNum(c.ClientV), fmtNum(c.Ratio))
		}
	}
}
