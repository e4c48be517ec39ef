package prometheus

import (
	"slices"
	"strings"
	"sync"

	prom "github.com/prometheus/client_golang/prometheus"
)

// funcCollector is the collector of a GaugeFunc or CounterFunc name: one
// descriptor, and a function per label-value set, called at scrape time.
type funcCollector struct {
	desc      *prom.Desc
	valueType prom.ValueType

	mu     sync.Mutex
	series map[string]funcSeries // by label values joined with \xff
}

type funcSeries struct {
	values []string
	fn     func() float64
}

func newFuncCollector(desc *prom.Desc, vt prom.ValueType) *funcCollector {
	return &funcCollector{desc: desc, valueType: vt, series: make(map[string]funcSeries)}
}

// set registers or replaces the function of the series with values.
func (c *funcCollector) set(values []string, fn func() float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.series[strings.Join(values, "\xff")] = funcSeries{values: slices.Clone(values), fn: fn}
}

// Describe sends the one descriptor.
func (c *funcCollector) Describe(ch chan<- *prom.Desc) { ch <- c.desc }

// Collect calls every function, outside the lock: a function may be slow
// or register another series.
func (c *funcCollector) Collect(ch chan<- prom.Metric) {
	c.mu.Lock()
	series := make([]funcSeries, 0, len(c.series))
	for _, s := range c.series {
		series = append(series, s)
	}
	c.mu.Unlock()
	for _, s := range series {
		m, err := prom.NewConstMetric(c.desc, c.valueType, s.fn(), s.values...)
		if err != nil {
			m = prom.NewInvalidMetric(c.desc, err)
		}
		ch <- m
	}
}
