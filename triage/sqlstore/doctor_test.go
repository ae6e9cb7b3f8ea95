package sqlstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

// TestDoctorQueries runs doctor's catalog queries on every dialect:
// Laravel's failed_jobs lacks the failed_at index and its jobs table has
// jobs_queue_index; Laravel 11+'s (connection, queue, failed_at) is named
// and does not count for failed_at; the advice is runnable and stops once
// it ran; an index whose second column is queue does not count for queue; server facts and
// row counts; a cancelled inspection is an error, not facts.
func TestDoctorQueries(t *testing.T) {
	for _, driver := range sqltest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)

			f := inspect(t, s)
			if f.Server == "" || f.Schema != s.Schema() || f.Clock == "" || f.ClockSetting == "" || f.ClockAdvice == "" {
				t.Errorf("facts %+v", f)
			}
			if f.RowsErr != nil || f.IndexesErr != nil || (driver == "sqlite" && (!f.RowsKnown || !f.RowsExact || f.Rows != 0)) {
				t.Errorf("rows %d known=%v exact=%v (%v), indexes %v", f.Rows, f.RowsKnown, f.RowsExact, f.RowsErr, f.IndexesErr)
			}
			want := map[string]string{
				"sqlite":   `CREATE INDEX "failed_jobs_failed_at_index" ON "failed_jobs" ("failed_at");`,
				"postgres": `CREATE INDEX CONCURRENTLY "failed_jobs_failed_at_index" ON "failed_jobs" ("failed_at");`,
				"mysql":    "ALTER TABLE `failed_jobs` ADD INDEX `failed_jobs_failed_at_index` (`failed_at`), ALGORITHM=INPLACE, LOCK=NONE;",
			}[driver]
			if advice := f.Indexes; len(advice) != 1 || advice[0].Table != "failed_jobs" || advice[0].Columns[0] != "failed_at" || advice[0].SQL != want {
				t.Fatalf("advice %+v: want failed_jobs(failed_at) only, by %s", advice, want)
			}
			// Laravel 11+'s composite index (connection, queue, failed_at)
			// is named, and does not count as the failed_at index.
			composite := []string{"CREATE INDEX failed_jobs_connection_queue_failed_at_index ON failed_jobs (connection, queue, failed_at)"}
			if driver == "mysql" {
				composite = []string{"ALTER TABLE failed_jobs MODIFY connection varchar(255) NOT NULL, MODIFY queue varchar(255) NOT NULL", composite[0]}
			}
			for _, stmt := range composite {
				if _, err := s.DB().ExecContext(ctx, stmt); err != nil {
					t.Fatal(err)
				}
			}
			f = inspect(t, s)
			named := "failed_jobs_connection_queue_failed_at_index (connection, queue, failed_at) holds it, but serves failed_at only after equality on the columns before it, not across their values; php artisan queue:prune-failed"
			if len(f.Indexes) != 1 || f.Indexes[0].Columns[0] != "failed_at" || !strings.HasPrefix(f.Indexes[0].Why, named) || f.Indexes[0].SQL != want {
				t.Fatalf("with the composite index: %+v, %v", f.Indexes, f.IndexesErr)
			}
			// The advice is runnable as given, and then no longer given.
			if _, err := s.DB().ExecContext(ctx, strings.TrimSuffix(want, ";")); err != nil {
				t.Fatalf("running the advised statement: %v", err)
			}
			sqltest.InsertFailed(t, s, sqltest.FailedFixture{UUID: ptr("11111111-1111-4111-8111-111111111111"), Connection: "database",
				Queue: "default", Payload: "{}", Exception: "E", FailedAt: "2026-11-30 10:00:00"})
			f = inspect(t, s)
			if len(f.Indexes) != 0 || f.IndexesErr != nil {
				t.Errorf("after adding the index: %+v, %v", f.Indexes, f.IndexesErr)
			}
			if driver == "sqlite" && (!f.RowsExact || !f.RowsKnown || f.Rows != 1) {
				t.Errorf("sqlite row count %d exact=%v known=%v, want exactly 1", f.Rows, f.RowsExact, f.RowsKnown)
			}
			if driver != "sqlite" && f.RowsExact {
				t.Errorf("%s row count claims to be exact", driver)
			}

			drop := "DROP INDEX jobs_queue_index"
			if driver == "mysql" {
				drop += " ON jobs"
			}
			for _, stmt := range []string{drop, "CREATE INDEX two_cols ON jobs (attempts, queue)"} {
				if _, err := s.DB().ExecContext(ctx, stmt); err != nil {
					t.Fatal(err)
				}
			}
			if f = inspect(t, s); len(f.Indexes) != 1 || f.Indexes[0].Table != "jobs" || f.Indexes[0].Columns[0] != "queue" {
				t.Errorf("jobs without an index led by queue: advice %+v", f.Indexes)
			}

			cancelled, cancel := context.WithCancel(ctx)
			cancel()
			if _, err := s.Inspect(cancelled); !errors.Is(err, context.Canceled) {
				t.Errorf("inspecting with a cancelled context: %v", err)
			}
		})
	}
}

// TestCreateIndexSQLNames covers prefixes, schemas and refused names
// without a server.
func TestCreateIndexSQLNames(t *testing.T) {
	s := sqltest.OpenLaravel(t, "sqlite", sqlstore.SchemaLaravel8, time.UTC)
	for _, tc := range []struct {
		table, column, want string
	}{
		{"tenant_failed_jobs", "failed_at", `CREATE INDEX "tenant_failed_jobs_failed_at_index" ON "tenant_failed_jobs" ("failed_at");`},
		{"aux.failed_jobs", "failed_at", `CREATE INDEX "aux"."aux_failed_jobs_failed_at_index" ON "failed_jobs" ("failed_at");`},
	} {
		got, err := s.CreateIndexSQL(tc.table, tc.column)
		if err != nil || got != tc.want {
			t.Errorf("CreateIndexSQL(%q) = %q, %v; want %q", tc.table, got, err, tc.want)
		}
	}
	for _, bad := range [][2]string{{"x; DROP TABLE y", "a"}, {"t", "a b"}} {
		if got, err := s.CreateIndexSQL(bad[0], bad[1]); err == nil {
			t.Errorf("CreateIndexSQL(%q, %q) = %q, want an error", bad[0], bad[1], got)
		}
	}
}

func inspect(t *testing.T, s *sqlstore.Store) *triage.DatabaseFacts {
	t.Helper()
	f, err := s.Inspect(context.Background())
	if err != nil || f.Database == nil || f.File != "" {
		t.Fatalf("inspect: %+v, %v", f, err)
	}
	return f.Database
}
