package sqlstore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

// TestSignatureIndexConformance: on every dialect, the signature index
// groups as a pass over the table does, warm, after new failures, deletes
// and retries by someone else, after the table was dropped and created
// again, and after ids went backwards; each step reads only what changed.
func TestSignatureIndexConformance(t *testing.T) {
	for _, driver := range sqltest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			testSignatureIndex(t, driver)
		})
	}
}

// indexFixtures are rows of several signatures: classes, messages whose
// numbers normalise away, queues and connections, times out of id order.
func indexFixtures(from, n int) []sqltest.FailedFixture {
	var out []sqltest.FailedFixture
	for i := from; i < from+n; i++ {
		f := fixture(i, []string{"default", "emails", "reports"}[i%3], fmt.Sprintf(`App\Jobs\Job%d`, i%4),
			time.Date(2026, 11, 30, 10, i%60, 0, 0, time.UTC).Format("2006-01-02 15:04:05"))
		if i%5 == 0 {
			f.Connection = "redis"
		}
		if i%7 == 0 {
			f.Exception = "LogicException: inner in /a.php:1\nStack trace:\n#0 {main}\n\nNext Illuminate\\Database\\QueryException: SQLSTATE[40001]: deadlock on order " + fmt.Sprint(i) + " in /b.php:2\nStack trace:\n#0 {main}"
		}
		out = append(out, f)
	}
	return out
}

func testSignatureIndex(t *testing.T, driver string) {
	ctx := context.Background()
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
	dir := t.TempDir()
	step := func(name string, added, deleted int, rebuilt string) {
		t.Helper()
		st, ok := sqltest.IndexAgrees(t, s, dir)
		if !ok {
			t.Fatalf("%s: no comparison", name)
		}
		if st.Added != added || st.Deleted != deleted || st.Rebuilt != rebuilt {
			t.Errorf("%s: added %d, deleted %d, rebuilt %q; want %d, %d, %q", name, st.Added, st.Deleted, st.Rebuilt, added, deleted, rebuilt)
		}
	}
	ids := sqltest.InsertFailed(t, s, indexFixtures(1, 40)...)
	step("cold", 40, 0, "")
	step("warm", 0, 0, "")

	// New failures; a forget of three rows (the newest of a signature
	// among them) and a retry of two, by another process.
	more := sqltest.InsertFailed(t, s, indexFixtures(41, 6)...)
	if _, err := s.DeleteBatch(ctx, triage.BatchParams{IDs: []int64{ids[3], ids[20], more[5]}, Limit: 10, Now: time.Now()},
		func(*triage.FailedRow) bool { return true }); err != nil {
		t.Fatal(err)
	}
	if _, err := s.MoveBatch(ctx, triage.BatchParams{IDs: []int64{ids[0], more[0]}, Limit: 10, Now: time.Now()},
		func(r *triage.FailedRow) (triage.Move, bool) {
			return triage.Move{Queue: r.Queue, Payload: r.Payload, Connection: r.Connection, Local: true, RowID: r.ID}, true
		}); err != nil {
		t.Fatal(err)
	}
	step("after deletes and retries", 4, 3, "")

	// Dropped and created again under the same name: ids start over.
	ddl, err := sqlstore.LaravelDDL(driver, sqlstore.SchemaLaravel8)
	if err != nil {
		t.Fatal(err)
	}
	db := s.DB()
	if _, err := db.Exec("DROP TABLE failed_jobs"); err != nil {
		t.Fatal(err)
	}
	for _, q := range ddl {
		if strings.Contains(q, "table \"failed_jobs\"") || strings.Contains(q, "table `failed_jobs`") || strings.Contains(q, `on "failed_jobs"`) {
			if _, err := db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
	}
	sqltest.InsertFailed(t, s, indexFixtures(100, 5)...)
	step("recreated", 5, 0, "the table was recreated")

	// Ids went backwards: a row appears below the highest indexed id, at
	// an id the index never held.
	insertAt := func(id int64, i int) {
		f := indexFixtures(i, 1)[0]
		if _, err := db.Exec(db.Rebind("INSERT INTO failed_jobs (id, uuid, connection, queue, payload, exception, failed_at) VALUES (?, ?, ?, ?, ?, ?, ?)"),
			id, *f.UUID, f.Connection, f.Queue, f.Payload, f.Exception, f.FailedAt); err != nil {
			t.Fatal(err)
		}
	}
	insertAt(1000, 200)
	insertAt(1002, 202)
	step("explicit ids", 2, 0, "")
	insertAt(1001, 201)
	step("backwards", 8, 0, "ids went backwards")
}
