package cmd

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jobtriage/jobtriage/alerts"
	"github.com/jobtriage/jobtriage/alerts/metrics"
	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sanitize"
)

// One check's report: the table, --json and what the metrics say of it.

// monitorCheck runs one check and says on stderr what it could not see.
func monitorCheck(ctx context.Context, opts *MonitorOptions, src triage.MonitorSource, p triage.MonitorParams) (triage.Report, []triage.Breach, error) {
	p.Now = opts.Now()
	rep, err := triage.Monitor(ctx, src, p)
	if err != nil {
		return rep, nil, err
	}
	breaches := rep.Check(triage.Thresholds{MaxSize: opts.MaxSize, MaxAge: opts.MaxAge, MaxFailed: opts.MaxFailed})
	if rep.NoJobsTable && len(p.Connections) == 0 {
		fmt.Fprintln(opts.IO.ErrOut, "warning: no jobs table: sizes are 0 and only failures were counted")
	}
	for _, c := range p.Connections {
		// A driver jobtriage cannot read is the same on every run (doctor
		// says it); a connection that fails to resolve is news.
		if c.Blind != "" && (!c.Unsupported || opts.IO.Verbose()) {
			fmt.Fprintln(opts.IO.ErrOut, "note: cannot see the queues of connection "+sanitize.Line(c.Name+": "+c.Blind)+" (failures still counted)")
		}
	}
	if rep.PauseError != "" { // the queues' pause state is unknown
		fmt.Fprintln(opts.IO.ErrOut, "note: "+sanitize.Line(rep.PauseError))
	}
	return rep, breaches, nil
}

func printReport(ios *IOStreams, rep triage.Report) error {
	t := newTable(ios, -1, "QUEUE", "SIZE", "PENDING", "DELAYED", "RESERVED", "STUCK", "OLDEST PENDING", "FAILED/"+alerts.FormatDuration(rep.Window))
	for _, q := range rep.Queues {
		oldest := ""
		switch {
		case q.OldestPendingAt.IsZero() && q.OldestPendingUnknown != "":
			oldest = "?" // why: below the table
		case q.OldestPendingAt.IsZero():
		case ios.IsStdoutTTY():
			oldest = alerts.FormatDuration(q.OldestPendingAge.Truncate(time.Second))
		default:
			// Piped, a duration is a number of seconds a script can compare.
			oldest = strconv.FormatInt(int64(q.OldestPendingAge/time.Second), 10)
		}
		name := triage.QueueRef{Connection: q.Connection, Queue: q.Queue}.String()
		if q.Paused {
			name += " PAUSED"
		}
		t.add(name, i64(q.Size), i64(q.Pending), i64(q.Delayed), i64(q.Reserved), i64(q.Stuck), oldest, i64(q.Failed))
	}
	if len(rep.Queues) == 0 && ios.IsStdoutTTY() {
		fmt.Fprintln(ios.ErrOut, "no queued jobs and no failures in the window")
	}
	if err := t.render(); err != nil {
		return err
	}
	if ios.IsStdoutTTY() {
		for _, q := range rep.Queues {
			if q.OldestPendingAt.IsZero() && q.OldestPendingUnknown != "" {
				fmt.Fprintf(ios.ErrOut, "OLDEST PENDING of %s is ?: %s\n", sanitize.Line(q.Queue), sanitize.Line(q.OldestPendingUnknown))
			}
		}
	}
	return nil
}

func i64(n int64) string { return strconv.FormatInt(n, 10) }

// monitorSchemaVersion is the version of monitor's JSON (docs/json.md).
const monitorSchemaVersion = 1

// queueJSON is one queue of monitor --json: times RFC 3339 or null, durations in seconds.
type queueJSON struct {
	Connection              string  `json:"connection,omitempty"`
	Queue                   string  `json:"queue"`
	Size                    int64   `json:"size"`
	Pending                 int64   `json:"pending"`
	Delayed                 int64   `json:"delayed"`
	Reserved                int64   `json:"reserved"`
	Stuck                   int64   `json:"stuck"`
	OldestPendingAt         *string `json:"oldest_pending_at"`
	OldestPendingAgeSeconds *int64  `json:"oldest_pending_age_seconds"`
	Failed                  int64   `json:"failed"`
	Paused                  bool    `json:"paused,omitempty"`
}

type reportJSONOut struct {
	SchemaVersion     int             `json:"schema_version"`
	At                string          `json:"at"`
	Healthy           bool            `json:"healthy"`
	WindowSeconds     int64           `json:"window_seconds"`
	RetryAfterSeconds int64           `json:"retry_after_seconds"`
	Failed            int64           `json:"failed"`
	JobsTable         bool            `json:"jobs_table"`
	Queues            []queueJSON     `json:"queues"`
	Breaches          []triage.Breach `json:"breaches"`
	// Blind names the connections whose queues could not be counted.
	Blind []string `json:"blind,omitempty"`
}

// rfc3339 is a time as the JSON outputs write it: UTC, whole seconds.
func rfc3339(t time.Time) string { return t.UTC().Truncate(time.Second).Format(time.RFC3339) }

func emptyReportJSON(at time.Time) reportJSONOut {
	return reportJSONOut{SchemaVersion: monitorSchemaVersion, At: rfc3339(at), Queues: []queueJSON{}, Breaches: []triage.Breach{}}
}

func reportJSON(rep triage.Report, breaches []triage.Breach) reportJSONOut {
	out := emptyReportJSON(rep.At)
	out.Healthy = len(breaches) == 0
	out.WindowSeconds = int64(rep.Window / time.Second)
	out.RetryAfterSeconds = int64(rep.RetryAfter / time.Second)
	out.Failed, out.JobsTable, out.Blind = rep.Failed, !rep.NoJobsTable, rep.Blind
	if breaches != nil {
		out.Breaches = breaches
	}
	for _, q := range rep.Queues {
		qj := queueJSON{Connection: q.Connection, Queue: q.Queue, Size: q.Size, Pending: q.Pending, Delayed: q.Delayed,
			Reserved: q.Reserved, Stuck: q.Stuck, Failed: q.Failed, Paused: q.Paused}
		if !q.OldestPendingAt.IsZero() {
			qj.OldestPendingAt, qj.OldestPendingAgeSeconds = new(rfc3339(q.OldestPendingAt)), new(int64(q.OldestPendingAge/time.Second))
		}
		out.Queues = append(out.Queues, qj)
	}
	return out
}

// metricsCheck is what the metrics say of a report, with firing alerts (a check's: its breaches).
func metricsCheck(rep triage.Report, firing int) metrics.Check {
	c := metrics.Check{At: rep.At, Holding: true, Firing: firing, Window: rep.Window, FailedWindow: rep.Failed}
	for _, q := range rep.Queues {
		c.Queues = append(c.Queues, metrics.Queue{Connection: q.Connection, Queue: q.Queue, Pending: q.Pending,
			Delayed: q.Delayed, Reserved: q.Reserved, Stuck: q.Stuck, OldestPendingAge: q.OldestPendingAge,
			FailedWindow: q.Failed, Paused: q.Paused})
	}
	return c
}
