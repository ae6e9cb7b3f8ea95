package cmd

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
)

// TestMonitorNotesThatAreNotNews: a connection whose driver jobtriage
// cannot read (sync, sqs) is the same on every run, so its note is printed
// with --verbose only; a connection that fails to resolve still is.
func TestMonitorNotesThatAreNotNews(t *testing.T) {
	store := seedOn(t, "sqlite")
	p := triage.MonitorParams{Window: time.Hour, RetryAfter: time.Minute, Connections: []triage.MonitorConnection{
		{Name: "database", DefaultQueue: "default", Local: true},
		{Name: "sync", Blind: "the sync driver cannot be read by jobtriage", Unsupported: true},
		{Name: "reports", Blind: `connection "reports" queues to database connection "warehouse": not configured`},
	}}
	for _, verbose := range []bool{false, true} {
		ios, _, _, errOut := Test()
		ios.verbose = verbose
		opts := &MonitorOptions{IO: ios, Now: func() time.Time { return testNow }}
		if _, _, err := monitorCheck(context.Background(), opts, store, p); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(errOut.String(), "connection sync:"); got != verbose {
			t.Errorf("verbose %v: sync note printed %v:\n%s", verbose, got, errOut.String())
		}
		if !strings.Contains(errOut.String(), `note: cannot see the queues of connection reports: connection "reports" queues`) {
			t.Errorf("verbose %v: the unresolved connection's note is missing:\n%s", verbose, errOut.String())
		}
	}
	h := newHarness(t, false)
	if code := h.run("monitor", "--verbose", "--dsn", "sqlite:"+store.Endpoint().Path); code != ExitOK {
		t.Errorf("--verbose: exit %d %s", code, h.errOut.String())
	}
}
