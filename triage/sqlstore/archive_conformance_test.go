package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
	"github.com/jobtriage/jobtriage/triage/triagetest"
)

// TestArchiveConformance: archived deletes hand over every deleted row
// whole and as stored, before the delete, and RestoreRows puts them back
// as they were, once — on every dialect.
func TestArchiveConformance(t *testing.T) {
	cases := []conformanceCase{
		{"ArchivedPrune", testArchivedPrune},
		{"ArchivedFlushAll", testArchivedFlushAll},
		{"ArchivedDeleteBatch", testArchivedDeleteBatch},
		{"RestoreRoundTrip", testRestoreRoundTrip},
		{"RestoreLegacyTable", testRestoreLegacy},
		{"ConcurrentRestoresInsertOnce", func(t *testing.T, driver string) { testConcurrentRestores(t, driver, true) }},
		{"ConcurrentRestoresWithoutUniqueIndex", func(t *testing.T, driver string) { testConcurrentRestores(t, driver, false) }},
	}
	for _, driver := range sqltest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) { c.run(t, driver) })
			}
		})
	}
}

// hostileFixture is a row whose bytes a careless path would change:
// escapes, quotes, a serialized protected property's \u0000 (as JSON
// text), non-ASCII, a terminal escape and CR/LF in the exception.
func hostileFixture(i int, failedAt string) sqltest.FailedFixture {
	f := fixture(i, "q'\"`", "App\\Jobs\\Hostile", failedAt)
	f.Payload = fmt.Sprintf(`{"uuid":"%s","data":{"command":"O:8:\"App\\Job\":1:{s:4:\"\u0000*\u0000x\";s:3:\"é€😀\";}"},"html":"<a>&amp;"}`, *f.UUID)
	f.Exception = "RuntimeException: \x1b[31mred\x1b[0m\r\n#0 /app/x.php(1)\n\nNext Exception: ünïcode\n"
	return f
}

// rawOf is what the archive must hold for a fixture inserted with id.
func rawOf(id int64, f sqltest.FailedFixture, withUUID bool) triage.RawRow {
	s := func(v string) *string { return &v }
	r := triage.RawRow{ID: id, Connection: s(f.Connection), Queue: s(f.Queue), Payload: s(f.Payload), Exception: s(f.Exception), FailedAt: s(f.FailedAt)}
	if withUUID {
		r.UUID = f.UUID
	}
	return r
}

type archiveSink struct {
	rows    []triage.RawRow
	batches int
	// failAt fails the nth batch (1-based; 0 never).
	failAt int
	// remaining is failed_jobs' count when each batch was handed over.
	remaining []int
	sizes     []int
	count     func() int
}

var errDiskFull = errors.New("disk full")

// Write makes the sink a triage.Archiver.
func (a *archiveSink) Write(rows []triage.RawRow) error { return a.archive(rows) }

func (a *archiveSink) archive(rows []triage.RawRow) error {
	a.batches++
	if a.count != nil {
		a.remaining = append(a.remaining, a.count())
	}
	if a.batches == a.failAt {
		return errDiskFull
	}
	a.rows = append(a.rows, rows...)
	a.sizes = append(a.sizes, len(rows))
	return nil
}

