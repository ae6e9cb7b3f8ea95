package sigindex_test

import (
	"context"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/internal/demo"
	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
	"github.com/jobtriage/jobtriage/triage/triagetest"
)

// TestDemoDatabaseAgrees: on the demo data of every dialect (all its
// scenarios: encrypted commands, Horizon and Redis payloads, chained
// exceptions), the index groups as a pass does, cold, and warm after
// new failures, a forget of every seventh row and a retry.
func TestDemoDatabaseAgrees(t *testing.T) {
	for _, driver := range sqltest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, nil)
			now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
			if err := demo.Populate(ctx, s.Seeder(), demo.Options{Failed: 1500, Jobs: 10, Seed: 7, Now: now}); err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if st, ok := sqltest.IndexAgrees(t, s, dir); !ok || st.Added != 1500 {
				t.Fatalf("cold: %+v", st)
			}
			if err := demo.Populate(ctx, s.Seeder(), demo.Options{Failed: 300, Seed: 8, Now: now.Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.DB().Exec("DELETE FROM failed_jobs WHERE id % 7 = 3"); err != nil {
				t.Fatal(err)
			}
			var retry []int64
			if err := s.DB().Select(&retry, "SELECT id FROM failed_jobs WHERE connection = 'database' ORDER BY id DESC LIMIT 20"); err != nil {
				t.Fatal(err)
			}
			if _, err := triagetest.MoveBatch(ctx, s, triage.BatchParams{IDs: retry, Limit: 50, Now: now},
				func(r *triage.FailedRow) (triage.Move, bool) {
					return triage.Move{Queue: r.Queue, Payload: r.Payload, Connection: r.Connection, Local: true, RowID: r.ID}, true
				}, nil); err != nil {
				t.Fatal(err)
			}
			st, ok := sqltest.IndexAgrees(t, s, dir)
			if !ok || st.Added == 0 || st.Deleted < 200 || st.Rebuilt != "" {
				t.Errorf("warm: %+v", st)
			}
		})
	}
}
