package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
	"github.com/jobtriage/jobtriage/triage/triagetest"
)

var writeCases = []conformanceCase{
	{"MoveBatch", testMoveBatch},
	{"MoveBatchByIDsAndDryRun", testMoveBatchByIDs},
	{"MoveBatchPutsBackWhatPlanRefuses", testMoveBatchRefusals},
	{"MoveBatchSinceOverSeveralBatches", testMoveBatchSince},
	{"ConcurrentMovesExactlyOnce", testConcurrentMoves},
	{"DeleteBatch", testDeleteBatch},
	{"PruneByAge", testPruneByAge},
	{"PruneAll", testPruneAll},
	{"PruneOutOfIDOrder", testPruneOutOfIDOrder},
	{"ResolveRefsAndCount", testResolveRefs},
}

type jobRow struct {
	ID          int64
	Queue       string
	Payload     string
	Attempts    int
	ReservedAt  *int64 `db:"reserved_at"`
	AvailableAt int64  `db:"available_at"`
	CreatedAt   int64  `db:"created_at"`
}

func jobsRows(t *testing.T, s *sqlstore.Store) []jobRow {
	t.Helper()
	var out []jobRow
	if err := s.DB().Select(&out, "SELECT id, queue, payload, attempts, reserved_at, available_at, created_at FROM jobs ORDER BY id"); err != nil {
		t.Fatal(err)
	}
	return out
}

func failedCount(t *testing.T, s *sqlstore.Store) int {
	t.Helper()
	var n int
	if err := s.DB().Get(&n, "SELECT COUNT(*) FROM failed_jobs"); err != nil {
		t.Fatal(err)
	}
	return n
}

func moveAll(ctx context.Context, s triage.Store, p triage.BatchParams, plan func(*triage.FailedRow) (triage.Move, bool)) ([]int64, error) {
	var done []int64
	conflicts := 0
	for {
		res, err := triagetest.MoveBatch(ctx, s, p, plan, nil)
		if errors.Is(err, triage.ErrConflict) && conflicts < 50 {
			conflicts++
			continue // a deadlock victim was rolled back whole; run it again
		}
		if err != nil {
			return done, err
		}
		done = append(done, res.Done...)
		if res.Locked < p.Limit {
			return done, nil
		}
		p.AfterID = res.LastID
	}
}

// archiveFunc is a func as a triage.Archiver.
type archiveFunc func(rows []triage.RawRow) error

func (f archiveFunc) Write(rows []triage.RawRow) error { return f(rows) }

func keepQueue(r *triage.FailedRow) (triage.Move, bool) {
	return triage.Move{Queue: r.Queue, Payload: r.Payload}, true
}

func testMoveBatch(t *testing.T, driver string) {
	ctx := context.Background()
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
	var fx []sqltest.FailedFixture
	for i := 1; i <= 5; i++ {
		fx = append(fx, fixture(i, "default", `App\Jobs\A`, "2026-11-30 10:00:00"))
	}
	fx[2].Connection = "redis"
	fx[3].Payload = `{"uuid":"x","job":"A@b","data":{"command":"O:1:\"A\":1:{s:1:\"a\";s:3:\"\u0000*\u0000\";}"},"attempts":3}`
	ids := sqltest.InsertFailed(t, s, fx...)
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	done, err := moveAll(ctx, s, triage.BatchParams{Limit: 2, Now: now}, func(r *triage.FailedRow) (triage.Move, bool) {
		if r.Connection != "database" {
			return triage.Move{}, false
		}
		q := r.Queue
		if r.ID == ids[4] {
			q = "other"
		}
		return triage.Move{Queue: q, Payload: r.Payload}, true
	})
	if err != nil {
		t.Fatal(err)
	}
	equalIDs(t, "moved", done, []int64{ids[0], ids[1], ids[3], ids[4]})
	jobs := jobsRows(t, s)
	if len(jobs) != 4 {
		t.Fatalf("jobs has %d rows", len(jobs))
	}
	for i, want := range []int{0, 1, 3, 4} {
		j := jobs[i]
		wantQueue := "default"
		if want == 4 {
			wantQueue = "other"
		}
		if j.Payload != fx[want].Payload || j.Queue != wantQueue || j.Attempts != 0 || j.ReservedAt != nil ||
			j.AvailableAt != now.Unix() || j.CreatedAt != now.Unix() {
			t.Errorf("jobs row %d = %+v", i, j)
		}
	}
	if n := failedCount(t, s); n != 1 {
		t.Errorf("failed_jobs keeps %d rows, want the redis one", n)
	}
	legacy := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
	if _, err := legacy.DB().Exec("DROP TABLE jobs"); err != nil {
		t.Fatal(err)
	}
	sqltest.InsertFailed(t, legacy, fx[0]) // a row to move: its local move has nowhere to go
	noJobs, err := sqlstore.Open(ctx, sqlstore.Config{Endpoint: endpointOf(t, legacy)})
	if err != nil {
		t.Fatal(err)
	}
	defer noJobs.Close()
	if _, err := triagetest.MoveBatch(ctx, noJobs, triage.BatchParams{Limit: 10, Now: now}, keepQueue, nil); !errors.Is(err, triage.ErrMissingTable) {
		t.Errorf("move without a jobs table: %v", err)
	}
}