func testArchivedPrune(t *testing.T, driver string) {
	ctx := context.Background()
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
	var fx []sqltest.FailedFixture
	for i := 1; i <= 9; i++ {
		at := "2026-11-20 10:00:00"
		if i%4 == 0 {
			at = "2026-11-30 10:00:00" // newer than the cut-off: kept
		}
		fx = append(fx, hostileFixture(i, at))
	}
	ids := sqltest.InsertFailed(t, s, fx...)
	var want []triage.RawRow
	for i, f := range fx {
		if f.FailedAt < "2026-11-25" {
			want = append(want, rawOf(ids[i], f, true))
		}
	}
	cut := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	// An archive that fails keeps its batch (and the rest) in failed_jobs.
	sink := &archiveSink{failAt: 2}
	n, err := triage.PruneTotal(s.Prune(ctx, triage.PruneParams{Before: cut, BatchSize: 3, Archive: sink}))
	if !errors.Is(err, errDiskFull) {
		t.Fatalf("failing archive: %d, %v", n, err)
	}
	if n != int64(len(sink.rows)) || failedCount(t, s) != len(fx)-len(sink.rows) {
		t.Fatalf("failing archive: deleted %d, archived %d, %d left of %d", n, len(sink.rows), failedCount(t, s), len(fx))
	}
	sink2 := &archiveSink{}
	if driver != "sqlite" { // SQLite's one connection is the batch's own
		sink2.count = func() int { return failedCount(t, s) }
	}
	n, err = triage.PruneTotal(s.Prune(ctx, triage.PruneParams{Before: cut, BatchSize: 3, Archive: sink2}))
	if err != nil {
		t.Fatal(err)
	}
	got := append(sink.rows, sink2.rows...)
	if int(n)+len(sink.rows) != len(want) || !reflect.DeepEqual(got, want) {
		t.Fatalf("archived rows differ from what was stored:\n got %s\nwant %s", show(got), show(want))
	}
	if failedCount(t, s) != len(fx)-len(want) {
		t.Errorf("%d rows left, want %d", failedCount(t, s), len(fx)-len(want))
	}
	// Each batch was handed over before its delete: another session then
	// still counted it in failed_jobs.
	left := len(fx) - len(sink.rows)
	for i, c := range sink2.remaining {
		if c != left {
			t.Errorf("batch %d was archived with %d rows in failed_jobs, want %d", i+1, c, left)
		}
		left -= sink2.sizes[i]
	}
}

func show(rows []triage.RawRow) string {
	out := ""
	for _, r := range rows {
		out += fmt.Sprintf("\n  id %d uuid %v failed_at %q payload %.40q exception %.40q", r.ID, deref(r.UUID), deref(r.FailedAt), deref(r.Payload), deref(r.Exception))
	}
	return out
}

func deref(p *string) string {
	if p == nil {
		return "<NULL>"
	}
	return *p
}

func testArchivedFlushAll(t *testing.T, driver string) {
	ctx := context.Background()
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaUpgradedFrom7, time.UTC)
	var fx []sqltest.FailedFixture
	for i := 1; i <= 7; i++ {
		f := hostileFixture(i, "2026-11-30 10:00:00")
		if i == 3 {
			f.UUID = nil // a row from before Laravel 8
		}
		fx = append(fx, f)
	}
	ids := sqltest.InsertFailed(t, s, fx...)
	sink := &archiveSink{}
	n, err := triage.PruneTotal(s.Prune(ctx, triage.PruneParams{All: true, BatchSize: 3, Archive: sink}))
	if err != nil || n != 7 || failedCount(t, s) != 0 {
		t.Fatalf("flush all: %d, %v, %d left", n, err, failedCount(t, s))
	}
	var want []triage.RawRow
	for i, f := range fx {
		want = append(want, rawOf(ids[i], f, true))
	}
	if !reflect.DeepEqual(sink.rows, want) {
		t.Fatalf("archived:%s\nwant:%s", show(sink.rows), show(want))
	}
	if sink.batches != 3 {
		t.Errorf("%d batches of 3 for 7 rows, want 3", sink.batches)
	}
	n, err = triage.PruneTotal(s.Prune(ctx, triage.PruneParams{All: true, Archive: sink}))
	if err != nil || n != 0 {
		t.Errorf("flush of an empty table: %d, %v", n, err)
	}
}

func testArchivedDeleteBatch(t *testing.T, driver string) {
	ctx := context.Background()
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
	var fx []sqltest.FailedFixture
	for i := 1; i <= 5; i++ {
		fx = append(fx, hostileFixture(i, "2026-11-30 10:00:00"))
	}
	ids := sqltest.InsertFailed(t, s, fx...)
	odd := func(r *triage.FailedRow) bool { return r.ID%2 == 1 }
	sink := &archiveSink{}
	res, err := triagetest.DeleteBatch(ctx, s, triage.BatchParams{AfterID: triage.FirstAfterID, Limit: 10}, odd, archiveFunc(sink.archive))
	if err != nil {
		t.Fatal(err)
	}
	var want []triage.RawRow
	for i, f := range fx {
		if ids[i]%2 == 1 {
			want = append(want, rawOf(ids[i], f, true))
		}
	}
	if len(res.Done) != len(want) || !reflect.DeepEqual(sink.rows, want) {
		t.Fatalf("archived:%s\nwant:%s", show(sink.rows), show(want))
	}
	// A dry run archives nothing; a failing archive deletes nothing.
	dry := &archiveSink{}
	if _, err := triagetest.DeleteBatch(ctx, s, triage.BatchParams{AfterID: triage.FirstAfterID, Limit: 10, DryRun: true},
		func(*triage.FailedRow) bool { return true }, archiveFunc(dry.archive)); err != nil || dry.batches != 0 {
		t.Errorf("dry run: %v, %d batches archived", err, dry.batches)
	}
	before := failedCount(t, s)
	bad := &archiveSink{failAt: 1}
	if _, err := triagetest.DeleteBatch(ctx, s, triage.BatchParams{AfterID: triage.FirstAfterID, Limit: 10},
		func(*triage.FailedRow) bool { return true }, archiveFunc(bad.archive)); !errors.Is(err, errDiskFull) || failedCount(t, s) != before {
		t.Errorf("failing archive: %v, %d left of %d", err, failedCount(t, s), before)
	}
}

