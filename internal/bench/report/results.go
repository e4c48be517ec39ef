// Package report holds the benchmark's results and renders them: medians
// over runs, ratios kwatch/client-go checked against the targets,
// as JSON, Markdown and an SVG chart of the latency distributions.
package report

import (
	"slices"
	"sort"
)

// Results is everything one benchmark run measured.
type Results struct {
	Mode      string   `json:"mode"`
	Started   string   `json:"started"`
	WallS     float64  `json:"wallSeconds"`
	GoVersion string   `json:"goVersion"`
	CPUs      int      `json:"cpus"`
	Settings  []string `json:"settings"` // what the run was asked to do, one line each
	Rows      []*Row   `json:"rows"`
	Queue     []*Row   `json:"queue"`
	// Comparisons are filled by Compare.
	Comparisons []Comparison `json:"comparisons"`
	// Headlines are the comparisons the report opens with, in order.
	Headlines []Headline `json:"headlines,omitempty"`
	Failures  []string   `json:"failures,omitempty"`
}

// Row is one engine configuration at one pod count (or, for the queue,
// one engine at one worker count).
type Row struct {
	Name string `json:"name"`
	Pods int    `json:"pods,omitempty"`
	// Workers is set for queue rows.
	Workers int `json:"workers,omitempty"`
	// Runs holds each metric's value per run; Median their medians.
	Runs   map[string][]float64 `json:"runs"`
	Median map[string]float64   `json:"median"`
	// Latency holds every latency sample of every run in µs (for the
	// chart; not saved).
	Latency []int32 `json:"-"`
}

// Add records one run's metrics.
func (r *Row) Add(metrics map[string]float64) {
	if r.Runs == nil {
		r.Runs = map[string][]float64{}
	}
	for k, v := range metrics {
		r.Runs[k] = append(r.Runs[k], v)
	}
}

// Finish computes the medians.
func (r *Row) Finish() {
	r.Median = map[string]float64{}
	for k, vs := range r.Runs {
		r.Median[k] = Median(vs)
	}
}

// Median is the median of vs (the mean of the middle two for an even count).
func Median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Clone(vs)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Quantile is the q-quantile of samples (nearest rank); it sorts samples.
func Quantile(samples []int32, q float64) int32 {
	if len(samples) == 0 {
		return 0
	}
	slices.Sort(samples)
	i := int(q*float64(len(samples))+0.5) - 1
	return samples[min(max(i, 0), len(samples)-1)]
}

// Find returns the row named name at pods (queue rows: workers), or nil.
func Find(rows []*Row, name string, pods, workers int) *Row {
	for _, r := range rows {
		if r.Name == name && r.Pods == pods && r.Workers == workers {
			return r
		}
	}
	return nil
}

// Headline is one of the tables a report opens with: a kwatch row against
// a client-go row at every pod count, on the HeadlineMetrics.
type Headline struct {
	Title    string `json:"title"`
	Kwatch   string `json:"kwatch"`
	ClientGo string `json:"clientGo"`
}
