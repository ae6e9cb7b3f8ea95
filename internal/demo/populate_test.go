package demo

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

func TestPopulateRoundTrips(t *testing.T) {
	for _, driver := range sqltest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			t.Parallel() // each driver has a database of its own
			ctx := context.Background()
			s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, nil)
			opts := Options{Failed: 1234, Jobs: 57, Seed: 99, Now: testNow, BatchSize: 500, PayloadSize: 1500}
			var calls, last int
			opts.Progress = func(done, total int) {
				calls++
				if done < last || total != 1234+57 {
					t.Errorf("progress %d/%d after %d", done, total, last)
				}
				last = done
			}
			if err := Populate(ctx, s.Seeder(), opts); err != nil {
				t.Fatal(err)
			}
			if last != 1234+57 || calls < 3 {
				t.Errorf("progress ended at %d after %d calls; want %d over several transactions", last, calls, 1234+57)
			}
			stats, err := s.QueueStats(ctx, triage.QueueStatsParams{Now: testNow})
			if err != nil {
				t.Fatal(err)
			}
			var jobs int64
			for _, q := range stats {
				jobs += q.Size
			}
			if jobs != 57 {
				t.Errorf("jobs rows = %d, want 57", jobs)
			}
			want, _ := generate(t, Options{Failed: 1234, Seed: 99, Now: testNow, PayloadSize: 1500})
			// The store streams newest first; ids grow with failed_at.
			i := len(want) - 1
			err = s.ScanFailed(ctx, triage.ScanParams{Full: true}, func(r *triage.FailedRow) error {
				w := want[i]
				if r.UUID != w.UUID || string(r.Payload) != w.Payload || r.Exception != w.Exception ||
					r.Connection != w.Connection || r.Queue != w.Queue || !r.FailedAt.Equal(w.FailedAt) {
					t.Fatalf("row %d (%s) does not round-trip: uuid %s/%s failed_at %s/%s payload equal %v exception equal %v",
						i, w.Scenario, r.UUID, w.UUID, r.FailedAt, w.FailedAt, string(r.Payload) == w.Payload, r.Exception == w.Exception)
				}
				i--
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if i != -1 {
				t.Errorf("ScanFailed read %d rows, want %d", len(want)-1-i, len(want))
			}
		})
	}
}

func TestPopulateRejectsBadInput(t *testing.T) {
	ctx := context.Background()
	s := sqltest.OpenLaravel(t, "sqlite", sqlstore.SchemaLaravel8, nil)
	for name, opts := range map[string]Options{
		"options": {Failed: -3},
	} {
		if err := Populate(ctx, s.Seeder(), opts); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if err := Populate(ctx, nil, Options{}); err == nil {
		t.Error("nil db: no error")
	}
}

func TestCreateDemoSQLite(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "demo.sqlite")
	if err := CreateDemoSQLite(ctx, path, testNow); err != nil {
		t.Fatal(err)
	}
	s, err := sqlstore.Open(ctx, sqlstore.Config{Endpoint: sqlstore.Endpoint{Driver: "sqlite", Path: path}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if sc := s.Schema(); sc.IDMode != triage.IDModeUUID || !sc.HasJobs {
		t.Errorf("schema %+v: want Laravel 8 uuid ids and a jobs table", sc)
	}
	n := 0
	if err := s.ScanFailed(ctx, triage.ScanParams{}, func(*triage.FailedRow) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != demoFailed {
		t.Errorf("demo has %d failed rows, want %d", n, demoFailed)
	}
	if err := CreateDemoSQLite(ctx, path, testNow); err == nil {
		t.Error("CreateDemoSQLite overwrote an existing file")
	}
	bad := filepath.Join(t.TempDir(), "missing-dir", "demo.sqlite")
	if err := CreateDemoSQLite(ctx, bad, testNow); err == nil {
		t.Error("no error for a path in a missing directory")
	}
	if _, err := os.Stat(bad); err == nil {
		t.Error("a failed CreateDemoSQLite left a file behind")
	}
}
