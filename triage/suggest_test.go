package triage_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
	"github.com/jobtriage/jobtriage/triage/triagetest"
)

func suggestPayload(uuid, class string) string {
	c := strings.ReplaceAll(class, `\`, `\\`)
	return `{"uuid":"` + uuid + `","displayName":"` + c + `","job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"` + c + `","command":"O:8:\"stdClass\":0:{}"}}`
}

func TestSuggest(t *testing.T) {
	forEachDriver(t, func(t *testing.T, driver string) {
		svc, store := newService(t, driver)
		var fx []sqltest.FailedFixture
		add := func(n int, conn, queue, class, exc string) {
			for range n {
				u := fmt.Sprintf("00000000-0000-4000-8000-%012d", len(fx)+1)
				fx = append(fx, sqltest.FailedFixture{UUID: &u, Connection: conn, Queue: queue,
					Payload: suggestPayload(u, class), Exception: exc + " in /app/X.php:1\nStack trace:\n#0 {main}",
					FailedAt: "2026-11-30 10:00:00"})
			}
		}
		add(3, "database", "emails", `App\Jobs\SendMail`, "RuntimeException: SMTP 421")
		add(1, "redis", "default", `App\Jobs\Sync`, "RuntimeException: deadlock 7")
		add(2, "redis", "default", `App\Jobs\Sync`, "RuntimeException: deadlock 9")
		sqltest.InsertFailed(t, store, fx...)
		svc.MonitorConnections = []triage.MonitorConnection{{Name: "sqs", DefaultQueue: "reports"}}

		got, err := svc.Suggest(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff([]triage.Suggestion{{Value: "default", Description: "3 recent failures"}, {Value: "emails", Description: "3 recent failures"},
			{Value: "reports", Description: "no recent failures"}}, got.Queues); d != "" {
			t.Errorf("queues (-want +got):\n%s", d)
		}
		if d := cmp.Diff([]triage.Suggestion{{Value: "database", Description: "3 recent failures"}, {Value: "redis", Description: "3 recent failures"},
			{Value: "sqs", Description: "no recent failures"}}, got.Connections); d != "" {
			t.Errorf("connections (-want +got):\n%s", d)
		}
		// Two signatures of three rows each: the deadlocks (numbers
		// normalised away) are newer, so they come first.
		if len(got.Signatures) != 2 || !strings.Contains(got.Signatures[0].Description, `App\Jobs\Sync · RuntimeException: deadlock`) {
			t.Errorf("signatures: %+v", got.Signatures)
		}
		page, err := svc.List(context.Background(), triage.ListParams{Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.IDs) != len(fx) || got.IDs[0].Value != page.Jobs[0].ID || got.Signatures[0].Value != page.Jobs[0].Signature {
			t.Errorf("ids %+v: want %d, newest %s (signature %s) first", got.IDs, len(fx), page.Jobs[0].ID, page.Jobs[0].Signature)
		}

		few, err := svc.Suggest(context.Background(), 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(few.IDs) != 2 || len(few.Queues) != 2 { // default (2 newest rows) + reports
			t.Errorf("Suggest(2) read more than two rows: %+v", few)
		}
	})
}

// TestCheckNames: a queue, connection or class that no failed job, queued
// job or configured connection has is an ErrNotFound naming the closest
// existing names; a known one (in failed_jobs, configured, or known to the
// caller) passes.
func TestCheckNames(t *testing.T) {
	ctx := context.Background()
	store := triagetest.New(triage.IDModeUUID, time.UTC)
	svc := &triage.Service{Store: store, Now: func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) }, Location: time.UTC,
		MonitorConnections: []triage.MonitorConnection{{Name: "sqs", DefaultQueue: "reports"}}}
	for i, q := range []string{"emails", "emails-high", "default"} {
		u := fmt.Sprintf("00000000-0000-4000-8000-%012d", i+1)
		store.Add(triagetest.Row{UUID: u, Connection: "redis", Queue: q, Payload: suggestPayload(u, `App\Jobs\Legacy`),
			Exception: "RuntimeException: x in /app/X.php:1", FailedAt: "2026-11-30 10:00:00"})
	}
	for _, n := range []triage.Names{
		{Queues: []string{"emails", "reports"}}, {Connections: []string{"redis", "sqs"}}, {Class: "legacy"},
		{Queues: []string{"nightly"}, Known: []string{"nightly"}}, {},
	} {
		if err := svc.CheckNames(ctx, n); err != nil {
			t.Errorf("%+v: %v", n, err)
		}
	}
	for _, c := range []struct {
		n    triage.Names
		want string
	}{
		{triage.Names{Queues: []string{"emials"}}, `not found: no queue "emials": no failed job, no queued job and no configured queue has that name; did you mean emails?`},
		{triage.Names{Queues: []string{"emails-hihg"}}, `not found: no queue "emails-hihg": no failed job, no queued job and no configured queue has that name; did you mean emails-high?`},
		{triage.Names{Queues: []string{"reprots"}}, `not found: no queue "reprots": no failed job, no queued job and no configured queue has that name; did you mean reports?`},
		{triage.Names{Connections: []string{"redsi"}}, `not found: no connection "redsi": no failed job and no configured queue connection has that name; did you mean redis?`},
		{triage.Names{Class: "Legcy"}, `not found: no job class matches "Legcy": no failed job's class contains it; did you mean App\Jobs\Legacy?`},
		{triage.Names{Queues: []string{"zzz"}}, `not found: no queue "zzz": no failed job, no queued job and no configured queue has that name; check the spelling`},
		// A name that exists does not hide a misspelled one after it.
		{triage.Names{Queues: []string{"emails", "emials"}}, `not found: no queue "emials": no failed job, no queued job and no configured queue has that name; did you mean emails?`},
		{triage.Names{Connections: []string{"redis", "redsi"}}, `not found: no connection "redsi": no failed job and no configured queue connection has that name; did you mean redis?`},
		{triage.Names{Queues: []string{"emails"}, Class: "Legcy"}, `not found: no job class matches "Legcy": no failed job's class contains it; did you mean App\Jobs\Legacy?`},
	} {
		err := svc.CheckNames(ctx, c.n)
		if !errors.Is(err, triage.ErrNotFound) || err.Error() != c.want {
			t.Errorf("%+v:\n got %v\nwant %s", c.n, err, c.want)
		}
	}
}

