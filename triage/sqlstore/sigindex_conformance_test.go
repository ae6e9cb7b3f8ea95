package sqlstore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/exception"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
	"github.com/jobtriage/jobtriage/triage/triagetest"
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
	if _, err := triagetest.DeleteBatch(ctx, s, triage.BatchParams{IDs: []int64{ids[3], ids[20], more[5]}, Limit: 10, Now: time.Now()},
		func(*triage.FailedRow) bool { return true }, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := triagetest.MoveBatch(ctx, s, triage.BatchParams{IDs: []int64{ids[0], more[0]}, Limit: 10, Now: time.Now()},
		func(r *triage.FailedRow) (triage.Move, bool) {
			return triage.Move{Queue: r.Queue, Payload: r.Payload, Connection: r.Connection, Local: true, RowID: r.ID}, true
		}, nil); err != nil {
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
	// A late commit (an id just below the highest, committed after it was
	// read) is merged; an unseen id far below is ids going backwards.
	insertAt(1000, 200)
	insertAt(1002, 202)
	step("explicit ids", 2, 0, "")
	insertAt(1001, 201)
	step("late commit", 1, 0, "")
	insertAt(50_000, 203)
	step("far ahead", 1, 0, "")
	insertAt(900, 204)
	step("backwards", 10, 0, "ids went backwards")
}

// TestIndexScanSendsLess: ScanAbove sends only the displayName string when
// it decides the class, and the windows otherwise (an empty displayName, an
// invalid escape, a value longer than its window, no displayName), and
// every row gets the listing's class either way.
func TestIndexScanSendsLess(t *testing.T) {
	onEachLaravel8(t, func(t *testing.T, driver string, ctx context.Context, s *sqlstore.Store) {
		plain := fixture(1, "default", `App\Jobs\SendInvoice`, "2026-11-30 10:00:00")
		empty := fixture(2, "default", `App\Jobs\FromCommand`, "2026-11-30 10:00:00")
		empty.Payload = strings.Replace(empty.Payload, `"displayName":"App\\Jobs\\FromCommand"`, `"displayName":""`, 1)
		badEscape := fixture(3, "default", `App\Jobs\Bad`, "2026-11-30 10:00:00")
		badEscape.Payload = strings.Replace(badEscape.Payload, `"displayName":"App\\Jobs\\Bad"`, `"displayName":"App\x\\Jobs"`, 1)
		long := fixture(4, "default", `App\Jobs\`+strings.Repeat("L", 600), "2026-11-30 10:00:00")
		spaced := fixture(5, "default", `App\Jobs\Spaced`, "2026-11-30 10:00:00")
		spaced.Payload = strings.Replace(spaced.Payload, `"displayName":"`, "\"displayName\": \t\"", 1)
		quoted := fixture(6, "default", `App\Jobs\Quoted`, "2026-11-30 10:00:00")
		quoted.Payload = strings.Replace(quoted.Payload, `"displayName":"App\\Jobs\\Quoted"`, `"displayName":"App\\Jobs\\\"Quoted\""`, 1)
		control := fixture(7, "default", `App\Jobs\Control`, "2026-11-30 10:00:00")
		control.Payload = strings.Replace(control.Payload, `"displayName":"App\\Jobs\\Control"`, "\"displayName\":\"App\\\\Jobs\x01Control\"", 1)
		unicode := fixture(8, "default", `App\Jobs\Unicode`, "2026-11-30 10:00:00")
		unicode.Payload = strings.Replace(unicode.Payload, `"displayName":"App\\Jobs\\Unicode"`, `"displayName":"App\\Jobs\\Unic\u00f6de"`, 1)
		ids := sqltest.InsertFailed(t, s, plain, empty, badEscape, long, spaced, quoted, control, unicode)
		sent := map[int64]int{}
		if err := s.ScanAbove(ctx, 0, func(r *triage.FailedRow) error {
			sent[r.ID] = len(r.Payload)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if driver != "sqlite" {
			if sent[ids[0]] > 64 {
				t.Errorf("a plain displayName sent %d payload bytes, want only its string", sent[ids[0]])
			}
			// Blanks after the key (which PHP's json_encode and Redis's
			// cjson never write): MySQL's regular expression takes the
			// string, PostgreSQL's string functions send the windows.
			if driver == "mysql" && sent[ids[4]] > 64 {
				t.Errorf("a displayName after blanks sent %d payload bytes, want only its string", sent[ids[4]])
			}
			// PostgreSQL takes the string without a regular expression:
			// an escaped quote, a control character or an escape other
			// than a backslash's send the windows there.
			if driver == "postgres" {
				for _, k := range []int{5, 6, 7} {
					if sent[ids[k]] < 200 {
						t.Errorf("row %d sent %d payload bytes: its class windows are needed", k+1, sent[ids[k]])
					}
				}
			}
			for _, k := range []int{1, 2, 3} {
				if sent[ids[k]] < 200 {
					t.Errorf("row %d sent %d payload bytes: its class windows are needed", k+1, sent[ids[k]])
				}
			}
		}
		sqltest.IndexAgrees(t, s, t.TempDir())
	})
}

// TestIndexHeadAtTheCut: the index pass cuts the top exception block at its
// trace before the listing's ExceptionHeadChars cut, and takes the
// listing's expression where the two could differ: a trace marker that
// starts just before the cut, across it, or just after, with multibyte
// characters before it. Every row gets the listing's message and signature.
func TestIndexHeadAtTheCut(t *testing.T) {
	onEachLaravel8(t, func(t *testing.T, _ string, ctx context.Context, s *sqlstore.Store) {
		marker := utf8.RuneCountInString(exception.TraceMarker)
		var fixtures []sqltest.FailedFixture
		for i, start := 0, triage.ExceptionHeadChars-2*marker; start <= triage.ExceptionHeadChars+marker; i, start = i+1, start+1 {
			f := fixture(i+1, "default", `App\Jobs\Cut`, "2026-11-30 10:00:00")
			head := "RuntimeException: cut " + strings.Repeat("ö", i%3)
			head += strings.Repeat("x", start-utf8.RuneCountInString(head))
			f.Exception = "LogicException: first\n\nNext " + head + exception.TraceMarker + "\n#0 {main}"
			fixtures = append(fixtures, f)
		}
		sqltest.InsertFailed(t, s, fixtures...)
		listed := map[int64]triage.Job{}
		for _, r := range collect(t, s, triage.ScanParams{Ascending: true}) {
			listed[r.ID] = triage.JobFromRow(r)
		}
		n := 0
		if err := s.ScanAbove(ctx, 0, func(r *triage.FailedRow) error {
			n++
			got, want := triage.JobFromRow(r), listed[r.ID]
			if got.Signature != want.Signature || got.ExceptionMessage != want.ExceptionMessage {
				t.Errorf("row %d: index %q %s, listing %q %s", r.ID, got.ExceptionMessage, got.Signature, want.ExceptionMessage, want.Signature)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if n != len(fixtures) || len(listed) != n {
			t.Errorf("index pass read %d rows, listing %d, inserted %d", n, len(listed), len(fixtures))
		}
		sqltest.IndexAgrees(t, s, t.TempDir())
	})
}

// TestLiveIDs: the live ids, ascending and bounded, after deletes, for
// each era of the table (a uuid index with NULL uuids in it after an
// upgrade from 7, none before 8); on MySQL/MariaDB also when the one-text
// list is cut (group_concat_max_len smaller than the list), which must be
// read as rows instead.
func TestLiveIDs(t *testing.T) {
	for _, driver := range sqltest.Drivers() {
		for name, v := range map[string]sqlstore.SchemaVariant{"laravel8": sqlstore.SchemaLaravel8, "upgraded-from-7": sqlstore.SchemaUpgradedFrom7, "legacy": sqlstore.SchemaLegacy} {
			t.Run(driver+"/"+name, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				s := sqltest.OpenLaravel(t, driver, v, time.UTC)
				var fixtures []sqltest.FailedFixture
				for i := range 40 {
					f := fixture(i+1, "default", `App\Jobs\Live`, "2026-11-30 10:00:00")
					if v == sqlstore.SchemaUpgradedFrom7 && i%4 == 0 {
						f.UUID = nil // failed before the upgrade
					}
					fixtures = append(fixtures, f)
				}
				ids := sqltest.InsertFailed(t, s, fixtures...)
				var want []int64
				for k, id := range ids {
					if k%3 == 1 {
						if _, err := s.DB().Exec(s.DB().Rebind("DELETE FROM failed_jobs WHERE id = ?"), id); err != nil {
							t.Fatal(err)
						}
					} else if k < 30 {
						want = append(want, id)
					}
				}
				upTo := ids[29]
				limits := []string{""}
				if driver == "mysql" {
					limits = append(limits, "4")
				}
				for _, limit := range limits {
					if driver == "mysql" {
						sqlstore.SetLiveIDsConcatMax(s, limit)
					}
					var got []int64
					if err := s.LiveIDs(ctx, upTo, func(id int64) error {
						got = append(got, id)
						return nil
					}); err != nil {
						t.Fatal(err)
					}
					if fmt.Sprint(got) != fmt.Sprint(want) {
						t.Errorf("group_concat_max_len %q: live ids %v, want %v", limit, got, want)
					}
				}
			})
		}
	}
}

// onEachLaravel8 runs fn, in parallel, on a Laravel 8 schema on each
// driver.
func onEachLaravel8(t *testing.T, fn func(t *testing.T, driver string, ctx context.Context, s *sqlstore.Store)) {
	for _, driver := range sqltest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			fn(t, driver, context.Background(), sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC))
		})
	}
}
