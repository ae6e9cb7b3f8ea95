package notify_test

import (
	"context"
	"os"
	"time"

	"github.com/jobtriage/jobtriage/alerts"
	"github.com/jobtriage/jobtriage/alerts/notify"
)

// The whole path a watcher takes: failure times into windows, counts into
// the evaluator, the digest out through the dispatcher.
func Example() {
	rules := []alerts.Rule{{Key: "queue:emails", Threshold: 3, Window: time.Minute}}
	counter, _ := alerts.NewCounter(rules)
	evaluator, _ := alerts.NewEvaluator(rules)
	dispatcher := &notify.Dispatcher{Notifiers: []notify.Notifier{notify.NewLog(os.Stdout)}}

	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, s := range []int{100, 103, 105, 140, 160} {
		counter.Observe(start.Add(time.Duration(s)*time.Second), "app", "queue:emails")
	}
	now := start.Add(165 * time.Second)
	digest := evaluator.Evaluate(now, counter.Counts(now))
	if _, err := dispatcher.Dispatch(context.Background(), digest); err != nil {
		os.Stdout.WriteString(err.Error())
	}
	// Output:
	// 2026-11-30T12:02:45Z FIRING queue:emails: 3 failures in the last 1m (threshold 3)
}