// TestCheckMonitorNames: a queue the report counted jobs on exists; a queue
// of a connection the monitor cannot see is not judged; any other unknown
// queue is an UnknownNameError.
func TestCheckMonitorNames(t *testing.T) {
	_, store := newService(t, "sqlite")
	ctx := context.Background()
	p := triage.MonitorParams{DefaultConnection: "database", Connections: []triage.MonitorConnection{
		{Name: "database", DefaultQueue: "default", Local: true},
		{Name: "sqs", DefaultQueue: "reports", Blind: "the sqs driver cannot be read by jobtriage", Unsupported: true}}}
	rep := triage.Report{Queues: []triage.QueueHealth{{Queue: "busy", Size: 3}, {Queue: "quiet"}}}
	p.Queues = []triage.QueueRef{{Queue: "busy"}, {Queue: "default"}, {Connection: "sqs", Queue: "anything"}}
	if err := triage.CheckMonitorNames(ctx, store, p, rep); err != nil {
		t.Errorf("known queues: %v", err)
	}
	p.Queues = []triage.QueueRef{{Queue: "quiet"}}
	var unknown *triage.UnknownNameError
	if err := triage.CheckMonitorNames(ctx, store, p, rep); !errors.As(err, &unknown) || unknown.Name != "quiet" {
		t.Errorf("a queue with nothing on it: %v", err)
	}
}
