package triage_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
	"github.com/jobtriage/jobtriage/triage/triagetest"
)

// realRow is one failed_jobs row a real Laravel 8.83 worker wrote (see
// testdata/laravel-rows/README.md), with what jobtriage must derive from it.
type realRow struct {
	UUID       string `json:"uuid"`
	Connection string `json:"connection"`
	Queue      string `json:"queue"`
	Payload    string `json:"payload"`
	Exception  string `json:"exception"`
	FailedAt   string `json:"failed_at"`
	Expect     struct {
		Key               string `json:"key"`
		Class             string `json:"class"`
		ExceptionClass    string `json:"exception_class"`
		ExceptionMessage  string `json:"exception_message"`
		Encrypted         bool   `json:"encrypted"`
		RetryUntilExpires bool   `json:"retry_until_expires"`
	} `json:"expect"`
}

// The test app's APP_KEY (testdata/laravel-app/config/app.php): test-only.
const laravelAppKey = "base64:e5VAzEgp8tA5XxZAHumsAoNkEEHyNzs0zaG3grPQ+L4="

func loadRealRows(t *testing.T, driver string) []realRow {
	t.Helper()
	name := map[string]string{"sqlite": "sqlite", "postgres": "postgres", "mysql": "mysql"}[driver]
	raw, err := os.ReadFile("../testdata/laravel-rows/" + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var rows []realRow
	if err := json.Unmarshal(raw, &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) < 10 {
		t.Fatalf("only %d real rows", len(rows))
	}
	return rows
}

func insertReal(t *testing.T, s *sqlstore.Store, rows []realRow) []int64 {
	t.Helper()
	fx := make([]sqltest.FailedFixture, len(rows))
	for i, r := range rows {
		u := r.UUID
		fx[i] = sqltest.FailedFixture{UUID: &u, Connection: r.Connection, Queue: r.Queue, Payload: r.Payload,
			Exception: r.Exception, FailedAt: r.FailedAt}
	}
	return sqltest.InsertFailed(t, s, fx...)
}

func forEachDriver(t *testing.T, fn func(t *testing.T, driver string)) {
	for _, d := range sqltest.Drivers() {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			fn(t, d)
		})
	}
}

func fixedNow() time.Time { return time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC) }

func newService(t *testing.T, driver string) (*triage.Service, *sqlstore.Store) {
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
	return &triage.Service{Store: s, Now: fixedNow, AppKey: laravelAppKey, Location: time.UTC}, s
}

