package report

// Comparison is one metric of a kwatch row against a client-go row at one
// pod count (queue: worker count), medians over runs.
type Comparison struct {
	Kwatch   string  `json:"kwatch"`
	ClientGo string  `json:"clientGo"`
	Pods     int     `json:"pods,omitempty"`
	Workers  int     `json:"workers,omitempty"`
	Metric   string  `json:"metric"`
	KwatchV  float64 `json:"kwatchValue"`
	ClientV  float64 `json:"clientGoValue"`
	Ratio    float64 `json:"ratio"` // kwatch/client-go
	Target   string  `json:"target,omitempty"`
	// Met is set when a target applies.
	Met *bool `json:"met,omitempty"`
}

// Pair names a kwatch row and the client-go row it is compared with.
type Pair struct{ Kwatch, ClientGo string }

// Compare fills res.Comparisons for pairs at every pod count, and for the
// queue rows.
func Compare(res *Results, pairs []Pair, podCounts []int) {
	res.Comparisons = nil
	for _, n := range podCounts {
		for _, p := range pairs {
			k, c := Find(res.Rows, p.Kwatch, n, 0), Find(res.Rows, p.ClientGo, n, 0)
			if k == nil || c == nil {
				continue
			}
			for _, m := range Metrics {
				res.add(p, n, 0, m.Key, k, c)
			}
		}
	}
	for _, k := range res.Queue {
		if k.Name != "kwatch" {
			continue
		}
		if c := Find(res.Queue, "client-go", 0, k.Workers); c != nil {
			res.add(Pair{"kwatch", "client-go"}, 0, k.Workers, QueueMetric.Key, k, c)
		}
	}
}

func (res *Results) add(p Pair, pods, workers int, metric string, k, c *Row) {
	kv, kok := k.Median[metric]
	cv, cok := c.Median[metric]
	if !kok || !cok {
		return
	}
	cmp := Comparison{Kwatch: p.Kwatch, ClientGo: p.ClientGo, Pods: pods, Workers: workers,
		Metric: metric, KwatchV: kv, ClientV: cv}
	if cv != 0 {
		cmp.Ratio = kv / cv
	}
	for _, t := range Targets {
		if t.Kwatch != p.Kwatch || t.ClientGo != p.ClientGo || t.Metric != metric || (t.Pods != 0 && t.Pods != pods) {
			continue
		}
		met := (t.Min == 0 || cmp.Ratio >= t.Min) && (t.Max == 0 || cmp.Ratio <= t.Max)
		cmp.Target, cmp.Met = t.Text, &met
	}
	res.Comparisons = append(res.Comparisons, cmp)
}
