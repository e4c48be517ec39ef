package prometheus_test

import (
	"fmt"

	prom "github.com/prometheus/client_golang/prometheus"

	kwprom "github.com/kwatch/kwatch/metrics/prometheus"
	"github.com/kwatch/kwatch/queue"
)

// A queue records its workqueue_* series into a client_golang registry,
// beside whatever else the program registers there.
func ExampleNew() {
	reg := prom.NewRegistry()
	provider := kwprom.New(reg)
	q := queue.New[string](queue.Options{Name: "pods", Metrics: provider})
	q.Add("default/web")
	q.Add("default/web") // deduplicated
	q.Add("default/db")

	families, err := reg.Gather()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range families {
		if f.GetName() == queue.MetricAdds || f.GetName() == queue.MetricDepth {
			m := f.GetMetric()[0]
			fmt.Println(f.GetName(), m.GetLabel()[0].GetValue(), m.GetCounter().GetValue()+m.GetGauge().GetValue())
		}
	}
	// Output:
	// workqueue_adds_total pods 2
	// workqueue_depth pods 2
}