// TestRealWorkerRows: every row a real worker wrote is read as the worker
// meant it, on every dialect, by the same listing path the CLI uses.
func TestRealWorkerRows(t *testing.T) {
	forEachDriver(t, func(t *testing.T, driver string) {
		ctx := context.Background()
		svc, store := newService(t, driver)
		rows := loadRealRows(t, driver)
		insertReal(t, store, rows)
		page, err := svc.List(ctx, triage.ListParams{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Jobs) != len(rows) || page.Next != "" {
			t.Fatalf("listed %d jobs (next %q), want %d", len(page.Jobs), page.Next, len(rows))
		}
		for i, j := range page.Jobs {
			want := rows[len(rows)-1-i] // newest first
			if j.UUID != want.UUID || j.ID != want.UUID || j.Class != want.Expect.Class ||
				j.ExceptionClass != want.Expect.ExceptionClass || j.ExceptionMessage != want.Expect.ExceptionMessage {
				t.Errorf("%s: got class %q exception %q %q", want.Expect.Key, j.Class, j.ExceptionClass, j.ExceptionMessage)
			}
			d, err := svc.Show(ctx, j.ID)
			if err != nil {
				t.Fatal(err)
			}
			if d.Exception != want.Exception || string(d.Payload) != want.Payload {
				t.Errorf("%s: show changed the stored texts", want.Expect.Key)
			}
			if top := d.Chain.Top(); top.Class != want.Expect.ExceptionClass {
				t.Errorf("%s: show's top exception %q", want.Expect.Key, top.Class)
			}
			if d.RetryUntilExpired != want.Expect.RetryUntilExpires {
				t.Errorf("%s: retryUntil expired %v", want.Expect.Key, d.RetryUntilExpired)
			}
			switch {
			case want.Expect.Encrypted && d.Command != triage.CommandDecrypted:
				t.Errorf("%s: encrypted command state %q (%v)", want.Expect.Key, d.Command, d.CommandErr)
			case !want.Expect.Encrypted && d.Envelope.Command != "" && d.Command != triage.CommandPlain:
				t.Errorf("%s: command state %q (%v)", want.Expect.Key, d.Command, d.CommandErr)
			}
		}
		// Without APP_KEY an encrypted command is recognised and labelled.
		svc.AppKey = ""
		for _, r := range rows {
			if r.Expect.Encrypted {
				d, err := svc.Show(ctx, r.UUID)
				if err != nil || d.Command != triage.CommandEncrypted {
					t.Errorf("encrypted without key: %q, %v", d.Command, err)
				}
			}
		}
	})
}

func TestListPagingAndFilters(t *testing.T) {
	forEachDriver(t, func(t *testing.T, driver string) {
		ctx := context.Background()
		svc, store := newService(t, driver)
		rows := loadRealRows(t, driver)
		ids := insertReal(t, store, rows)
		var seen []string
		cursor := ""
		for pages := 0; ; pages++ {
			if pages > 10 {
				t.Fatal("paging does not end")
			}
			page, err := svc.List(ctx, triage.ListParams{Limit: 5, Cursor: cursor})
			if err != nil {
				t.Fatal(err)
			}
			for _, j := range page.Jobs {
				seen = append(seen, j.ID)
			}
			if page.Next == "" {
				break
			}
			cursor = page.Next
		}
		if len(seen) != len(ids) || seen[0] != rows[len(rows)-1].UUID || seen[len(seen)-1] != rows[0].UUID {
			t.Errorf("pages of 5 saw %d jobs", len(seen))
		}
		page, err := svc.List(ctx, triage.ListParams{Query: triage.Query{Class: "chargecard"}, Limit: 2})
		if err != nil || len(page.Jobs) != 2 || page.Next == "" {
			t.Fatalf("class filter page: %+v, %v", page, err)
		}
		rest, err := svc.List(ctx, triage.ListParams{Query: triage.Query{Class: "chargecard"}, Limit: 2, Cursor: page.Next})
		if err != nil || len(rest.Jobs) != 1 || rest.Next != "" || rest.Jobs[0].Class != `App\Jobs\ChargeCard` {
			t.Fatalf("class filter second page: %+v, %v", rest, err)
		}
		sig := rest.Jobs[0].Signature
		bySig, err := svc.List(ctx, triage.ListParams{Query: triage.Query{Signature: sig}, Limit: 50})
		if err != nil || len(bySig.Jobs) != 3 {
			t.Errorf("signature %s lists %d jobs, want the 3 ChargeCard failures: %v", sig, len(bySig.Jobs), err)
		}
		if _, err := svc.List(ctx, triage.ListParams{Cursor: "bm9wZQ"}); !errors.Is(err, triage.ErrInvalidCursor) {
			t.Errorf("bad cursor: %v", err)
		}
	})
}

func TestGroup(t *testing.T) {
	forEachDriver(t, func(t *testing.T, driver string) {
		ctx := context.Background()
		svc, store := newService(t, driver)
		insertReal(t, store, loadRealRows(t, driver))
		var snapshots int
		var sigs []triage.Signature
		for g, err := range svc.GroupSnapshots(ctx, triage.GroupParams{ProgressEvery: 4}) {
			if err != nil {
				t.Fatal(err)
			}
			snapshots++
			sigs = g.Signatures
		}
		total := 0
		for _, s := range sigs {
			total += s.Count
		}
		// Three ChargeCard failures differ only in the order number and the
		// queue: one signature.
		if total != 12 || sigs[0].Count != 3 || sigs[0].Class != `App\Jobs\ChargeCard` ||
			strings.Join(sigs[0].Queues, ",") != "default,emails" || len(sigs) != 10 {
			t.Errorf("group: %d signatures, first %+v", len(sigs), sigs[0])
		}
		if snapshots < 3 {
			t.Errorf("progress called %d times", snapshots)
		}
		if sigs[0].FirstSeen.After(sigs[0].LastSeen) {
			t.Errorf("first seen after last seen: %+v", sigs[0])
		}
	})
}

func payloadOf(uuid, extra string) string {
	return `{"uuid":"` + uuid + `","displayName":"App\\Jobs\\X","job":"Illuminate\\Queue\\CallQueuedHandler@call","maxTries":null,` +
		`"data":{"commandName":"App\\Jobs\\X","command":"O:10:\"App\\Jobs\\X\":1:{s:4:\"\u0000*\u0000a\";s:3:\"a\/b\";}"}` + extra + `}`
}

func TestRetrySemantics(t *testing.T) {
	forEachDriver(t, func(t *testing.T, driver string) {
		ctx := context.Background()
		svc, store := newService(t, driver)
		now := fixedNow()
		expired := fmt.Sprint(now.Add(-time.Hour).Unix())
		future := fmt.Sprint(now.Add(time.Hour).Unix())
		mk := func(i int, conn, queue, payload string) sqltest.FailedFixture {
			u := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
			return sqltest.FailedFixture{UUID: &u, Connection: conn, Queue: queue,
				Payload: strings.ReplaceAll(payload, "UUID", u), Exception: "RuntimeException: x in /a.php:1\nStack trace:\n#0 {main}",
				FailedAt: "2026-11-30 10:00:00"}
		}
		fx := []sqltest.FailedFixture{
			mk(1, "database", "default", payloadOf("UUID", "")),
			mk(2, "database", "emails", payloadOf("UUID", `,"retryUntil":`+future)),
			mk(3, "database", "default", payloadOf("UUID", `,"retryUntil":`+expired)),
			mk(4, "redis", "default", payloadOf("UUID", `,"id":"abc","attempts":2`)),
			mk(5, "database", "default", `{"uuid":"broken`),
			mk(6, "database", "default", payloadOf("UUID", `,"attempts":7`)),
		}
		sqltest.InsertFailed(t, store, fx...)

		_, err := svc.Retry(ctx, triage.RetryParams{})
		if !errors.Is(err, triage.ErrInvalidInput) {
			t.Errorf("retry with no selection: %v", err)
		}
		dry, err := svc.Retry(ctx, triage.RetryParams{All: true, DryRun: true})
		if err != nil || dry.Retried != 3 || len(dry.Skipped) != 3 || countJobs(t, store) != 0 {
			t.Fatalf("dry run: %+v, %v", dry, err)
		}
		codes := map[string]string{}
		for _, s := range dry.Skipped {
			codes[s.ID] = s.Code
		}
		if codes[*fx[2].UUID] != triage.SkipRetryUntil || codes[*fx[3].UUID] != triage.SkipNotDatabase || codes[*fx[4].UUID] != triage.SkipMalformed {
			t.Errorf("skip codes %v", codes)
		}

		// A canary: only the oldest match.
		res, err := svc.Retry(ctx, triage.RetryParams{All: true, Limit: 1})
		if err != nil || res.Retried != 1 || res.IDs[0] != *fx[0].UUID {
			t.Fatalf("limit 1: %+v, %v", res, err)
		}
		res, err = svc.Retry(ctx, triage.RetryParams{All: true, ToQueue: "rescue"})
		if err != nil || res.Retried != 2 || len(res.Skipped) != 3 {
			t.Fatalf("retry all: %+v, %v", res, err)
		}
		jobs := jobsByUUID(t, store)
		if jobs[*fx[0].UUID].Payload != fx[0].Payload || jobs[*fx[0].UUID].Queue != "default" {
			t.Errorf("payload bytes or queue changed: %+v", jobs[*fx[0].UUID])
		}
		if jobs[*fx[1].UUID].Queue != "rescue" || jobs[*fx[1].UUID].Payload != fx[1].Payload {
			t.Errorf("to-queue: %+v", jobs[*fx[1].UUID])
		}
		// attempts is reset to 0 where the payload has it; nothing else moves.
		want6 := strings.Replace(fx[5].Payload, `"attempts":7`, `"attempts":0`, 1)
		if jobs[*fx[5].UUID].Payload != want6 {
			t.Errorf("attempts reset:\n got %s\nwant %s", jobs[*fx[5].UUID].Payload, want6)
		}
		// The expired job stays failed until it gets a new deadline.
		res, err = svc.Retry(ctx, triage.RetryParams{Refs: []triage.Ref{{UUID: *fx[2].UUID}, {ID: 999999}}, RetryUntil: 30 * time.Minute})
		if err != nil || res.Retried != 1 || len(res.NotFound) != 1 {
			t.Fatalf("retry-until: %+v, %v", res, err)
		}
		want3 := strings.Replace(fx[2].Payload, expired, fmt.Sprint(now.Add(30*time.Minute).Unix()), 1)
		if got := jobsByUUID(t, store)[*fx[2].UUID].Payload; got != want3 {
			t.Errorf("retryUntil extension:\n got %s\nwant %s", got, want3)
		}
		left, _ := store.Count(ctx, triage.Filter{})
		if left != 2 { // the redis job and the malformed one
			t.Errorf("%d rows left in failed_jobs, want 2", left)
		}
	})
}

type queuedJob struct {
	Queue    string
	Payload  string
	Attempts int
}

func jobsByUUID(t *testing.T, s *sqlstore.Store) map[string]queuedJob {
	t.Helper()
	var rows []queuedJob
	if err := s.DB().Select(&rows, "SELECT queue, payload, attempts FROM jobs"); err != nil {
		t.Fatal(err)
	}
	out := map[string]queuedJob{}
	for _, r := range rows {
		var p struct{ UUID string }
		if err := json.Unmarshal([]byte(r.Payload), &p); err != nil {
			t.Fatal(err)
		}
		if _, dup := out[p.UUID]; dup {
			t.Fatalf("job %s is in jobs twice", p.UUID)
		}
		if r.Attempts != 0 {
			t.Errorf("job %s queued with attempts %d", p.UUID, r.Attempts)
		}
		out[p.UUID] = r
	}
	return out
}

func countJobs(t *testing.T, s *sqlstore.Store) int {
	t.Helper()
	var n int
	if err := s.DB().Get(&n, "SELECT COUNT(*) FROM jobs"); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestForgetAndPrune(t *testing.T) {
	forEachDriver(t, func(t *testing.T, driver string) {
		ctx := context.Background()
		svc, store := newService(t, driver)
		rows := loadRealRows(t, driver)
		insertReal(t, store, rows)
		res, err := svc.Forget(ctx, triage.ForgetParams{Query: triage.Query{Class: "ChargeCard"}, DryRun: true})
		if err != nil || res.Deleted != 3 {
			t.Fatalf("forget dry run: %+v, %v", res, err)
		}
		if _, err := svc.Forget(ctx, triage.ForgetParams{}); !errors.Is(err, triage.ErrInvalidInput) {
			t.Errorf("forget with no selection: %v", err)
		}
		res, err = svc.Forget(ctx, triage.ForgetParams{Query: triage.Query{Class: "ChargeCard"}})
		if err != nil || res.Deleted != 3 {
			t.Fatalf("forget by class: %+v, %v", res, err)
		}
		res, err = svc.Forget(ctx, triage.ForgetParams{Refs: []triage.Ref{{UUID: rows[3].UUID}, {UUID: "nope"}}})
		if err != nil || res.Deleted != 1 || len(res.NotFound) != 1 || res.NotFound[0] != "nope" {
			t.Fatalf("forget by id: %+v, %v", res, err)
		}
		if n, _ := store.Count(ctx, triage.Filter{}); n != int64(len(rows)-4) {
			t.Fatalf("%d rows left", n)
		}
		// The real rows failed within seconds of each other; prune relative
		// to a clock just after them.
		last, _ := time.ParseInLocation("2006-01-02 15:04:05", rows[len(rows)-1].FailedAt, time.UTC)
		svc.Now = func() time.Time { return last.Add(time.Hour) }
		if _, err := triage.PruneTotal(svc.Prune(ctx, 0, false, nil)); !errors.Is(err, triage.ErrInvalidInput) {
			t.Errorf("prune --hours 0: %v", err)
		}
		if _, err := triage.PruneTotal(svc.Prune(ctx, -3, false, nil)); !errors.Is(err, triage.ErrInvalidInput) {
			t.Errorf("prune --hours -3: %v", err)
		}
		n, err := triage.PruneTotal(svc.Prune(ctx, 2, false, nil))
		if err != nil || n != 0 {
			t.Fatalf("prune of nothing old: %d, %v", n, err)
		}
		n, err = triage.PruneTotal(svc.Prune(ctx, 0.5, false, nil))
		if err != nil || n != int64(len(rows)-4) {
			t.Fatalf("prune 30m: %d, %v", n, err)
		}
	})
}

// crashAfterPush commits the push to the other database and then fails, as a
// process killed between the push and the delete would.
type crashAfterPush struct {
	triage.QueueBackend
	crashes int
}

func (c *crashAfterPush) Push(ctx context.Context, moves []triage.Move, now time.Time) (triage.PushResult, error) {
	n, err := c.QueueBackend.Push(ctx, moves, now)
	if err == nil && c.crashes > 0 {
		c.crashes--
		return n, errors.New("killed after the push")
	}
	return n, err
}

// TestRetryToAnotherDatabase: jobs in one database, failed_jobs in another.
// A crash between the push and the delete must not queue a job twice.
func TestRetryToAnotherDatabase(t *testing.T) {
	forEachDriver(t, func(t *testing.T, driver string) {
		ctx := context.Background()
		svc, failedStore := newService(t, driver)
		jobsStore := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
		if _, err := failedStore.DB().Exec("DROP TABLE jobs"); err != nil {
			t.Fatal(err)
		}
		jobsOnly, err := sqlstore.Open(ctx, sqlstore.Config{Endpoint: jobsStore.Endpoint(), JobsOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer jobsOnly.Close()
		rows := loadRealRows(t, driver)
		insertReal(t, failedStore, rows)
		crasher := &crashAfterPush{QueueBackend: &sqlstore.JobsBackend{Store: jobsOnly}, crashes: 1}
		svc.Router = triage.NewRouter(nil, nil, crasher)
		if _, err := svc.Retry(ctx, triage.RetryParams{All: true}); err == nil {
			t.Fatal("the simulated crash did not surface")
		}
		if n, _ := failedStore.Count(ctx, triage.Filter{}); n != int64(len(rows)) {
			t.Fatalf("after the crash failed_jobs has %d rows, want all %d", n, len(rows))
		}
		res, err := svc.Retry(ctx, triage.RetryParams{All: true})
		if err != nil {
			t.Fatal(err)
		}
		queued := jobsByUUID(t, jobsStore) // fails on any duplicate
		if n, _ := failedStore.Count(ctx, triage.Filter{}); n != int64(len(rows)-res.Retried) || res.Retried != len(queued) {
			t.Fatalf("retried %d, queued %d, %d left in failed_jobs", res.Retried, len(queued), n)
		}
		for _, r := range rows {
			if _, ok := queued[r.UUID]; ok && queued[r.UUID].Payload != r.Payload {
				t.Errorf("%s: payload changed on the way", r.Expect.Key)
			}
		}
	})
}

// TestSignatureIsTheSameOnEveryPath: a message longer than the listing head,
// with multi-byte characters, gets one signature id whether it was computed
// from SQL heads (list, group), from a whole row (show, export) or in Go
// (SQLite).
func TestSignatureIsTheSameOnEveryPath(t *testing.T) {
	forEachDriver(t, func(t *testing.T, driver string) {
		ctx := context.Background()
		svc, store := newService(t, driver)
		long := strings.Repeat("Платіж не пройшов для замовлення 1042; ", 80)
		u := "00000000-0000-4000-8000-000000000001"
		sqltest.InsertFailed(t, store, sqltest.FailedFixture{UUID: &u, Connection: "database", Queue: "default",
			Payload:   payloadOf(u, ""),
			Exception: "LogicException: inner in /a.php:1\nStack trace:\n#0 {main}\n\nNext RuntimeException: " + long + " in /b.php:2\nStack trace:\n#0 {main}",
			FailedAt:  "2026-11-30 10:00:00"})
		page, err := svc.List(ctx, triage.ListParams{Limit: 1})
		if err != nil || len(page.Jobs) != 1 {
			t.Fatal(err)
		}
		sigs, err := svc.Group(ctx, triage.GroupParams{})
		if err != nil {
			t.Fatal(err)
		}
		d, err := svc.Show(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		var exported string
		if err := svc.Each(ctx, triage.Query{}, true, func(j triage.Job, _ *triage.FailedRow) error {
			exported = j.Signature
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if s := page.Jobs[0].Signature; s != sigs[0].ID || s != d.Signature || s != exported || page.Jobs[0].ExceptionClass != "RuntimeException" {
			t.Errorf("signatures differ: list %s group %s show %s export %s", s, sigs[0].ID, d.Signature, exported)
		}
	})
}

// conflictOnce makes the first batch a deadlock victim, as InnoDB or
// PostgreSQL may: the batch runs again, a sweep pass follows, and nothing is
// counted or reported twice.
type conflictOnce struct {
	triage.Store
	done bool
}

func (c *conflictOnce) TakeBatch(ctx context.Context, p triage.BatchParams) (triage.Batch, error) {
	b, err := c.Store.TakeBatch(ctx, p)
	if err != nil || c.done || !p.Retry {
		return b, err
	}
	c.done = true
	return conflictBatch{b}, nil
}

// conflictBatch: the service sees the rows, then the transaction is
// rolled back.
type conflictBatch struct{ triage.Batch }

func (b conflictBatch) Commit(context.Context) error {
	b.Rollback()
	return fmt.Errorf("deadlock victim: %w", triage.ErrConflict)
}

func TestRetryAfterAConflictCountsOnce(t *testing.T) {
	forEachDriver(t, func(t *testing.T, driver string) {
		ctx := context.Background()
		svc, store := newService(t, driver)
		rows := loadRealRows(t, driver)
		insertReal(t, store, rows)
		svc.Store = &conflictOnce{Store: store}
		res, err := svc.Retry(ctx, triage.RetryParams{All: true})
		if err != nil {
			t.Fatal(err)
		}
		queued := jobsByUUID(t, store)
		if res.Retried != len(rows)-1 || len(queued) != res.Retried || len(res.Skipped) != 1 || len(res.IDs) != res.Retried {
			t.Errorf("after a conflict: retried %d (%d ids), queued %d, skipped %d", res.Retried, len(res.IDs), len(queued), len(res.Skipped))
		}
	})
}

// Run batch by batch, ids and skips leave the service batch by batch — each
// exactly once, even when a batch is a deadlock victim and runs again and a
// sweep pass meets the skipped rows again — and the result holds none: a
// million-job retry keeps no million ids.
func TestBulkActionsHandIDsOverPerBatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := triagetest.New(triage.IDModeUUID, time.UTC)
	svc := &triage.Service{Store: store, Now: fixedNow, Location: time.UTC}
	const n = 2500 // two batches
	var fx []triagetest.Row
	for i := 1; i <= n; i++ {
		u := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		q, conn := "default", "database"
		if i%2 == 0 {
			q = "forget-me"
		} else if i%5 == 0 {
			conn = "redis" // skipped by retry
		}
		fx = append(fx, triagetest.Row{UUID: u, Connection: conn, Queue: q, Payload: payloadOf(u, ""),
			Exception: "RuntimeException: x in /a.php:1", FailedAt: "2026-11-30 10:00:00"})
	}
	store.Add(fx...)
	check := func(what string, batches [][]string, resIDs []string, want int) {
		t.Helper()
		seen := map[string]bool{}
		for _, b := range batches {
			for _, id := range b {
				if seen[id] {
					t.Errorf("%s: id %s handed over twice", what, id)
				}
				seen[id] = true
			}
		}
		if len(seen) != want || len(resIDs) != 0 || len(batches) < 1 {
			t.Errorf("%s: %d ids in %d batches (want %d), %d left in the result", what, len(seen), len(batches), want, len(resIDs))
		}
	}
	var forgot [][]string
	frun := svc.StartForget(ctx, triage.ForgetParams{Query: triage.Query{Filter: triage.Filter{Queues: []string{"forget-me"}}}})
	for frun.Next(ctx) {
		forgot = append(forgot, frun.Batch().IDs)
	}
	fres, err := frun.Result(), frun.Err()
	if err != nil {
		t.Fatal(err)
	}
	check("forget", forgot, fres.IDs, n/2)
	svc.Store = &conflictOnce{Store: store}
	var retried, skippedIDs [][]string
	rrun := svc.StartRetry(ctx, triage.RetryParams{All: true})
	defer rrun.Close()
	for rrun.Next(ctx) {
		b := rrun.Batch()
		retried = append(retried, b.IDs)
		var sk []string
		for _, s := range b.Skips {
			sk = append(sk, s.ID)
		}
		skippedIDs = append(skippedIDs, sk)
	}
	rres, err := rrun.Result(), rrun.Err()
	if err != nil {
		t.Fatal(err)
	}
	check("retry", retried, rres.IDs, n/2-n/10)
	check("skips", skippedIDs, nil, n/10)
	if len(rres.Skipped) != 0 || rres.Retried != n/2-n/10 || len(store.Jobs()) != n/2-n/10 {
		t.Errorf("retry: %d batches, retried %d, %d skips kept, %d in jobs", len(retried), rres.Retried, len(rres.Skipped), len(store.Jobs()))
	}
}

// TestRetryAndForgetBySignature: a retry or forget that selects by
// signature computes each row's signature (the others skip it) and takes
// exactly that signature's rows; by class it takes the class's rows.
func TestRetryAndForgetBySignature(t *testing.T) {
	forEachDriver(t, func(t *testing.T, driver string) {
		ctx := context.Background()
		svc, store := newService(t, driver)
		insertReal(t, store, loadRealRows(t, driver))
		sigs, err := svc.Group(ctx, triage.GroupParams{})
		if err != nil {
			t.Fatal(err)
		}
		top := sigs[0] // three ChargeCard failures
		retry, err := svc.Retry(ctx, triage.RetryParams{Query: triage.Query{Signature: top.ID}, DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		if retry.Retried+len(retry.Skipped) != top.Count {
			t.Errorf("retry by signature %s took %d (+%d skipped) rows, want its %d", top.ID, retry.Retried, len(retry.Skipped), top.Count)
		}
		last := sigs[len(sigs)-1]
		forget, err := svc.Forget(ctx, triage.ForgetParams{Query: triage.Query{Signature: last.ID}, DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		if forget.Deleted != last.Count {
			t.Errorf("forget by signature %s took %d rows, want its %d", last.ID, forget.Deleted, last.Count)
		}
		all, err := svc.Forget(ctx, triage.ForgetParams{Query: triage.Query{Class: "chargecard"}, DryRun: true})
		if err != nil || all.Deleted != top.Count {
			t.Errorf("forget by class took %d rows, want %d: %v", all.Deleted, top.Count, err)
		}
	})
}
