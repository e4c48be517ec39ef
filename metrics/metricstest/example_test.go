package metricstest_test

import (
	"fmt"

	"github.com/kwatch/kwatch/metrics/metricstest"
)

// Parse reads a scrape back and checks its structure, so a test can assert
// on the values its code recorded.
func ExampleParse() {
	samples, err := metricstest.Parse("# HELP kwatch_events_total Events.\n" +
		"# TYPE kwatch_events_total counter\n" +
		"kwatch_events_total{name=\"pods\"} 42\n")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range samples {
		fmt.Println(s.Name, s.Labels, s.Value)
	}
	// Output: kwatch_events_total [{name pods}] 42
}
