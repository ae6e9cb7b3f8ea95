package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

var monitorCases = []conformanceCase{
	{"QueueStats", testQueueStats},
	{"QueueStatsMatchSQL", testQueueStatsMatchSQL},
	{"ScanRecentFailed", testScanRecentFailed},
	{"ScanRecentFailedStopsEarly", testScanRecentStopsEarly},
	{"MaxFailedID", testMaxFailedID},
	{"WatchLockExcludes", testWatchLock},
}

// monitorNow is the fixed "now" of the monitor cases.
var monitorNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

type queuedJob struct {
	queue      string
	reservedAt *int64 // seconds relative to monitorNow
	available  int64  // seconds relative to monitorNow
}

func rel(s int64) *int64 { return &s }

func insertJobs(t *testing.T, s *sqlstore.Store, jobs ...queuedJob) {
	t.Helper()
	now := monitorNow.Unix()
	for _, j := range jobs {
		var reserved any
		if j.reservedAt != nil {
			reserved = now + *j.reservedAt
		}
		_, err := s.DB().Exec(s.DB().Rebind("INSERT INTO jobs (queue, payload, attempts, reserved_at, available_at, created_at) VALUES (?, ?, ?, ?, ?, ?)"),
			j.queue, `{"displayName":"App\\Jobs\\X"}`, 0, reserved, now+j.available, now-3600)
		if err != nil {
			t.Fatalf("insert job: %v", err)
		}
	}
}

// monitorFixture: on "default" two pending (ready 300 s and 10 s ago, one
// exactly now), one delayed, one reserved 30 s ago, one reserved exactly
// retry_after (90 s) ago and one 600 s ago (both stuck); on "emails" one
// delayed job only; on the hostile queue one pending.
func monitorFixture(t *testing.T, s *sqlstore.Store) {
	insertJobs(t, s,
		queuedJob{queue: "default", available: -300},
		queuedJob{queue: "default", available: -10},
		queuedJob{queue: "default", available: 0},
		queuedJob{queue: "default", available: 60},
		queuedJob{queue: "default", available: -200, reservedAt: rel(-30)},
		queuedJob{queue: "default", available: -200, reservedAt: rel(-90)},
		queuedJob{queue: "default", available: -900, reservedAt: rel(-600)},
		queuedJob{queue: "emails", available: 3600},
		queuedJob{queue: "q'\"`;--", available: -5},
	)
}

