package triage_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

func TestParseQueueRefs(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want []triage.QueueRef
		err  string
	}{
		{in: []string{"default"}, want: []triage.QueueRef{{Queue: "default"}}},
		{in: []string{"redis:emails"}, want: []triage.QueueRef{{Connection: "redis", Queue: "emails"}}},
		// Split on the first colon only, like artisan.
		{in: []string{"database:a:b"}, want: []triage.QueueRef{{Connection: "database", Queue: "a:b"}}},
		{in: []string{"default, emails", "default"}, want: []triage.QueueRef{{Queue: "default"}, {Queue: "emails"}}},
		{in: []string{""}, err: "empty queue name"},
		{in: []string{"redis:"}, err: "empty queue name"},
		{in: []string{":emails"}, err: "empty connection"},
		{in: []string{"a,,b"}, err: "empty queue name"},
		{in: []string{"bad\x1b[2Jqueue"}, err: "control characters"},
		{in: []string{strings.Repeat("q", 256)}, err: "longer than 255"},
	} {
		got, err := triage.ParseQueueRefs(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, triage.ErrInvalidInput) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tc.in, diff)
		}
	}
}

var base = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func sec(s int) time.Time { return base.Add(time.Duration(s) * time.Second) }

func failure(i int, conn, queue, class string, at time.Time) sqltest.FailedFixture {
	u := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
	c := strings.ReplaceAll(class, `\`, `\\`)
	return sqltest.FailedFixture{UUID: &u, Connection: conn, Queue: queue,
		Payload:   `{"uuid":"` + u + `","displayName":"` + c + `","job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"` + c + `"}}`,
		Exception: "RuntimeException: boom in /app/X.php:1\nStack trace:\n#0 {main}",
		FailedAt:  at.Format("2006-01-02 15:04:05")}
}

func addJob(t *testing.T, s *sqlstore.Store, queue string, reservedAt *time.Time, available time.Time) {
	t.Helper()
	var r any
	if reservedAt != nil {
		r = reservedAt.Unix()
	}
	if _, err := s.DB().Exec("INSERT INTO jobs (queue, payload, attempts, reserved_at, available_at, created_at) VALUES (?, '{}', 0, ?, ?, ?)",
		queue, r, available.Unix(), available.Unix()); err != nil {
		t.Fatal(err)
	}
}

// seeded: the seed's failures at 100, 103, 105, 140 and 160 s on
// database:default (160 on redis:emails), and a few queued jobs.
func seeded(t *testing.T) *sqlstore.Store {
	s := sqltest.OpenLaravel(t, "sqlite", sqlstore.SchemaLaravel8, time.UTC)
	var fx []sqltest.FailedFixture
	for i, at := range []int{100, 103, 105, 140} {
		fx = append(fx, failure(i, "database", "default", `App\Jobs\A`, sec(at)))
	}
	fx = append(fx, failure(9, "redis", "emails", `App\Jobs\B`, sec(160)))
	sqltest.InsertFailed(t, s, fx...)
	addJob(t, s, "default", nil, sec(45))  // pending for 120 s at 165
	addJob(t, s, "default", nil, sec(200)) // delayed
	r := sec(0)
	addJob(t, s, "default", &r, sec(0)) // reserved 165 s ago: stuck with retry_after 90
	addJob(t, s, "reports", nil, sec(165))
	return s
}

func TestMonitorSeedVector(t *testing.T) {
	s := seeded(t)
	ctx := context.Background()
	for _, tc := range []struct {
		window time.Duration
		failed int64
	}{{30 * time.Second, 2}, {60 * time.Second, 3}, {59 * time.Second, 2}, {time.Hour, 5}} {
		rep, err := triage.Monitor(ctx, s, triage.MonitorParams{Now: sec(165), RetryAfter: 90 * time.Second, Window: tc.window})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Failed != tc.failed {
			t.Errorf("window %s: %d failures, want %d", tc.window, rep.Failed, tc.failed)
		}
	}
	rep, err := triage.Monitor(ctx, s, triage.MonitorParams{Now: sec(165), RetryAfter: 90 * time.Second, Window: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	want := []triage.QueueHealth{
		{Queue: "default", Size: 3, Pending: 1, Delayed: 1, Reserved: 1, Stuck: 1,
			OldestPendingAt: time.Unix(sec(45).Unix(), 0), OldestPendingAge: 120 * time.Second, Failed: 2},
		{Queue: "emails", Failed: 1},
		{Queue: "reports", Size: 1, Pending: 1, OldestPendingAt: time.Unix(sec(165).Unix(), 0)},
	}
	if diff := cmp.Diff(want, rep.Queues); diff != "" {
		t.Errorf("queues (-want +got):\n%s", diff)
	}
	breaches := rep.Check(triage.Thresholds{MaxSize: 3, MaxAge: 2 * time.Minute, MaxFailed: 3})
	var got []string
	for _, b := range breaches {
		got = append(got, b.String())
	}
	wantB := []string{"queue default: size 3 ≥ 3", "queue default: oldest_pending_age 2m0s ≥ 2m0s", "all monitored queues: failed 3 ≥ 3 in 1m0s"}
	if diff := cmp.Diff(wantB, got); diff != "" {
		t.Errorf("breaches (-want +got):\n%s", diff)
	}
	if b := rep.Check(triage.Thresholds{MaxSize: 4, MaxAge: 121 * time.Second, MaxFailed: 4}); len(b) != 0 {
		t.Errorf("healthy check breached: %v", b)
	}
}

func TestMonitorNamedQueues(t *testing.T) {
	s := seeded(t)
	refs, _ := triage.ParseQueueRefs([]string{"database:emails,redis:emails,default,absent"})
	rep, err := triage.Monitor(context.Background(), s, triage.MonitorParams{Queues: refs, Now: sec(165), RetryAfter: 90 * time.Second, Window: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, q := range rep.Queues {
		got = append(got, fmt.Sprintf("%s:%s size=%d failed=%d", q.Connection, q.Queue, q.Size, q.Failed))
	}
	// In the order asked for.
	want := []string{"database:emails size=0 failed=0", "redis:emails size=0 failed=1", ":default size=3 failed=4", ":absent size=0 failed=0"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if rep.Failed != 5 {
		t.Errorf("total failed %d, want 5", rep.Failed)
	}
	if _, err := triage.Monitor(context.Background(), s, triage.MonitorParams{Now: sec(165)}); !errors.Is(err, triage.ErrInvalidInput) {
		t.Errorf("zero window: %v", err)
	}
}

// fillFailed puts n old failures (a day before base) and 50 in the last
// minute into a SQLite failed_jobs, with one statement.
func fillFailed(b *testing.B, s *sqlstore.Store, n int) {
	b.Helper()
	payload := `{"uuid":"u","displayName":"App\\Jobs\\A","job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"App\\Jobs\\A"}}`
	exc := "RuntimeException: boom in /app/X.php:1\nStack trace:\n#0 {main}"
	old := base.Add(-24 * time.Hour).Format("2006-01-02 15:04:05")
	if _, err := s.DB().Exec(`WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM seq WHERE i < ?)
		INSERT INTO failed_jobs (uuid, connection, queue, payload, exception, failed_at)
		SELECT 'old-' || i, 'database', 'default', ?, ?, ? FROM seq`, n, payload, exc, old); err != nil {
		b.Fatal(err)
	}
	var fx []sqltest.FailedFixture
	for i := range 50 {
		fx = append(fx, failure(i, "database", "default", `App\Jobs\A`, base.Add(-time.Duration(i)*time.Second)))
	}
	sqltest.InsertFailed(b, s, fx...)
}

// BenchmarkMonitor times one check (jobs counts + the failure window) and
// one watch tick (new rows by id) on 10,000 and 1,000,000 failed_jobs rows:
// both must cost about the same, as neither reads outside the window.
//
//	go test ./triage -run '^$' -bench Monitor -benchtime 200x
func BenchmarkMonitor(b *testing.B) {
	for _, n := range []int{10_000, 1_000_000} {
		s := sqltest.OpenLaravel(b, "sqlite", sqlstore.SchemaLaravel8, time.UTC)
		fillFailed(b, s, n)
		ctx := context.Background()
		b.Run(fmt.Sprintf("check/rows=%d", n), func(b *testing.B) {
			for range b.N {
				rep, err := triage.Monitor(ctx, s, triage.MonitorParams{Now: base, RetryAfter: 90 * time.Second, Window: time.Minute})
				if err != nil || rep.Failed != 50 {
					b.Fatalf("failed %d, %v", rep.Failed, err)
				}
			}
		})
		b.Run(fmt.Sprintf("tick/rows=%d", n), func(b *testing.B) {
			last, err := s.MaxFailedID(ctx)
			if err != nil {
				b.Fatal(err)
			}
			for range b.N {
				// A watch tick: the rows above the high-water mark (watch.Source.After).
				if err := s.ScanFailed(ctx, triage.ScanParams{AfterID: last, Ascending: true}, func(*triage.FailedRow) error { return nil }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
