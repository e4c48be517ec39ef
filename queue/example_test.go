package queue_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/kwatch/kwatch/metrics"
	"github.com/kwatch/kwatch/queue"
)

// A runner reconciling keys. An event handler would call Add as objects
// change; here keys are added by hand, one of them twice while it waits,
// and one fails once before it succeeds.
func ExampleRunner() {
	var wg sync.WaitGroup
	wg.Add(3) // three successful reconciles to wait for
	failedOnce := false
	reg := metrics.NewSet()

	runner, err := queue.NewRunner(queue.RunnerOptions[string]{
		Workers: 1, // one worker keeps the printed order stable
		Reconcile: func(ctx context.Context, key string) (queue.Result, error) {
			if key == "default/flaky" && !failedOnce {
				failedOnce = true
				fmt.Println("reconcile", key, "failed: will retry with backoff")
				return queue.Result{}, errors.New("transient")
			}
			fmt.Println("reconciled", key)
			wg.Done()
			return queue.Result{}, nil
		},
		Queue:  queue.RateLimitedOptions[string]{Options: queue.Options{Name: "example", Metrics: reg}},
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	runner.Add("default/web")
	runner.Add("default/flaky")
	runner.Add("default/web") // still waiting: deduplicated
	runner.Add("kube-system/dns")

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runner.Run(ctx) }()
	wg.Wait()
	cancel()
	fmt.Println("Run returned:", <-done)

	// The registry is an http.Handler to mount at /metrics; here, print
	// the reconcile counters from its text exposition.
	var text strings.Builder
	if err := reg.WritePrometheus(&text); err != nil {
		fmt.Println(err)
		return
	}
	for _, line := range strings.Split(text.String(), "\n") {
		if strings.HasPrefix(line, "kwatch_reconcile_total{") {
			fmt.Println(line)
		}
	}
	// Output:
	// reconciled default/web
	// reconcile default/flaky failed: will retry with backoff
	// reconciled kube-system/dns
	// reconciled default/flaky
	// Run returned: <nil>
	// kwatch_reconcile_total{name="example",result="error"} 1
	// kwatch_reconcile_total{name="example",result="panic"} 0
	// kwatch_reconcile_total{name="example",result="requeue"} 0
	// kwatch_reconcile_total{name="example",result="success"} 3
}

// Keys of an initial list wait at low priority, so that a change that
// arrives meanwhile goes first; a low key that changes moves up.
func ExampleQueue_AddWith() {
	q := queue.New[string](queue.Options{})
	for _, k := range []string{"default/a", "default/b", "default/c"} {
		q.AddWith(k, queue.AddOptions{Priority: queue.PriorityLow}) // from the initial list
	}
	q.Add("default/new") // created meanwhile
	q.Add("default/c")   // changed meanwhile: moves up
	for q.Len() > 0 {
		k, p, _ := q.GetWithPriority()
		fmt.Println(k, p)
		q.Done(k)
	}
	// Output:
	// default/new normal
	// default/c normal
	// default/a low
	// default/b low
}