// endpointOf reopens the database of a store (its schema may have changed).
func endpointOf(t *testing.T, s *sqlstore.Store) sqlstore.Endpoint {
	t.Helper()
	return s.Endpoint()
}

func testMoveBatchByIDs(t *testing.T, driver string) {
	ctx := context.Background()
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
	ids := sqltest.InsertFailed(t, s, fixture(1, "a", `X`, "2026-11-30 10:00:00"),
		fixture(2, "a", `X`, "2026-11-30 10:00:00"), fixture(3, "a", `X`, "2026-11-30 10:00:00"))
	now := time.Now()
	res, err := triagetest.MoveBatch(ctx, s, triage.BatchParams{IDs: []int64{ids[2], ids[0]}, Limit: 10, Now: now, DryRun: true}, keepQueue, nil)
	if err != nil {
		t.Fatal(err)
	}
	equalIDs(t, "dry run", res.Done, []int64{ids[0], ids[2]})
	if len(jobsRows(t, s)) != 0 || failedCount(t, s) != 3 {
		t.Fatal("dry run changed the tables")
	}
	res, err = triagetest.MoveBatch(ctx, s, triage.BatchParams{IDs: []int64{ids[2], ids[0]}, Limit: 10, Now: now}, keepQueue, nil)
	if err != nil {
		t.Fatal(err)
	}
	equalIDs(t, "by ids", res.Done, []int64{ids[0], ids[2]})
	if len(jobsRows(t, s)) != 2 || failedCount(t, s) != 1 {
		t.Fatal("move by ids moved the wrong rows")
	}
}

// testMoveBatchRefusals: rows plan turns down stay in failed_jobs exactly as
// they were (MariaDB deletes the batch first and puts them back), batches
// refused whole change nothing, and plan sees the exception heads it asked for.
func testMoveBatchRefusals(t *testing.T, driver string) {
	ctx := context.Background()
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
	var fx []sqltest.FailedFixture
	for i := 1; i <= 9; i++ {
		fx = append(fx, fixture(i, "default", `App\Jobs\A`, fmt.Sprintf("2026-11-30 10:00:%02d", i)))
	}
	ids := sqltest.InsertFailed(t, s, fx...)
	before := collect(t, s, triage.ScanParams{Full: true})
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	var seen []string
	// Batches of 3: [1 2 3] refused whole, [4 5 6] and [7 8 9] in part.
	done, err := moveAll(ctx, s, triage.BatchParams{Limit: 3, Now: now, NeedException: true}, func(r *triage.FailedRow) (triage.Move, bool) {
		seen = append(seen, r.Exception)
		if r.ID <= ids[2] || r.ID == ids[4] || r.ID == ids[8] {
			return triage.Move{}, false
		}
		return triage.Move{Queue: "elsewhere", Payload: append(r.Payload[:len(r.Payload):len(r.Payload)], ' ')}, true
	})
	if err != nil {
		t.Fatal(err)
	}
	equalIDs(t, "moved", done, []int64{ids[3], ids[5], ids[6], ids[7]})
	if len(seen) != 9 {
		t.Fatalf("plan saw %d rows, want 9", len(seen))
	}
	for i, e := range seen {
		if want := fx[i].Exception; e != want {
			t.Errorf("row %d: plan saw exception %q, want %q", i+1, e, want)
		}
	}
	jobs := jobsRows(t, s)
	if len(jobs) != 4 {
		t.Fatalf("jobs has %d rows, want 4", len(jobs))
	}
	for i, want := range []int{3, 5, 6, 7} {
		if jobs[i].Queue != "elsewhere" || jobs[i].Payload != fx[want].Payload+" " {
			t.Errorf("jobs row %d = %+v, want fixture %d's edited payload", i, jobs[i], want+1)
		}
	}
	after := collect(t, s, triage.ScanParams{Full: true})
	var kept []*triage.FailedRow
	for _, r := range before {
		if r.ID <= ids[2] || r.ID == ids[4] || r.ID == ids[8] {
			kept = append(kept, r)
		}
	}
	if len(after) != len(kept) {
		t.Fatalf("failed_jobs keeps %d rows, want %d", len(after), len(kept))
	}
	for i := range kept {
		if fmt.Sprintf("%+v", *after[i]) != fmt.Sprintf("%+v", *kept[i]) {
			t.Errorf("refused row changed:\n got %+v\nwant %+v", *after[i], *kept[i])
		}
	}
}