func testRestoreRoundTrip(t *testing.T, driver string) {
	ctx := context.Background()
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaUpgradedFrom7, time.UTC)
	var fx []sqltest.FailedFixture
	for i := 1; i <= 6; i++ {
		f := hostileFixture(i, fmt.Sprintf("2026-11-2%d 10:00:0%d", i%9, i))
		if i == 4 {
			f.UUID = nil
		}
		fx = append(fx, f)
	}
	sqltest.InsertFailed(t, s, fx...)
	first := &archiveSink{}
	if _, err := triage.PruneTotal(s.Prune(ctx, triage.PruneParams{All: true, BatchSize: 4, Archive: first})); err != nil {
		t.Fatal(err)
	}
	// Dry: everything would come back, nothing does.
	res, err := s.RestoreRows(ctx, triage.RestoreParams{Rows: first.rows, DryRun: true})
	if err != nil || res.Restored != 6 || res.Present != 0 || failedCount(t, s) != 0 {
		t.Fatalf("dry restore: %+v, %v, %d rows", res, err, failedCount(t, s))
	}
	res, err = s.RestoreRows(ctx, triage.RestoreParams{Rows: first.rows})
	if err != nil || res.Restored != 6 || res.Renumbered != 0 {
		t.Fatalf("restore: %+v, %v", res, err)
	}
	// Again: all present; the same uuid twice in one batch goes in once.
	res, err = s.RestoreRows(ctx, triage.RestoreParams{Rows: append(first.rows, first.rows[0])})
	if err != nil || res.Restored != 0 || res.Present != 7 {
		t.Fatalf("restore again: %+v, %v", res, err)
	}
	// Archived again, the rows are byte for byte what was archived first.
	second := &archiveSink{}
	if _, err := triage.PruneTotal(s.Prune(ctx, triage.PruneParams{All: true, Archive: second})); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(second.rows, first.rows) {
		t.Fatalf("restored rows differ:%s\nwant:%s", show(second.rows), show(first.rows))
	}
	// A row whose id another row took comes back under a new id, and the
	// next failure Laravel records still gets an id of its own.
	other := hostileFixture(99, "2026-11-30 10:00:00")
	if _, err := s.RestoreRows(ctx, triage.RestoreParams{Rows: []triage.RawRow{rawOf(first.rows[0].ID, other, true)}}); err != nil {
		t.Fatal(err)
	}
	res, err = s.RestoreRows(ctx, triage.RestoreParams{Rows: first.rows})
	if err != nil || res.Restored != 6 || res.Renumbered != 1 {
		t.Fatalf("restore over a taken id: %+v, %v", res, err)
	}
	high := rawOf(first.rows[len(first.rows)-1].ID+1000, hostileFixture(100, "2026-11-30 10:00:00"), true)
	if _, err := s.RestoreRows(ctx, triage.RestoreParams{Rows: []triage.RawRow{high}}); err != nil {
		t.Fatal(err)
	}
	next := sqltest.InsertFailed(t, s, hostileFixture(101, "2026-11-30 10:00:00"))
	if next[0] <= high.ID {
		t.Errorf("the next failure got id %d, not above the restored %d", next[0], high.ID)
	}
	if failedCount(t, s) != 9 {
		t.Errorf("%d rows, want 9", failedCount(t, s))
	}
}

