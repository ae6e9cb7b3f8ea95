package sqlstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

// failedRows yields n failed_jobs rows, then stops.
func failedRows(n int) func() ([]any, bool, error) {
	i := 0
	return func() ([]any, bool, error) {
		if i == n {
			return nil, false, nil
		}
		i++
		uuid := fmt.Sprintf("%08d-5eed-4eed-8eed-000000000000", i)
		return []any{uuid, "database", "default", `{"uuid":"` + uuid + `","displayName":"App\\Jobs\\X"}`, "RuntimeException: x", "2026-11-30 10:00:00"}, true, nil
	}
}

var failedCols = []string{"uuid", "connection", "queue", "payload", "exception", "failed_at"}

// TestSeeder: the bulk writer the demo and the benchmarks seed through
// writes what next yields (across multi-row statements), at most max rows
// a transaction, nothing when next fails, and records its parameters.
func TestSeeder(t *testing.T) {
	for _, driver := range sqltest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			ctx := context.Background()
			s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
			sd := s.Seeder()
			defer sd.Close()
			if sd.Driver() != driver {
				t.Errorf("Driver() = %q", sd.Driver())
			}
			count := func() int64 {
				t.Helper()
				n, err := s.Count(ctx, triage.Filter{})
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
			if _, _, ok := sd.SeededWith(ctx); ok {
				t.Error("SeededWith is ok before RecordSeed")
			}
			next := failedRows(450)
			if n, err := sd.Insert(ctx, "failed_jobs", failedCols, 300, next); err != nil || n != 300 || count() != 300 {
				t.Fatalf("Insert(max 300) = %d, %v; %d rows", n, err, count())
			}
			if n, err := sd.Insert(ctx, "failed_jobs", failedCols, 300, next); err != nil || n != 150 || count() != 450 {
				t.Fatalf("Insert(rest) = %d, %v; %d rows", n, err, count())
			}
			if n, err := sd.Insert(ctx, "failed_jobs", failedCols, 300, next); err != nil || n != 0 {
				t.Fatalf("Insert(nothing left) = %d, %v", n, err)
			}
			boom := errors.New("generator failed")
			more := failedRows(1000)
			calls := 0
			failing := func() ([]any, bool, error) {
				if calls++; calls == 250 {
					return nil, false, boom
				}
				v, ok, err := more()
				v[0] = fmt.Sprintf("%08d-fa11-4a11-8a11-000000000000", calls)
				return v, ok, err
			}
			if _, err := sd.Insert(ctx, "failed_jobs", failedCols, 1000, failing); !errors.Is(err, boom) || count() != 450 {
				t.Errorf("a failing generator: %v, %d rows (want the transaction rolled back)", err, count())
			}
			if _, err := sd.Insert(ctx, "failed_jobs; DROP TABLE jobs", failedCols, 1, failedRows(1)); err == nil {
				t.Error("an invalid table name was accepted")
			}
			if err := sd.RecordSeed(ctx, "rows=450"); err != nil {
				t.Fatal(err)
			}
			if rows, params, ok := sd.SeededWith(ctx); !ok || rows != 450 || params != "rows=450" {
				t.Errorf("SeededWith = %d, %q, %v", rows, params, ok)
			}
			if err := sd.ResetLaravelSchema(ctx, sqlstore.SchemaLaravel8); err != nil {
				t.Fatal(err)
			}
			if rows, _, ok := sd.SeededWith(ctx); ok || rows != 0 {
				t.Errorf("after ResetLaravelSchema: SeededWith = %d, %v", rows, ok)
			}
		})
	}
	if _, err := sqlstore.OpenSeeder(context.Background(), sqlstore.Endpoint{Driver: "oracle"}); err == nil {
		t.Error("OpenSeeder accepted an unknown driver")
	}
}

// TestEnsureDatabase creates a database once (a second call finds it) on
// the servers, where bench/seed makes its benchmark databases.
func TestEnsureDatabase(t *testing.T) {
	for _, driver := range []string{"postgres", "mysql"} {
		t.Run(driver, func(t *testing.T) {
			ctx := context.Background()
			admin := sqltest.NewEndpoint(t, driver)
			b := make([]byte, 6)
			_, _ = rand.Read(b)
			name := "jt_ensure_" + hex.EncodeToString(b)
			t.Cleanup(func() {
				if sd, err := sqlstore.OpenSeeder(ctx, admin); err == nil {
					_ = sd.DropDatabase(ctx, name)
					sd.Close()
				}
			})
			for range 2 {
				ep, err := sqlstore.EnsureDatabase(ctx, admin, name)
				if err != nil || ep.Database != name {
					t.Fatalf("EnsureDatabase = %+v, %v", ep, err)
				}
			}
			ep := admin
			ep.Database = name
			sd, err := sqlstore.OpenSeeder(ctx, ep)
			if err != nil {
				t.Fatal(err)
			}
			defer sd.Close()
			if err := sd.CreateLaravelSchema(ctx, sqlstore.SchemaLaravel8); err != nil {
				t.Errorf("the new database does not take the schema: %v", err)
			}
			if _, err := sqlstore.EnsureDatabase(ctx, admin, "bad name"); err == nil {
				t.Error("an invalid database name was accepted")
			}
		})
	}
	if _, err := sqlstore.EnsureDatabase(context.Background(), sqlstore.Endpoint{Driver: "sqlite"}, "x"); err == nil {
		t.Error("EnsureDatabase on SQLite")
	}
}