// testMoveBatchSince: a --since filter moves exactly the rows at or after
// the bound, across batches (the first batch finds the starting id, later
// ones start after the previous batch), including a row written out of id
// order within the slack.
func testMoveBatchSince(t *testing.T, driver string) {
	ctx := context.Background()
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
	at := []string{"2026-11-27 10:00:00", "2026-11-27 11:00:00", "2026-11-30 09:30:00", "2026-11-30 10:00:00",
		"2026-11-30 08:00:00", "2026-11-30 10:30:00", "2026-11-30 09:00:00", "2026-11-30 11:00:00"}
	var fx []sqltest.FailedFixture
	for i, when := range at {
		fx = append(fx, fixture(i+1, "default", `App\Jobs\A`, when))
	}
	ids := sqltest.InsertFailed(t, s, fx...)
	since := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	done, err := moveAll(ctx, s, triage.BatchParams{Filter: triage.Filter{Since: since}, Limit: 2, Now: since}, keepQueue)
	if err != nil {
		t.Fatal(err)
	}
	equalIDs(t, "moved since 09:00", done, []int64{ids[2], ids[3], ids[5], ids[6], ids[7]})
	if n := failedCount(t, s); n != 3 {
		t.Errorf("failed_jobs keeps %d rows, want the 3 older ones", n)
	}
}

func testConcurrentMoves(t *testing.T, driver string) {
	ctx := context.Background()
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
	const n = 600
	var fx []sqltest.FailedFixture
	for i := 1; i <= n; i++ {
		fx = append(fx, fixture(i, "default", `App\Jobs\A`, "2026-11-30 10:00:00"))
	}
	sqltest.InsertFailed(t, s, fx...)
	// Two stores are two independent connection pools, as two processes.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for w := 0; w < 2; w++ {
		other, err := sqlstore.Open(ctx, sqlstore.Config{Endpoint: s.Endpoint()})
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		wg.Add(1)
		go func(w int, st *sqlstore.Store) {
			defer wg.Done()
			_, errs[w] = moveAll(ctx, st, triage.BatchParams{Limit: 25, Now: time.Now()}, keepQueue)
		}(w, other)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]int{}
	for _, j := range jobsRows(t, s) {
		seen[j.Payload]++
	}
	for i, f := range fx {
		if seen[f.Payload] != 1 {
			t.Fatalf("job %d is in jobs %d times", i+1, seen[f.Payload])
		}
	}
	if len(seen) != n || failedCount(t, s) != 0 {
		t.Fatalf("%d distinct jobs moved, %d left in failed_jobs", len(seen), failedCount(t, s))
	}
}

func testDeleteBatch(t *testing.T, driver string) {
	ctx := context.Background()
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
	ids := sqltest.InsertFailed(t, s, fixture(1, "a", `X`, "2026-11-30 10:00:00"),
		fixture(2, "b", `X`, "2026-11-30 10:00:00"), fixture(3, "a", `X`, "2026-11-30 10:00:00"))
	res, err := triagetest.DeleteBatch(ctx, s, triage.BatchParams{Filter: triage.Filter{Queues: []string{"a"}}, Limit: 10},
		func(r *triage.FailedRow) bool { return r.ID != ids[2] }, nil)
	if err != nil {
		t.Fatal(err)
	}
	equalIDs(t, "deleted", res.Done, []int64{ids[0]})
	equalIDs(t, "left", idsOf(collect(t, s, triage.ScanParams{})), []int64{ids[2], ids[1]})
}

