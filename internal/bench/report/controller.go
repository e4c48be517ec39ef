package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// CtlMetrics are the controller scenario's metrics in table order.
var CtlMetrics = []Metric{
	{"ctl_pods_per_s", "round: pods reconciled to their final state", "pods/s", true},
	{"ctl_reconciles_per_s", "round: reconciles", "reconciles/s", true},
	{"ctl_first_reconcile_ms", "round: watch released to first reconcile", "ms", false},
	{"ctl_cpu_us_per_reconcile", "round: CPU per reconcile", "µs", false},
	{"ctl_cpu_us_per_pod", "round: CPU per pod", "µs", false},
	{"ctl_reconciles_per_pod", "round: reconciles per pod", "", false},
	{"ctl_patches", "round: patches sent", "", false},
	{"ctl_server_cpu_us_per_pod", "round: server CPU per pod (harness)", "µs", false},
	{"ctl_peak_rss_mb", "peak RSS (VmHWM) after the round", "MiB", false},
	{"ctl_heap_kb_per_pod", "live heap after startup", "KiB/pod", false},
	{"ctl_sync_s", "startup: list and first reconcile of every pod", "s", false},
	{"ctl_sync_cpu_s", "startup CPU", "s", false},
	{"ctl_process_cpu_s", "process CPU, whole run", "s", false},
}

// WriteControllerMarkdown renders a controller run: medians per pod count
// and, for each pair (kwatch's row, controller-runtime's), the ratios.
func WriteControllerMarkdown(w io.Writer, res *Results, pairs [][2]string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# kwatch's controller vs controller-runtime: %s run\n\n", res.Mode)
	fmt.Fprintf(&b, "Started %s, took %.0f s; %s, %d CPUs. Values are medians over rounds (startup: over processes); ratios are kwatch/controller-runtime.\n\n",
		res.Started, res.WallS, res.GoVersion, res.CPUs)
	for _, s := range res.Settings {
		fmt.Fprintf(&b, "- %s\n", s)
	}
	for _, n := range podCounts(res.Rows) {
		names := rowNames(res.Rows, n)
		fmt.Fprintf(&b, "\n## %d pods: medians\n\n| metric | unit | %s |\n|---|---|%s\n", n,
			strings.Join(names, " | "), strings.Repeat("---|", len(names)))
		for _, m := range CtlMetrics {
			fmt.Fprintf(&b, "| %s | %s |", m.Title, m.Unit)
			for _, name := range names {
				r := Find(res.Rows, name, n, 0)
				cell := "–"
				if v, ok := r.Median[m.Key]; ok {
					cell = fmtNum(v) + " (" + strconv.Itoa(len(r.Runs[m.Key])) + ")"
				}
				b.WriteString(" " + cell + " |")
			}
			b.WriteString("\n")
		}
		b.WriteString("\nIn parentheses: number of samples.\n")
		writeCtlRatios(&b, res, n, pairs)
	}
	if len(res.Failures) > 0 {
		b.WriteString("\n## Failures\n\n")
		for _, f := range res.Failures {
			fmt.Fprintf(&b, "- %s\n", f)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeCtlRatios(b *strings.Builder, res *Results, pods int, pairs [][2]string) {
	var cols [][2]*Row
	for _, p := range pairs {
		k, o := Find(res.Rows, p[0], pods, 0), Find(res.Rows, p[1], pods, 0)
		if k != nil && o != nil {
			cols = append(cols, [2]*Row{k, o})
		}
	}
	if len(cols) == 0 {
		return
	}
	fmt.Fprintf(b, "\n## %d pods: ratios kwatch/controller-runtime\n\n| metric | better |", pods)
	for _, c := range cols {
		fmt.Fprintf(b, " %s / %s |", c[0].Name, c[1].Name)
	}
	fmt.Fprintf(b, "\n|---|---|%s\n", strings.Repeat("---|", len(cols)))
	for _, m := range CtlMetrics {
		better := "lower"
		if m.Higher {
			better = "higher"
		}
		fmt.Fprintf(b, "| %s | %s |", m.Title, better)
		for _, c := range cols {
			kv, ok1 := c[0].Median[m.Key]
			ov, ok2 := c[1].Median[m.Key]
			cell := "–"
			if ok1 && ok2 && ov != 0 {
				cell = fmtNum(kv/ov) + "x"
			}
			b.WriteString(" " + cell + " |")
		}
		b.WriteString("\n")
	}
}
