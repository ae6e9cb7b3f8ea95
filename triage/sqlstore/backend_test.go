package sqlstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/backendtest"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

// openJobsBackend creates an isolated database with Laravel's schema and
// opens its jobs side as a JobsBackend.
func openJobsBackend(t *testing.T, driver string, ledger bool) *sqlstore.JobsBackend {
	t.Helper()
	ep := sqltest.LaravelEndpoint(t, driver, sqlstore.SchemaLaravel8)
	ctx := context.Background()
	s, err := sqlstore.Open(ctx, sqlstore.Config{Endpoint: ep, JobsOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	b := &sqlstore.JobsBackend{Store: s, Ledger: ledger}
	t.Cleanup(func() { b.Close() })
	return b
}

type jobsQueue struct{ s *sqlstore.Store }

func (q jobsQueue) Queued(t *testing.T, queue string) [][]byte {
	t.Helper()
	db := q.s.DB()
	var rows []string
	if err := db.Select(&rows, db.Rebind("SELECT payload FROM jobs WHERE queue = ? ORDER BY id"), queue); err != nil {
		t.Fatal(err)
	}
	out := make([][]byte, len(rows))
	for i, r := range rows {
		out[i] = []byte(r)
	}
	return out
}

// Consume deletes the oldest row of the queue, as a worker's pop and
// successful delete leave it.
func (q jobsQueue) Consume(t *testing.T, queue string) {
	t.Helper()
	db := q.s.DB()
	var id int64
	if err := db.Get(&id, db.Rebind("SELECT MIN(id) FROM jobs WHERE queue = ?"), queue); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(db.Rebind("DELETE FROM jobs WHERE id = ?"), id); err != nil {
		t.Fatal(err)
	}
}

// Reserve marks the oldest unreserved row of the queue reserved, as
// DatabaseQueue's pop does.
func (q jobsQueue) Reserve(t *testing.T, queue string) {
	t.Helper()
	db := q.s.DB()
	var id int64
	if err := db.Get(&id, db.Rebind("SELECT MIN(id) FROM jobs WHERE queue = ? AND reserved_at IS NULL"), queue); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(db.Rebind("UPDATE jobs SET reserved_at = ?, attempts = attempts + 1 WHERE id = ?"), time.Now().Unix(), id); err != nil {
		t.Fatal(err)
	}
}

func TestJobsBackendConformance(t *testing.T) {
	for _, driver := range sqltest.Drivers() {
		for _, ledger := range []bool{false, true} {
			name := driver + "/without-ledger"
			if ledger {
				name = driver + "/ledger"
			}
			t.Run(name, func(t *testing.T) {
				backendtest.Run(t, backendtest.Harness{
					Open: func(t *testing.T) (triage.QueueBackend, backendtest.Queue) {
						b := openJobsBackend(t, driver, ledger)
						return b, jobsQueue{b.Store}
					},
					RemembersConsumed: ledger,
				})
			})
		}
	}
}

func ledgerExists(t *testing.T, s *sqlstore.Store) bool {
	t.Helper()
	var n int
	err := s.DB().Get(&n, "SELECT COUNT(*) FROM "+sqlstore.LedgerTable)
	return err == nil
}

// TestJobsBackendLedgerIsOptIn: without the opt-in the application's schema
// is left alone; with it the table appears on the first push.
func TestJobsBackendLedgerIsOptIn(t *testing.T) {
	for _, driver := range sqltest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			at := time.Now()
			u := backendtest.NewUUID()
			m := []triage.Move{{UUID: u, Queue: "default", Payload: backendtest.Payload(u, at, 0)}}
			plain := openJobsBackend(t, driver, false)
			if _, err := plain.Push(context.Background(), m, at); err != nil {
				t.Fatal(err)
			}
			if ledgerExists(t, plain.Store) {
				t.Fatalf("%s exists without the opt-in", sqlstore.LedgerTable)
			}
			if strings.Contains(plain.Describe(), sqlstore.LedgerTable) {
				t.Errorf("Describe mentions a ledger: %s", plain.Describe())
			}
			rec := openJobsBackend(t, driver, true)
			if ledgerExists(t, rec.Store) {
				t.Fatalf("%s exists before the first push", sqlstore.LedgerTable)
			}
			if _, err := rec.Push(context.Background(), m, at); err != nil {
				t.Fatal(err)
			}
			if !ledgerExists(t, rec.Store) {
				t.Fatalf("%s missing after a push with the ledger", sqlstore.LedgerTable)
			}
			if d := rec.Describe(); !strings.Contains(d, sqlstore.LedgerTable) || strings.Contains(d, "password") {
				t.Errorf("Describe = %q", d)
			}
		})
	}
}