func testPruneByAge(t *testing.T, driver string) {
	ctx := context.Background()
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
	var fx []sqltest.FailedFixture
	for i := 0; i < 10; i++ {
		fx = append(fx, fixture(i+1, "a", `X`, fmt.Sprintf("2026-11-%02d 12:00:00", 10+i)))
	}
	// One old row out of failure order behind newer ones: still pruned.
	fx[6].FailedAt = "2026-11-01 00:00:00"
	ids := sqltest.InsertFailed(t, s, fx...)
	cut := time.Date(2026, 11, 14, 12, 0, 0, 0, time.UTC)
	var batches []int64
	n, err := triage.PruneTotal(s.Prune(ctx, triage.PruneParams{Before: cut, BatchSize: 3, DryRun: true}))
	if err != nil || n != 5 {
		t.Fatalf("dry run counts %d, %v; want 5", n, err)
	}
	n = 0
	for b, err := range s.Prune(ctx, triage.PruneParams{Before: cut, BatchSize: 3}) {
		if err != nil {
			t.Fatal(err)
		}
		batches = append(batches, b.Deleted)
		if n += b.Deleted; b.Total != n || b.Took <= 0 {
			t.Fatalf("batch %d reports a total of %d after %d deleted, in %v", len(batches), b.Total, n, b.Took)
		}
	}
	// Ten ids in batches of three: the old rows in the first three, then
	// the last id's batch, clean, where the walk ends.
	if n != 5 || !slices.Equal(batches, []int64{3, 1, 1, 0}) {
		t.Fatalf("prune < cut: %d in batches %v; want 5 in 3, 1, 1, 0", n, batches)
	}
	equalIDs(t, "after prune", idsOf(collect(t, s, triage.ScanParams{Ascending: true})),
		[]int64{ids[4], ids[5], ids[7], ids[8], ids[9]})
	// flush --hours semantics: <= includes the row exactly at the cut-off.
	n, err = triage.PruneTotal(s.Prune(ctx, triage.PruneParams{Before: cut, Inclusive: true, BatchSize: 3}))
	if err != nil || n != 1 {
		t.Fatalf("flush <= cut: %d, %v; want 1", n, err)
	}
}

// testPruneOutOfIDOrder: rows whose failed_at is older than their id
// position (a worker's clock behind, rows restored under new ids) after
// many batches without an old row are pruned too: the selection is
// Laravel's, failed_at < cut-off, whatever the id order.
func testPruneOutOfIDOrder(t *testing.T, driver string) {
	ctx := context.Background()
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
	const batch = 3
	cut := time.Date(2026, 11, 14, 12, 0, 0, 0, time.UTC)
	var fx []sqltest.FailedFixture
	var old []bool
	for i := 0; i < 30; i++ {
		at, isOld := "2026-11-30 10:00:00", false
		switch {
		case i == 1 || i >= 20 && i%3 != 0:
			at, isOld = "2026-11-01 00:00:00", true
		case i == 25:
			at = "2026-11-14 12:00:00" // at the cut-off: kept by <
		}
		fx = append(fx, fixture(i+1, "a", `X`, at))
		old = append(old, isOld)
	}
	ids := sqltest.InsertFailed(t, s, fx...)
	var want, kept []int64
	for i, id := range ids {
		if old[i] {
			want = append(want, id)
		} else {
			kept = append(kept, id)
		}
	}
	dry, err := triage.PruneTotal(s.Prune(ctx, triage.PruneParams{Before: cut, BatchSize: batch, DryRun: true}))
	if err != nil || dry != int64(len(want)) {
		t.Fatalf("dry run counts %d, %v; want %d (failed_at < cut-off)", dry, err, len(want))
	}
	var n int64
	for b, err := range s.Prune(ctx, triage.PruneParams{Before: cut, BatchSize: batch}) {
		if err != nil {
			t.Fatal(err)
		}
		if b.Deleted > batch {
			t.Fatalf("one batch deleted %d rows, more than its %d", b.Deleted, batch)
		}
		n = b.Total
	}
	if n != dry {
		t.Fatalf("prune deleted %d, the dry run counted %d", n, dry)
	}
	equalIDs(t, "after prune", idsOf(collect(t, s, triage.ScanParams{Ascending: true})), kept)
}

func testPruneAll(t *testing.T, driver string) {
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
	var fx []sqltest.FailedFixture
	for i := 1; i <= 7; i++ {
		fx = append(fx, fixture(i, "a", `X`, "2026-11-30 10:00:00"))
	}
	sqltest.InsertFailed(t, s, fx...)
	n, err := triage.PruneTotal(s.Prune(context.Background(), triage.PruneParams{All: true, BatchSize: 3}))
	if err != nil || n != 7 || failedCount(t, s) != 0 {
		t.Fatalf("delete all: %d, %v", n, err)
	}
}

func testResolveRefs(t *testing.T, driver string) {
	ctx := context.Background()
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaUpgradedFrom7, time.UTC)
	a := fixture(1, "a", `X`, "2026-11-30 10:00:00")
	b := fixture(2, "b", `X`, "2026-11-30 10:00:00")
	b.UUID = nil
	ids := sqltest.InsertFailed(t, s, a, b)
	got, err := s.ResolveRefs(ctx, []triage.Ref{{UUID: *a.UUID}, {ID: ids[1]}, {UUID: "missing"}, {ID: 424242}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[triage.Ref{UUID: *a.UUID}] != ids[0] || got[triage.Ref{ID: ids[1]}] != ids[1] {
		t.Errorf("resolve: %v", got)
	}
	n, err := s.Count(ctx, triage.Filter{Queues: []string{"b"}})
	if err != nil || n != 1 {
		t.Errorf("count: %d, %v", n, err)
	}
}
