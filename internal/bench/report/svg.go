package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// Chart geometry, in SVG user units.
const (
	panelW, panelH = 900.0, 340.0
	padL, padR     = 70.0, 230.0
	padT, padB     = 40.0, 50.0
	maxNines       = 3.0 // the x axis ends at p99.9
)

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2"}

// WriteLatencySVG draws, for each pod count, every row's write-to-handler
// latency against percentile. The x axis is in "nines" (p0, p90, p99,
// p99.9) so that the tail gets as much room as the body; the y axis is
// logarithmic.
func WriteLatencySVG(w io.Writer, res *Results) error {
	var panels []int
	for _, n := range podCounts(res.Rows) {
		for _, r := range res.Rows {
			if r.Pods == n && len(r.Latency) > 0 && !slices.Contains(panels, n) {
				panels = append(panels, n)
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="12">`+"\n",
		panelW, panelH*float64(max(len(panels), 1)))
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	for i, n := range panels {
		writePanel(&b, res, n, float64(i)*panelH)
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// panel maps percentiles and latencies to one panel's coordinates.
type panel struct {
	y0           float64 // top of the panel
	logLo, logHi float64 // log10 of the y range in ms
}

func (p panel) x(nines float64) float64 {
	return padL + nines/maxNines*(panelW-padL-padR)
}

func (p panel) y(ms float64) float64 {
	l := math.Log10(max(ms, 1e-3))
	return p.y0 + padT + (p.logHi-l)/(p.logHi-p.logLo)*(panelH-padT-padB)
}

func writePanel(b *strings.Builder, res *Results, pods int, y0 float64) {
	var rows []*Row
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range res.Rows {
		if r.Pods != pods || len(r.Latency) == 0 {
			continue
		}
		slices.Sort(r.Latency)
		rows = append(rows, r)
		lo = min(lo, float64(r.Latency[0])/1e3)
		hi = max(hi, float64(r.Latency[len(r.Latency)-1])/1e3)
	}
	p := panel{y0: y0, logLo: math.Floor(math.Log10(max(lo, 1e-3))), logHi: math.Ceil(math.Log10(max(hi, 1e-2)))}
	if p.logHi <= p.logLo {
		p.logHi = p.logLo + 1
	}
	fmt.Fprintf(b, `<text x="%.0f" y="%.0f" font-size="14" font-weight="bold">Write-to-handler latency, %d pods (all runs)</text>`+"\n", padL, y0+22, pods)
	writeAxes(b, p)
	for i, r := range rows {
		color := palette[i%len(palette)]
		fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", color, curve(p, r.Latency))
		ly := y0 + padT + 18*float64(i)
		fmt.Fprintf(b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="%s" stroke-width="3"/>`, panelW-padR+15, ly, panelW-padR+40, ly, color)
		fmt.Fprintf(b, `<text x="%.0f" y="%.0f">%s (n=%d)</text>`+"\n", panelW-padR+46, ly+4, r.Name, len(r.Latency))
	}
}

// curve samples the sorted latencies at evenly spaced nines.
func curve(p panel, sorted []int32) string {
	var pts []string
	top := min(maxNines, math.Log10(float64(len(sorted))))
	for i := 0; i <= 300; i++ {
		nines := top * float64(i) / 300
		q := 1 - math.Pow(10, -nines)
		ms := float64(Quantile(sorted, q)) / 1e3
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", p.x(nines), p.y(ms)))
	}
	return strings.Join(pts, " ")
}

func writeAxes(b *strings.Builder, p panel) {
	x0, x1 := p.x(0), p.x(maxNines)
	yb, yt := p.y0+panelH-padB, p.y0+padT
	fmt.Fprintf(b, `<rect x="%.0f" y="%.0f" width="%.0f" height="%.0f" fill="none" stroke="#444"/>`+"\n", x0, yt, x1-x0, yb-yt)
	for i, label := range []string{"p0", "p90", "p99", "p99.9"} {
		x := p.x(float64(i))
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#ddd"/><text x="%.1f" y="%.0f" text-anchor="middle">%s</text>`+"\n",
			x, yt, x, yb, x, yb+16, label)
	}
	fmt.Fprintf(b, `<text x="%.0f" y="%.0f" text-anchor="middle">percentile</text>`+"\n", (x0+x1)/2, yb+34)
	for e := p.logLo; e <= p.logHi; e++ {
		y := p.y(math.Pow(10, e))
		fmt.Fprintf(b, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#ddd"/><text x="%.0f" y="%.1f" text-anchor="end">%s ms</text>`+"\n",
			x0, y, x1, y, x0-6, y+4, fmtNum(math.Pow(10, e)))
	}
}
