package follow_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/follow"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

func fixture(i int, exc string) sqltest.FailedFixture {
	u := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
	return sqltest.FailedFixture{UUID: &u, Connection: "database", Queue: "default",
		Payload:   `{"uuid":"` + u + `","displayName":"App\\Jobs\\X","job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"App\\Jobs\\X","command":"O:10:\"App\\Jobs\\X\":0:{}"}}`,
		Exception: exc + " in /app/X.php:1\nStack trace:\n#0 {main}", FailedAt: "2026-11-30 10:00:00"}
}

// TestRetryHooksAndServiceSource: a retry reports what it pushed batch by
// batch (RetryBatch.Pushed), lets its caller pace between small batches and
// stop when it wants, passes over excluded uuids; a ServiceSource then sees each pushed
// job waiting, running, gone, or back in failed_jobs, and NewFailures
// groups the failed-again ones by signature. On a table without a uuid
// column (Laravel 7, failed.driver "database") the job that failed again is
// found by the payload uuid of a row added since the source was made.
func TestRetryHooksAndServiceSource(t *testing.T) {
	for name, v := range map[string]sqlstore.SchemaVariant{"uuid": sqlstore.SchemaLaravel8, "legacy": sqlstore.SchemaLegacy} {
		t.Run(name, func(t *testing.T) { testRetryHooksAndServiceSource(t, v) })
	}
}

func testRetryHooksAndServiceSource(t *testing.T, v sqlstore.SchemaVariant) {
	ctx := context.Background()
	store := sqltest.OpenLaravel(t, "sqlite", v, time.UTC)
	svc := &triage.Service{Store: store, Now: func() time.Time { return time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC) }, Location: time.UTC}
	var fx []sqltest.FailedFixture
	for i := 1; i <= 8; i++ {
		fx = append(fx, fixture(i, "RuntimeException: CRM timeout"))
	}
	sqltest.InsertFailed(t, store, fx...)

	src, err := follow.NewServiceSource(ctx, svc) // before the first push
	if err != nil {
		t.Fatal(err)
	}
	var pushed []triage.Pushed
	var before []int
	batches := 0
	run := svc.StartRetry(ctx, triage.RetryParams{All: true, BatchSize: 2, Exclude: map[string]bool{*fx[1].UUID: true}})
	for len(pushed) < 4 && run.More() { // a breaker, asked before each batch
		before = append(before, run.Result().Retried) // where a pacer waits
		if !run.Next(ctx) {
			break
		}
		if p := run.Batch().Pushed; len(p) > 0 {
			batches++
			pushed = append(pushed, p...)
		}
	}
	run.Close()
	res, err := run.Result(), run.Err()
	if err != nil {
		t.Fatal(err)
	}
	// Batches of 2 rows: {0, excluded 1}, {2, 3}, {4, 5}; the caller
	// asks before each and stops once 4 are pushed.
	if res.Retried != 5 || len(pushed) != 5 || batches != 3 {
		t.Fatalf("retried %d, pushed %d in %d batches; want 5 in 3 (2 rows a batch, one excluded, stopped past 4)", res.Retried, len(pushed), batches)
	}
	if fmt.Sprint(before) != "[0 1 3]" {
		t.Errorf("before the batches: %v retried, want [0 1 3]", before)
	}
	for i, want := range []int{0, 2, 3, 4, 5} { // fx[1] is excluded
		if p := pushed[i]; p.UUID != *fx[want].UUID || p.Queue != "default" || p.Connection != "database" || p.Class != "App\\Jobs\\X" {
			t.Errorf("pushed[%d] = %+v, want fixture %d", i, p, want)
		}
	}
	if n, _ := store.Count(ctx, triage.Filter{}); n != 3 {
		t.Errorf("%d rows left in failed_jobs, want 3 (excluded and unpushed)", n)
	}

	o, err := src.Look(ctx, pushed)
	if err != nil {
		t.Fatal(err)
	}
	if o.Partial || len(o.Queued) != 5 || len(o.Failed) != 0 {
		t.Fatalf("first look %+v, want all 5 waiting", o)
	}
	for _, p := range pushed {
		if o.Queued[p.UUID] != triage.JobWaiting {
			t.Errorf("%s: %v, want waiting", p.UUID, o.Queued[p.UUID])
		}
	}
	// A worker reserves pushed[0], runs pushed[1] (deleted), fails pushed[2]
	// (deleted and back in failed_jobs with another message).
	db := store.DB()
	mustExec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatal(err)
		}
	}
	mustExec(`UPDATE jobs SET reserved_at = 1 WHERE payload LIKE ?`, `%`+pushed[0].UUID+`%`)
	mustExec(`DELETE FROM jobs WHERE payload LIKE ? OR payload LIKE ?`, `%`+pushed[1].UUID+`%`, `%`+pushed[2].UUID+`%`)
	again := fixture(4, "RuntimeException: Card declined") // pushed[2]'s row, as the worker writes it
	againID := sqltest.InsertFailed(t, store, again)[0]

	o, err = src.Look(ctx, pushed)
	if err != nil {
		t.Fatal(err)
	}
	if o.Queued[pushed[0].UUID] != triage.JobRunning || o.Queued[pushed[3].UUID] != triage.JobWaiting {
		t.Errorf("queued %v", o.Queued)
	}
	if _, in := o.Queued[pushed[1].UUID]; in {
		t.Errorf("a deleted job is still seen queued")
	}
	if len(o.Failed) != 1 || !o.Failed[pushed[2].UUID] {
		t.Errorf("failed %v, want only %s", o.Failed, pushed[2].UUID)
	}

	groups, unread, err := follow.NewFailures(ctx, store, []triage.Pushed{pushed[2], pushed[3]}, src.RefOf)
	if err != nil {
		t.Fatal(err)
	}
	// pushed[3] is not in failed_jobs: not read, not grouped. The group
	// names the row as failed lists it: by uuid, or by row id.
	wantID := pushed[2].UUID
	if v == sqlstore.SchemaLegacy {
		wantID = fmt.Sprint(againID)
	}
	if unread != 1 || len(groups) != 1 || groups[0].ExceptionClass != "RuntimeException" || groups[0].Message != "Card declined" ||
		len(groups[0].IDs) != 1 || groups[0].IDs[0] != wantID || groups[0].Signature == "" {
		t.Errorf("NewFailures = %+v, unread %d", groups, unread)
	}
}