func testQueueStats(t *testing.T, driver string) {
	ctx := context.Background()
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
	monitorFixture(t, s)
	got, err := s.QueueStats(ctx, triage.QueueStatsParams{Now: monitorNow, RetryAfter: 90 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	want := []triage.QueueStats{
		{Queue: "default", Size: 7, Pending: 3, Delayed: 1, Reserved: 3, Stuck: 2, OldestPendingAt: time.Unix(monitorNow.Unix()-300, 0)},
		{Queue: "emails", Size: 1, Delayed: 1},
		{Queue: "q'\"`;--", Size: 1, Pending: 1, OldestPendingAt: time.Unix(monitorNow.Unix()-5, 0)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
	// A longer retry_after leaves only the 600 s reservation stuck.
	got, err = s.QueueStats(ctx, triage.QueueStatsParams{Queues: []string{"default", "absent"}, Now: monitorNow, RetryAfter: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Queue != "default" || got[0].Stuck != 1 {
		t.Errorf("filtered stats: %+v", got)
	}
	if _, err := s.QueueStats(ctx, triage.QueueStatsParams{Now: monitorNow, RetryAfter: -time.Second}); !errors.Is(err, triage.ErrInvalidInput) {
		t.Errorf("negative retry_after: %v", err)
	}
}

// testQueueStatsMatchSQL checks every count against a plain SQL count of its
// own, written as Laravel's DatabaseQueue would ask.
func testQueueStatsMatchSQL(t *testing.T, driver string) {
	ctx := context.Background()
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
	monitorFixture(t, s)
	for i := range 40 {
		j := queuedJob{queue: fmt.Sprintf("q%d", i%3), available: int64(i*37%400) - 200}
		if i%4 == 0 {
			j.reservedAt = rel(-int64(i * 11))
		}
		insertJobs(t, s, j)
	}
	stats, err := s.QueueStats(ctx, triage.QueueStatsParams{Now: monitorNow, RetryAfter: 90 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	now, expired := monitorNow.Unix(), monitorNow.Unix()-90
	count := func(cond string, args ...any) int64 {
		var n int64
		if err := s.DB().Get(&n, s.DB().Rebind("SELECT COUNT(*) FROM jobs WHERE "+cond), args...); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, st := range stats {
		q := st.Queue
		want := triage.QueueStats{Queue: q,
			Size:     count("queue = ?", q),
			Pending:  count("queue = ? AND reserved_at IS NULL AND available_at <= ?", q, now),
			Delayed:  count("queue = ? AND reserved_at IS NULL AND available_at > ?", q, now),
			Reserved: count("queue = ? AND reserved_at IS NOT NULL", q),
			Stuck:    count("queue = ? AND reserved_at <= ?", q, expired),
		}
		var oldest *int64
		if err := s.DB().Get(&oldest, s.DB().Rebind("SELECT MIN(available_at) FROM jobs WHERE queue = ? AND reserved_at IS NULL AND available_at <= ?"), q, now); err != nil {
			t.Fatal(err)
		}
		if oldest != nil {
			want.OldestPendingAt = time.Unix(*oldest, 0)
		}
		if diff := cmp.Diff(want, st); diff != "" {
			t.Errorf("queue %q (-sql +stats):\n%s", q, diff)
		}
	}
	if len(stats) != 6 {
		t.Errorf("got %d queues, want 6", len(stats))
	}
}

// The seed vector: failures at 100, 103, 105, 140, 160 s, now 165 s.
func seedFailures(t *testing.T, s *sqlstore.Store, base time.Time) []int64 {
	var fx []sqltest.FailedFixture
	for i, sec := range []int{100, 103, 105, 140, 160} {
		f := fixture(i+1, "default", `App\Jobs\A`, base.Add(time.Duration(sec)*time.Second).Format("2006-01-02 15:04:05"))
		if i == 4 {
			f.Queue = "emails"
		}
		fx = append(fx, f)
	}
	return sqltest.InsertFailed(t, s, fx...)
}

func testScanRecentFailed(t *testing.T, driver string) {
	ctx := context.Background()
	jakarta, err := time.LoadLocation("Asia/Jakarta")
	if err != nil {
		t.Skip("no tzdata")
	}
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, jakarta)
	base := time.Date(2026, 11, 30, 12, 0, 0, 0, jakarta)
	ids := seedFailures(t, s, base)
	now := base.Add(165 * time.Second)
	scan := func(p triage.RecentParams) []*triage.FailedRow {
		var out []*triage.FailedRow
		if err := s.ScanRecentFailed(ctx, p, func(r *triage.FailedRow) error {
			out = append(out, r)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, tc := range []struct {
		window time.Duration
		want   []int64
	}{
		{30 * time.Second, []int64{ids[4], ids[3]}},
		{60 * time.Second, []int64{ids[4], ids[3], ids[2]}}, // 105 is exactly now − 60: inclusive
		{59 * time.Second, []int64{ids[4], ids[3]}},
		{time.Hour, []int64{ids[4], ids[3], ids[2], ids[1], ids[0]}},
	} {
		// A since given in UTC is the same instant as Jakarta wall-clock time.
		got := scan(triage.RecentParams{Since: now.Add(-tc.window).UTC(), BatchSize: 2})
		equalIDs(t, fmt.Sprint("window ", tc.window), idsOf(got), tc.want)
	}
	got := scan(triage.RecentParams{Since: now.Add(-time.Hour), MaxID: ids[3]})
	equalIDs(t, "below the high-water mark", idsOf(got), []int64{ids[3], ids[2], ids[1], ids[0]})
	light := scan(triage.RecentParams{Since: now.Add(-time.Hour)})[0]
	if light.Queue != "emails" || len(light.Payload) != 0 || !light.FailedAt.Equal(base.Add(160*time.Second)) {
		t.Errorf("light row: %+v", light)
	}
	heads := scan(triage.RecentParams{Since: now.Add(-time.Hour), Heads: true})[0]
	if j := triage.JobFromRow(heads); j.Class != `App\Jobs\A` || j.ExceptionClass != "RuntimeException" {
		t.Errorf("row with heads: %+v", j)
	}
	stop := errors.New("stop")
	if err := s.ScanRecentFailed(ctx, triage.RecentParams{Since: now.Add(-time.Hour)}, func(*triage.FailedRow) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("callback error: %v", err)
	}
}

// testScanRecentStopsEarly: a window read stops one batch past the window,
// so its cost follows the window, not the table. A row deep in the table
// stamped inside the window (a full scan would find it) stays unread.
func testScanRecentStopsEarly(t *testing.T, driver string) {
	ctx := context.Background()
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
	var fx []sqltest.FailedFixture
	for i := range 30 {
		fx = append(fx, fixture(i, "default", `App\Jobs\Old`, "2026-01-01 00:00:00"))
	}
	fx[5].FailedAt = "2026-11-30 11:59:50" // the deep marker
	// A straggler older than the window, written by a worker with a slow
	// clock, sits between the window's rows.
	for i, at := range []string{"11:59:30", "11:00:00", "11:59:30", "11:59:30"} {
		fx = append(fx, fixture(100+i, "default", `App\Jobs\New`, "2026-11-30 "+at))
	}
	ids := sqltest.InsertFailed(t, s, fx...)
	for _, batch := range []int{2, 3, 0} {
		var read []int64
		err := s.ScanRecentFailed(ctx, triage.RecentParams{Since: monitorNow.Add(-time.Minute), BatchSize: batch}, func(r *triage.FailedRow) error {
			read = append(read, r.ID)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want := []int64{ids[33], ids[32], ids[30]}
		if batch == 0 { // one default batch covers the whole table
			want = append(want, ids[5])
		}
		equalIDs(t, fmt.Sprint("batch ", batch), read, want)
	}
}

func testMaxFailedID(t *testing.T, driver string) {
	ctx := context.Background()
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLegacy, time.UTC)
	if id, err := s.MaxFailedID(ctx); err != nil || id != 0 {
		t.Errorf("empty table: %d, %v", id, err)
	}
	ids := seedFailures(t, s, monitorNow)
	if id, err := s.MaxFailedID(ctx); err != nil || id != ids[4] {
		t.Errorf("MaxFailedID = %d, %v; want %d", id, err, ids[4])
	}
}

func testWatchLock(t *testing.T, driver string) {
	ctx := context.Background()
	a := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
	b, err := sqlstore.Open(ctx, sqlstore.Config{Endpoint: a.Endpoint()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	la, err := a.TryWatchLock(ctx)
	if err != nil {
		t.Fatalf("first lock: %v", err)
	}
	if err := la.Check(ctx); err != nil {
		t.Errorf("held lock fails its check: %v", err)
	}
	if _, err := b.TryWatchLock(ctx); !errors.Is(err, triage.ErrLockHeld) {
		t.Fatalf("second watcher: %v, want ErrLockHeld", err)
	}
	if err := la.Release(); err != nil {
		t.Fatalf("release: %v", err)
	}
	lb, err := b.TryWatchLock(ctx)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	if err := lb.Release(); err != nil {
		t.Fatal(err)
	}
}
