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

// TestDoctorQueries runs doctor's catalog queries on every dialect: the
// indexes Laravel's migrations create, the advice for failed_at (and that
// it stops once the advised statement ran), server facts and row counts,
// and that a cancelled inspection is an error, not facts.
func TestDoctorQueries(t *testing.T) {
	for _, driver := range sqltest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)

			idx, err := s.Indexes(ctx, "failed_jobs")
			if err != nil {
				t.Fatal(err)
			}
			uuid := findIndex(idx, "uuid")
			if uuid == nil || !uuid.Unique || uuid.Primary || len(uuid.Columns) != 1 {
				t.Errorf("failed_jobs indexes %+v: want a unique index on uuid", idx)
			}
			if findIndex(idx, "failed_at") != nil {
				t.Errorf("Laravel's failed_jobs has no index on failed_at: %+v", idx)
			}
			if driver != "sqlite" && findIndex(idx, "id") == nil {
				t.Errorf("failed_jobs indexes %+v: want the primary key on id", idx)
			}
			jobs, err := s.Indexes(ctx, "jobs")
			if err != nil {
				t.Fatal(err)
			}
			if ix := findIndex(jobs, "queue"); ix == nil || ix.Unique {
				t.Errorf("jobs indexes %+v: want jobs_queue_index", jobs)
			}
			if none, err := s.Indexes(ctx, "no_such_table"); err != nil || len(none) != 0 {
				t.Errorf("a missing table: %+v, %v", none, err)
			}

			f := inspect(t, s)
			if f.Server == "" || f.Schema != s.Schema() || f.Clock == "" || f.ClockSetting == "" || f.ClockAdvice == "" {
				t.Errorf("facts %+v", f)
			}
			if f.RowsErr != nil || f.IndexesErr != nil || (driver == "sqlite" && (!f.RowsKnown || !f.RowsExact || f.Rows != 0)) {
				t.Errorf("rows %d known=%v exact=%v (%v), indexes %v", f.Rows, f.RowsKnown, f.RowsExact, f.RowsErr, f.IndexesErr)
			}
			advice := f.Indexes
			if len(advice) != 1 || advice[0].Table != "failed_jobs" || advice[0].Columns[0] != "failed_at" {
				t.Fatalf("advice %+v: want failed_jobs(failed_at) only", advice)
			}
			want := map[string]string{
				"sqlite":   `CREATE INDEX "failed_jobs_failed_at_index" ON "failed_jobs" ("failed_at");`,
				"postgres": `CREATE INDEX CONCURRENTLY "failed_jobs_failed_at_index" ON "failed_jobs" ("failed_at");`,
				"mysql":    "ALTER TABLE `failed_jobs` ADD INDEX `failed_jobs_failed_at_index` (`failed_at`), ALGORITHM=INPLACE, LOCK=NONE;",
			}[driver]
			if advice[0].SQL != want {
				t.Errorf("SQL %q, want %q", advice[0].SQL, want)
			}
			// The advice is runnable as given, and then no longer given.
			if _, err := s.DB().ExecContext(ctx, strings.TrimSuffix(advice[0].SQL, ";")); err != nil {
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
			if _, err := s.DB().ExecContext(ctx, "CREATE INDEX two_cols ON jobs (attempts, queue)"); err != nil {
				t.Fatal(err)
			}
			jobs, _ = s.Indexes(ctx, "jobs")
			for _, ix := range jobs {
				if ix.Name == "two_cols" && (len(ix.Columns) != 2 || ix.Columns[0] != "attempts" || ix.Leads("queue")) {
					t.Errorf("two-column index read as %+v", ix)
				}
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
	if err != nil || f.Database == nil || f.File != nil {
		t.Fatalf("inspect: %+v, %v", f, err)
	}
	return f.Database
}

func findIndex(idx []sqlstore.Index, leading string) *sqlstore.Index {
	for i := range idx {
		if idx[i].Leads(leading) {
			return &idx[i]
		}
	}
	return nil
}
