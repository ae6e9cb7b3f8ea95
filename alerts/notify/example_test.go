package notify_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/jobtriage/jobtriage/alerts"
	"github.com/jobtriage/jobtriage/alerts/notify"
)

// stdout prints each notification's line, as the watcher does.
type stdout struct{}

func (stdout) Name() string { return "stdout" }
func (stdout) Notify(_ context.Context, d alerts.Digest) error {
	for _, n := range d.Notifications {
		fmt.Println(n.At.UTC().Format(time.RFC3339), notify.Line(n))
	}
	return nil
}

// The whole path a watcher takes: failure times into a window, its count
// into the evaluator, the digest out through the dispatcher.
func Example() {
	window, _ := alerts.NewWindow(time.Minute)
	evaluator, _ := alerts.NewEvaluator(alerts.Rule{Key: "queue:emails", Threshold: 3, Window: time.Minute})
	dispatcher := &notify.Dispatcher{}

	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, s := range []int{100, 103, 105, 140, 160} {
		window.Add(start.Add(time.Duration(s) * time.Second))
	}
	now := start.Add(165 * time.Second)
	digest := alerts.Digest{At: now}
	if n, ok := evaluator.Evaluate(now, window.Count(now)); ok {
		digest.Notifications = append(digest.Notifications, n)
	}
	if err := dispatcher.Send(context.Background(), stdout{}, digest); err != nil {
		os.Stdout.WriteString(err.Error())
	}
	// Output:
	// 2026-11-30T12:02:45Z FIRING queue:emails: 3 failures in the last 1m (threshold 3)
}