func testRestoreLegacy(t *testing.T, driver string) {
	ctx := context.Background()
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLegacy, time.UTC)
	fx := []sqltest.FailedFixture{hostileFixture(1, "2026-11-30 10:00:00"), hostileFixture(2, "2026-11-30 10:00:00")}
	sqltest.InsertFailed(t, s, fx...)
	sink := &archiveSink{}
	if _, err := triage.PruneTotal(s.Prune(ctx, triage.PruneParams{All: true, Archive: sink})); err != nil {
		t.Fatal(err)
	}
	if sink.rows[0].UUID != nil {
		t.Errorf("a table without uuid column archived uuid %q", *sink.rows[0].UUID)
	}
	for round, want := range []triage.RestoreResult{{Restored: 2}, {Present: 2}} {
		res, err := s.RestoreRows(ctx, triage.RestoreParams{Rows: sink.rows})
		if err != nil || res != want {
			t.Fatalf("round %d: %+v, %v; want %+v", round, res, err, want)
		}
	}
}

// rowsReader reads rows as an archive would.
type rowsReader struct{ rows []triage.RawRow }

func (r *rowsReader) Next() (triage.RawRow, error) {
	if len(r.rows) == 0 {
		return triage.RawRow{}, io.EOF
	}
	row := r.rows[0]
	r.rows = r.rows[1:]
	return row, nil
}

// testConcurrentRestores: two restores of one archive at once insert each
// row once, and their restored counts add up to the archive's rows. With
// the uuid unique index the loser of a race runs its batch again
// (ErrConflict) and finds the rows present; without it nothing but the
// restore lock keeps both from finding a uuid absent and inserting it —
// the archived ids are all taken, so no primary key catches the second
// insert either.
func testConcurrentRestores(t *testing.T, driver string, unique bool) {
	ctx := context.Background()
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
	const n = 300
	var fx []sqltest.FailedFixture
	for i := 1; i <= n; i++ {
		fx = append(fx, hostileFixture(i, "2026-11-30 10:00:00"))
	}
	sqltest.InsertFailed(t, s, fx...)
	sink := &archiveSink{}
	if _, err := triage.PruneTotal(s.Prune(ctx, triage.PruneParams{All: true, Archive: sink})); err != nil {
		t.Fatal(err)
	}
	others := 0
	if !unique {
		execAll(t, s, map[string]string{"postgres": `ALTER TABLE failed_jobs DROP CONSTRAINT failed_jobs_uuid_unique`,
			"mysql": "ALTER TABLE failed_jobs DROP INDEX failed_jobs_uuid_unique", "sqlite": `DROP INDEX failed_jobs_uuid_unique`}[driver])
		s = reopen(t, s)
		var taken []sqltest.FailedFixture
		for i := n + 1; i <= 2*n; i++ {
			taken = append(taken, fixture(i, "default", `App\Jobs\Other`, "2026-11-30 10:00:00"))
		}
		for k, id := range sqltest.InsertFailed(t, s, taken...) {
			sink.rows[k].ID = id
		}
		others = n
	}
	type result struct {
		sum triage.RestoreSummary
		err error
	}
	results := make(chan result, 2)
	for range 2 {
		go func() {
			svc := &triage.Service{Store: s}
			sum, err := triage.Last(svc.Restore(ctx, &rowsReader{rows: sink.rows}, false))
			results <- result{sum, err}
		}()
	}
	var restored, present int64
	for range 2 {
		r := <-results
		if r.err != nil {
			t.Fatalf("concurrent restore: %v", r.err)
		}
		restored += r.sum.Restored
		present += r.sum.Present
	}
	var rows, uuids int
	if err := s.DB().QueryRow("SELECT COUNT(*), COUNT(DISTINCT uuid) FROM failed_jobs").Scan(&rows, &uuids); err != nil {
		t.Fatal(err)
	}
	if restored != n || present != n || rows != n+others || uuids != rows {
		t.Errorf("restored %d, present %d, %d rows with %d uuids; want %d, %d, %d rows with one uuid each",
			restored, present, rows, uuids, n, n, n+others)
	}
	// Neither left the lock held: a restore in another session gets it.
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if res, err := reopen(t, s).RestoreRows(ctx, triage.RestoreParams{Rows: sink.rows}); err != nil || res.Present != n {
		t.Errorf("a third restore: %+v, %v; want %d present", res, err, n)
	}
}
