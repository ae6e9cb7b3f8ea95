package sqlstore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

// failedDDL is a failed_jobs table with every column Laravel's has, with
// the given id column definition and payload and failed_at types.
func failedDDL(driver, id, payload, failedAt string) string {
	q := `"`
	if driver == "mysql" {
		q = "`"
	}
	return "CREATE TABLE " + q + "failed_jobs" + q + " (" + id + ", uuid varchar(255), connection text NOT NULL, queue text NOT NULL, " +
		"payload " + payload + " NOT NULL, exception text NOT NULL, failed_at " + failedAt + " NOT NULL)"
}

// TestSchemaMessages: a table jobtriage cannot use is refused at Open with a
// one-line triage.ErrSchema error naming the table, the column and what was
// expected, never with a raw SQL error from a later query.
func TestSchemaMessages(t *testing.T) {
	type tc struct {
		name  string
		ddl   []string
		words []string
	}
	cases := map[string][]tc{
		"postgres": {
			{"uuid primary key", []string{failedDDL("postgres", "id uuid PRIMARY KEY", "text", "timestamp(0)")},
				[]string{"table failed_jobs", "column id is uuid, want an integer column"}},
			{"jsonb payload", []string{failedDDL("postgres", "id bigserial PRIMARY KEY", "jsonb", "timestamp(0)")},
				[]string{"table failed_jobs", "column payload is jsonb, want a text column", "byte for byte"}},
			{"integer failed_at", []string{failedDDL("postgres", "id bigserial PRIMARY KEY", "text", "integer")},
				[]string{"column failed_at is integer, want a timestamp or datetime column"}},
		},
		"mysql": {
			{"uuid primary key", []string{failedDDL("mysql", "id char(36) PRIMARY KEY", "longtext", "timestamp")},
				[]string{"table failed_jobs", "column id is char(36), want an integer column"}},
			{"binary payload", []string{failedDDL("mysql", "id bigint unsigned auto_increment PRIMARY KEY", "longblob", "timestamp")},
				[]string{"column payload is longblob, want a text column"}},
			{"integer failed_at", []string{failedDDL("mysql", "id bigint unsigned auto_increment PRIMARY KEY", "longtext", "int")},
				[]string{"column failed_at is int"}},
		},
		"sqlite": {
			{"uuid primary key", []string{failedDDL("sqlite", "id varchar PRIMARY KEY NOT NULL", "text", "datetime")},
				[]string{"table failed_jobs", "column id is varchar, want an integer column"}},
		},
	}
	for _, driver := range sqltest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			all := append(cases[driver], tc{"missing column", []string{
				strings.Replace(failedDDL(driver, map[string]string{"postgres": "id bigserial PRIMARY KEY", "mysql": "id bigint unsigned auto_increment PRIMARY KEY", "sqlite": "id integer PRIMARY KEY AUTOINCREMENT"}[driver], "text", "timestamp"),
					", exception text NOT NULL", "", 1)},
				[]string{"table failed_jobs", "lacks the column(s) exception that Laravel's failed_jobs table has"}})
			for _, c := range all {
				t.Run(c.name, func(t *testing.T) {
					ep := sqltest.NewEndpoint(t, driver)
					ctx := context.Background()
					raw, err := sqlstore.OpenRaw(ctx, ep)
					if err != nil {
						t.Fatal(err)
					}
					for _, q := range c.ddl {
						if _, err := raw.Exec(q); err != nil {
							raw.Close()
							t.Fatalf("%s: %v", q, err)
						}
					}
					raw.Close()
					_, err = sqlstore.Open(ctx, sqlstore.Config{Endpoint: ep})
					assertSchemaError(t, err, c.words...)
				})
			}
		})
	}
}

func assertSchemaError(t *testing.T, err error, words ...string) {
	t.Helper()
	if !errors.Is(err, triage.ErrSchema) {
		t.Fatalf("error %v, want ErrSchema", err)
	}
	msg := err.Error()
	if strings.ContainsAny(msg, "\r\n") {
		t.Errorf("message is not one line: %q", msg)
	}
	for _, w := range words {
		if !strings.Contains(msg, w) {
			t.Errorf("message %q lacks %q", msg, w)
		}
	}
	for _, raw := range []string{"pq:", "Error 1", "SQL logic error", "syntax"} {
		if strings.Contains(msg, raw) {
			t.Errorf("message %q carries a raw SQL error", msg)
		}
	}
}

// TestJobsTableShape: a jobs table without attempts does not stop Open (the
// failed jobs are still there to triage), but every command that needs the
// jobs table says what is wrong with it; opened as the jobs side of a split
// setup, it is refused at once.
func TestJobsTableShape(t *testing.T) {
	for _, driver := range sqltest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
			if _, err := s.DB().Exec("ALTER TABLE jobs DROP COLUMN attempts"); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			re, err := sqlstore.Open(ctx, sqlstore.Config{Endpoint: s.Endpoint()})
			if err != nil {
				t.Fatal(err)
			}
			defer re.Close()
			if re.Schema().HasJobs {
				t.Error("HasJobs with a jobs table jobtriage cannot write")
			}
			_, err = re.QueueStats(ctx, triage.QueueStatsParams{Now: time.Now()})
			assertSchemaError(t, err, "table jobs", "lacks the column(s) attempts that Laravel's jobs table has")
			_, err = sqlstore.Open(ctx, sqlstore.Config{Endpoint: s.Endpoint(), JobsOnly: true})
			assertSchemaError(t, err, "table jobs", "attempts")
		})
	}
}

// TestSQLiteNotADatabase: the driver's own words survive scrubbing.
func TestSQLiteNotADatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "database.sqlite")
	if err := os.WriteFile(path, []byte(strings.Repeat("this is not a database file ", 200)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := sqlstore.Open(context.Background(), sqlstore.Config{Endpoint: sqlstore.Endpoint{Driver: "sqlite", Path: path, Password: "e"}})
	if err == nil || !strings.Contains(err.Error(), "file is not a database") {
		t.Errorf("garbage file: %v", err)
	}
}

// TestNativeUUIDColumn: a uuid column of PostgreSQL's or MariaDB's own uuid
// type (an app's own migration) is accepted and found by uuid.
func TestNativeUUIDColumn(t *testing.T) {
	for _, driver := range []string{"postgres", "mysql"} {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			ep := sqltest.NewEndpoint(t, driver)
			ctx := context.Background()
			raw, err := sqlstore.OpenRaw(ctx, ep)
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			id := map[string]string{"postgres": "id bigserial PRIMARY KEY", "mysql": "id bigint unsigned auto_increment PRIMARY KEY"}[driver]
			ddl := strings.Replace(failedDDL(driver, id, "text", "timestamp"), "uuid varchar(255)", "uuid uuid", 1)
			if _, err := raw.Exec(ddl); err != nil {
				if driver == "mysql" {
					t.Skipf("no native uuid type on this server (MySQL, or MariaDB before 10.7): %v", err)
				}
				t.Fatal(err)
			}
			s, err := sqlstore.Open(ctx, sqlstore.Config{Endpoint: ep})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if s.Schema().IDMode != triage.IDModeUUID {
				t.Fatalf("schema %+v", s.Schema())
			}
			fx := fixture(7, "default", `App\Jobs\A`, "2026-11-30 10:00:00")
			sqltest.InsertFailed(t, s, fx)
			got, err := s.GetFailed(ctx, triage.Ref{UUID: *fx.UUID})
			if err != nil || got.UUID != *fx.UUID {
				t.Errorf("GetFailed by uuid = %+v, %v", got, err)
			}
		})
	}
}