// refuseInserts makes the jobs table refuse every insert, per driver.
var refuseInserts = map[string][]string{
	"sqlite": {`CREATE TRIGGER jobs_refuse BEFORE INSERT ON jobs BEGIN SELECT RAISE(ABORT, 'refused'); END`},
	"postgres": {`CREATE FUNCTION jobs_refuse() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$ LANGUAGE plpgsql`,
		`CREATE TRIGGER jobs_refuse BEFORE INSERT ON jobs FOR EACH ROW EXECUTE FUNCTION jobs_refuse()`},
	"mysql": {"CREATE TRIGGER jobs_refuse BEFORE INSERT ON jobs FOR EACH ROW SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'refused'"},
}

// TestJobsBackendLedgerSharesTheTransaction: when the jobs insert fails,
// no uuid is recorded, so the re-run pushes it.
func TestJobsBackendLedgerSharesTheTransaction(t *testing.T) {
	for _, driver := range sqltest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			b := openJobsBackend(t, driver, true)
			ctx := context.Background()
			at := time.Now()
			u := backendtest.NewUUID()
			m := []triage.Move{{UUID: u, Queue: "default", Payload: backendtest.Payload(u, at, 0)}}
			// A jobs table that refuses inserts, after the ledger rows are
			// written in the same transaction.
			db := b.Store.DB()
			for _, q := range refuseInserts[driver] {
				if _, err := db.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := b.Push(ctx, m, at); err == nil || !strings.Contains(err.Error(), "refused") {
				t.Fatalf("Push into a refusing jobs table = %v", err)
			}
			var n int
			if err := db.Get(&n, "SELECT COUNT(*) FROM "+sqlstore.LedgerTable); err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Fatalf("the failed push recorded %d uuids", n)
			}
			if _, err := db.Exec("DROP TRIGGER jobs_refuse" + map[string]string{"postgres": " ON jobs"}[driver]); err != nil {
				t.Fatal(err)
			}
			res, err := b.Push(ctx, m, at)
			if err != nil || res.Pushed != 1 {
				t.Fatalf("re-run = %+v, %v", res, err)
			}
		})
	}
}

// TestJobsBackendLedgerAdoptsQueuedJobs: a job queued by a run without the
// ledger is recorded by the first run with it, so that it is still known
// after a worker ran it.
func TestJobsBackendLedgerAdoptsQueuedJobs(t *testing.T) {
	b := openJobsBackend(t, "sqlite", false)
	ctx := context.Background()
	at := time.Now()
	u := backendtest.NewUUID()
	m := []triage.Move{{UUID: u, Queue: "default", Payload: backendtest.Payload(u, at, 0)}}
	if _, err := b.Push(ctx, m, at); err != nil {
		t.Fatal(err)
	}
	rec := &sqlstore.JobsBackend{Store: b.Store, Ledger: true}
	if res, err := rec.Push(ctx, m, at); err != nil || res.Already != 1 {
		t.Fatalf("push with the ledger = %+v, %v", res, err)
	}
	jobsQueue{b.Store}.Consume(t, "default")
	if res, err := rec.Push(ctx, m, at); err != nil || res.Already != 1 || res.Pushed != 0 {
		t.Fatalf("push after the job ran = %+v, %v", res, err)
	}
}

// TestJobsBackendConcurrentRuns: two runs pushing the same jobs at once
// queue each exactly once; a run that lost the race on the ledger reports
// a conflict, and its re-run finds everything pushed.
func TestJobsBackendConcurrentRuns(t *testing.T) {
	for _, driver := range sqltest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			b := openJobsBackend(t, driver, true)
			other := &sqlstore.JobsBackend{Store: b.Store, Ledger: true}
			at := time.Now()
			var ms []triage.Move
			for range concurrentJobs {
				u := backendtest.NewUUID()
				ms = append(ms, triage.Move{UUID: u, Queue: "default", Payload: backendtest.Payload(u, at, 0)})
			}
			errs := make(chan error, 2)
			for _, r := range []*sqlstore.JobsBackend{b, other} {
				go func() {
					_, err := r.Push(context.Background(), ms, at)
					errs <- err
				}()
			}
			for range 2 {
				if err := <-errs; err != nil && !errors.Is(err, triage.ErrConflict) {
					t.Fatalf("concurrent Push: %v", err)
				}
			}
			res, err := b.Push(context.Background(), ms, at)
			if err != nil || res.Already != len(ms) {
				t.Fatalf("re-run = %+v, %v", res, err)
			}
			if n := len(jobsQueue{b.Store}.Queued(t, "default")); n != len(ms) {
				t.Fatalf("%d jobs queued, want %d", n, len(ms))
			}
		})
	}
}

// concurrentJobs is the size of each concurrent run's push.
const concurrentJobs = 300
