package cmd

import (
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
)

// TestMonitorSaysWhyTheOldestPendingAgeIsUnknown: a queue whose backend
// cannot date its oldest pending job (a Redis queue of Laravel 8 payloads)
// shows ? under OLDEST PENDING, not a blank, and on a terminal says why;
// piped, the column is ? and stderr stays quiet.
func TestMonitorSaysWhyTheOldestPendingAgeIsUnknown(t *testing.T) {
	rep := triage.Report{Window: time.Hour, Queues: []triage.QueueHealth{
		{Connection: "redis", Queue: "default", Size: 3, Pending: 3, OldestPendingUnknown: "no time in the payload"},
		{Queue: "emails"},
	}}
	for _, tty := range []bool{true, false} {
		ios, _, out, errOut := Test()
		ios.stdoutTTY = tty
		if err := printReport(ios, rep); err != nil {
			t.Fatal(err)
		}
		var row string
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(l, "redis:default") {
				row = l
			}
		}
		if f := strings.Fields(row); len(f) < 8 || f[6] != "?" {
			t.Errorf("tty %v: OLDEST PENDING of redis:default is not ?: %q\n%s", tty, row, out)
		}
		says := strings.Contains(errOut.String(), "OLDEST PENDING of default is ?: no time in the payload")
		if says != tty {
			t.Errorf("tty %v: stderr %q", tty, errOut)
		}
	}
}
