package triage_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

// TestRetrySkipsPoisonRowsAndGoesOn: a queue name the jobs table cannot
// hold and payloads no worker can run are skipped, each named, while every
// other job of the same batch goes back.
func TestRetrySkipsPoisonRowsAndGoesOn(t *testing.T) {
	forEachDriver(t, func(t *testing.T, driver string) {
		ctx := context.Background()
		svc, store := newService(t, driver)
		mk := func(i int, queue, payload string) sqltest.FailedFixture {
			u := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
			return sqltest.FailedFixture{UUID: &u, Connection: "database", Queue: queue,
				Payload: strings.ReplaceAll(payload, "UUID", u), Exception: "RuntimeException: x in /a.php:1\nStack trace:\n#0 {main}",
				FailedAt: "2026-11-30 10:00:00"}
		}
		long := strings.Repeat("q", 300)
		var fx []sqltest.FailedFixture
		for i := 1; i <= 10; i++ {
			fx = append(fx, mk(i, "default", payloadOf("UUID", "")))
		}
		fx[3] = mk(4, long, payloadOf("UUID", ""))
		fx[5] = mk(6, "default", `{}`)
		fx[7] = mk(8, "default", `{"uuid":"UUID","job":null,"data":{}}`)
		ids := sqltest.InsertFailed(t, store, fx...)

		wantSkips := map[string]string{*fx[5].UUID: triage.SkipMalformed, *fx[7].UUID: triage.SkipMalformed}
		wantRetried := 7
		if driver != "sqlite" { // SQLite keeps a queue name of any length
			wantSkips[*fx[3].UUID] = triage.SkipQueueTooLong
			_, err := svc.Retry(ctx, triage.RetryParams{All: true, ToQueue: long})
			if !errors.Is(err, triage.ErrInvalidInput) || countJobs(t, store) != 0 {
				t.Errorf("--to-queue of 300 characters: %v", err)
			}
		} else {
			wantRetried++
		}
		res, err := svc.Retry(ctx, triage.RetryParams{All: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.Retried != wantRetried || len(res.Skipped) != len(wantSkips) {
			t.Fatalf("retried %d (want %d), skipped %+v", res.Retried, wantRetried, res.Skipped)
		}
		for _, s := range res.Skipped {
			if wantSkips[s.ID] != s.Code {
				t.Errorf("skip %+v, want code %q", s, wantSkips[s.ID])
			}
			if s.Code == triage.SkipQueueTooLong && !strings.Contains(s.Reason, fmt.Sprintf("row %d (uuid %s)", ids[3], s.ID)) {
				t.Errorf("reason %q does not name the row", s.Reason)
			}
		}
		if countJobs(t, store) != wantRetried {
			t.Errorf("jobs has %d rows, want %d", countJobs(t, store), wantRetried)
		}
		left, _ := store.Count(ctx, triage.Filter{})
		if int(left) != len(wantSkips) {
			t.Errorf("%d rows left in failed_jobs, want the %d skipped", left, len(wantSkips))
		}
	})
}

// TestRetryPayloadNeedsAJob: a payload without a "job" string is skipped
// before any backend's own rules: a worker would delete it unrun.
func TestRetryPayloadNeedsAJob(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for _, raw := range []string{`{}`, `{"uuid":"u","job":""}`, `{"uuid":"u","job":42}`, `{"uuid":"u","job":{"a":1}}`, `{"uuid":"u","data":{"command":"x"}}`} {
		if _, code, reason := triage.RetryPayload([]byte(raw), now, 0, false); code != triage.SkipMalformed || !strings.Contains(reason, `"job"`) {
			t.Errorf("%s: code %q reason %q", raw, code, reason)
		}
	}
	if out, code, _ := triage.RetryPayload([]byte(`{"uuid":"u","job":"App\\Jobs\\X@handle","data":{}}`), now, 0, false); code != "" || out == nil {
		t.Errorf("a payload with a job string was refused: %s", code)
	}
}

// TestRetryToAnotherDatabaseIsolatesARefusedRow: when jobs lives in
// another database (--jobs-dsn) and its table refuses one job for a reason
// of that job's own, the batch runs again without it, and it is named.
func TestRetryToAnotherDatabaseIsolatesARefusedRow(t *testing.T) {
	forEachDriver(t, func(t *testing.T, driver string) {
		ctx := context.Background()
		svc, failedStore := newService(t, driver)
		jobsStore := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
		refuse := []string{"ALTER TABLE jobs ADD CONSTRAINT jobs_no_poison CHECK (queue <> 'poison')"}
		if driver == "sqlite" {
			refuse = []string{"DROP TABLE jobs", `CREATE TABLE "jobs" ("id" integer not null primary key autoincrement, "queue" varchar not null CHECK (queue <> 'poison'),
				"payload" text not null, "attempts" integer not null, "reserved_at" integer, "available_at" integer not null, "created_at" integer not null)`}
		}
		for _, q := range refuse {
			if _, err := jobsStore.DB().Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		// failed_jobs' own database has no jobs table.
		if _, err := failedStore.DB().Exec("DROP TABLE jobs"); err != nil {
			t.Fatal(err)
		}
		jobsOnly, err := sqlstore.Open(ctx, sqlstore.Config{Endpoint: jobsStore.Endpoint(), JobsOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer jobsOnly.Close()
		var fx []sqltest.FailedFixture
		for i := 1; i <= 5; i++ {
			u := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
			fx = append(fx, sqltest.FailedFixture{UUID: &u, Connection: "database", Queue: "default", Payload: payloadOf(u, ""),
				Exception: "RuntimeException: x in /a.php:1\nStack trace:\n#0 {main}", FailedAt: "2026-11-30 10:00:00"})
		}
		fx[2].Queue = "poison"
		ids := sqltest.InsertFailed(t, failedStore, fx...)
		svc.Router = triage.NewRouter(nil, nil, &sqlstore.JobsBackend{Store: jobsOnly})
		res, err := svc.Retry(ctx, triage.RetryParams{All: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.Retried != 4 || len(res.Skipped) != 1 || res.Skipped[0].Code != triage.SkipRefused ||
			!strings.Contains(res.Skipped[0].Reason, fmt.Sprintf("row %d (uuid %s)", ids[2], *fx[2].UUID)) {
			t.Fatalf("retried %d, skipped %+v", res.Retried, res.Skipped)
		}
		if n := len(jobsByUUID(t, jobsStore)); n != 4 {
			t.Errorf("the other database's jobs has %d rows, want 4", n)
		}
		if n, _ := failedStore.Count(ctx, triage.Filter{}); n != 1 {
			t.Errorf("%d rows left in failed_jobs, want the refused one", n)
		}
	})
}
