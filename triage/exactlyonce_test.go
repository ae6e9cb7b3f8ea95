package triage_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
	"github.com/jobtriage/jobtriage/triage/triagetest"
)

// onceBackend queues each move once by PushKey, as the QueueBackend contract
// says, and reports its queue through JobStates. Its first doubts pushes
// answer ErrInDoubt after queueing (the reply was lost); -1: every push.
type onceBackend struct {
	mu     sync.Mutex
	keys   map[string]bool
	queued []string // uuids, in push order
	doubts int
	pushes int
}

func (b *onceBackend) Describe() string { return "once://redis" }
func (b *onceBackend) Close() error     { return nil }
func (b *onceBackend) Stats(context.Context, triage.QueueStatsParams) ([]triage.QueueStats, error) {
	return nil, nil
}

func (b *onceBackend) Push(_ context.Context, moves []triage.Move, _ time.Time) (triage.PushResult, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pushes++
	if b.keys == nil {
		b.keys = map[string]bool{}
	}
	var res triage.PushResult
	for _, m := range moves {
		if b.keys[m.PushKey()] {
			res.Already++
			continue
		}
		b.keys[m.PushKey()] = true
		b.queued = append(b.queued, m.UUID)
		res.Pushed++
	}
	if b.doubts != 0 {
		b.doubts--
		return triage.PushResult{}, fmt.Errorf("the Redis server stopped answering: %w", triage.ErrInDoubt)
	}
	return res, nil
}

func (b *onceBackend) JobStates(_ context.Context, p triage.JobStatesParams) (triage.JobStates, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := triage.JobStates{ByUUID: map[string]triage.JobState{}}
	for _, u := range b.queued {
		out.ByUUID[u] = triage.JobWaiting
	}
	return out, nil
}

func (b *onceBackend) uuids() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.queued)
}

func uuidN(i int) string { return fmt.Sprintf("%08d-0000-4000-8000-000000000000", i) }

// onceService has n failed jobs, uuids uuidN(1..n), on connection conn:
// "database" (the local jobs table) or "redis" (b).
func onceService(n int, conn string, b triage.QueueBackend) (*triage.Service, *triagetest.Store) {
	svc, store := newFakeService()
	for i := 1; i <= n; i++ {
		store.Add(triagetest.Row{UUID: uuidN(i), Connection: conn, Queue: "default", Payload: payloadOf(uuidN(i), ""),
			Exception: "RuntimeException: boom", FailedAt: "2026-11-30 23:00:00"})
	}
	svc.Router = triage.NewRouter(map[string]triage.Route{"redis": {Driver: triage.DriverRedis, Backend: b}}, []string{"database"}, nil)
	return svc, store
}

// A uuid already waiting (an interrupted artisan queue:retry pushed it and
// never forgot its row) is not pushed again, locally or to a backend: its
// row is only deleted, and the result names it.
func TestRetrySkipsPushOfAUUIDAlreadyQueued(t *testing.T) {
	ctx := context.Background()
	t.Run("jobs table", func(t *testing.T) {
		svc, store := onceService(3, "database", nil)
		if _, err := svc.Retry(ctx, triage.RetryParams{Refs: []triage.Ref{{UUID: uuidN(2)}}}); err != nil {
			t.Fatal(err)
		}
		store.Add(triagetest.Row{UUID: uuidN(2), Connection: "database", Queue: "default", Payload: payloadOf(uuidN(2), ""),
			Exception: "RuntimeException: boom", FailedAt: "2026-11-30 23:00:00"})
		res, err := svc.Retry(ctx, triage.RetryParams{All: true})
		if err != nil {
			t.Fatal(err)
		}
		var jobs []string
		for _, j := range store.Jobs() {
			jobs = append(jobs, j.UUID)
		}
		if want := []string{uuidN(2), uuidN(1), uuidN(3)}; !slices.Equal(jobs, want) {
			t.Errorf("jobs = %v, want %v (each once)", jobs, want)
		}
		if res.Retried != 3 || !slices.Equal(res.AlreadyQueued, []string{uuidN(2)}) || store.Len() != 0 {
			t.Errorf("retried %d, already queued %v, %d left in failed_jobs; want 3, [%s], 0", res.Retried, res.AlreadyQueued, store.Len(), uuidN(2))
		}
	})
	t.Run("backend", func(t *testing.T) {
		b := &onceBackend{keys: map[string]bool{}, queued: []string{uuidN(2)}}
		svc, store := onceService(3, "redis", b)
		res, err := svc.Retry(ctx, triage.RetryParams{All: true})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := b.uuids(), []string{uuidN(2), uuidN(1), uuidN(3)}; !slices.Equal(got, want) {
			t.Errorf("queue = %v, want %v (each once)", got, want)
		}
		if res.Retried != 3 || !slices.Equal(res.AlreadyQueued, []string{uuidN(2)}) || store.Len() != 0 {
			t.Errorf("retried %d, already queued %v, %d left in failed_jobs", res.Retried, res.AlreadyQueued, store.Len())
		}
	})
}

// A push whose answer was lost (it ran) is pushed again until the backend
// answers, which finds it pushed: the rows are deleted, each job queued once.
func TestRetryResolvesAPushInDoubt(t *testing.T) {
	b := &onceBackend{doubts: 1}
	svc, store := onceService(3, "redis", b)
	res, err := svc.Retry(context.Background(), triage.RetryParams{All: true})
	if err != nil {
		t.Fatalf("the push in doubt was not resolved: %v", err)
	}
	if got := b.uuids(); len(got) != 3 || res.Retried != 3 || store.Len() != 0 || b.pushes != 2 {
		t.Errorf("queue %v, retried %d, %d left in failed_jobs, %d pushes; want 3 jobs once, 3, 0, 2", got, res.Retried, store.Len(), b.pushes)
	}
}

// A push still in doubt after ResolveWait ends the run with the rows in
// failed_jobs and the exact command that reconciles them.
func TestRetryNamesAPushStillInDoubt(t *testing.T) {
	b := &onceBackend{doubts: -1}
	svc, store := onceService(2, "redis", b)
	_, err := svc.Retry(context.Background(), triage.RetryParams{All: true, ResolveWait: 1200 * time.Millisecond})
	var doubt *triage.PushInDoubt
	if !errors.As(err, &doubt) || !errors.Is(err, triage.ErrInDoubt) {
		t.Fatalf("err = %v, want a PushInDoubt", err)
	}
	if !strings.Contains(err.Error(), "jobtriage retry 1 2 ") || store.Len() != 2 || b.pushes < 2 {
		t.Errorf("err %q, %d left in failed_jobs, %d pushes; want the command, 2, tried again", err, store.Len(), b.pushes)
	}
}

// On every database, a uuid already in the jobs table beside failed_jobs
// (artisan queue:retry pushed it, then was interrupted before it forgot the
// row) is not inserted again: its row is deleted, the others move.
func TestRetryLocalSkipsAUUIDAlreadyInJobs(t *testing.T) {
	forEachDriver(t, func(t *testing.T, driver string) {
		svc, store := newService(t, driver)
		for i := 1; i <= 3; i++ {
			u := uuidN(i)
			sqltest.InsertFailed(t, store, sqltest.FailedFixture{UUID: &u, Connection: "database", Queue: "default", Payload: payloadOf(u, ""),
				Exception: "RuntimeException: boom", FailedAt: "2026-11-30 23:00:00"})
		}
		db := store.DB()
		if _, err := db.Exec(db.Rebind("INSERT INTO jobs (queue, attempts, reserved_at, available_at, created_at, payload) VALUES ('default', 0, NULL, 1, 1, ?)"),
			payloadOf(uuidN(2), "")); err != nil {
			t.Fatal(err)
		}
		res, err := svc.Retry(context.Background(), triage.RetryParams{All: true})
		if err != nil {
			t.Fatal(err)
		}
		var payloads []string
		if err := db.Select(&payloads, "SELECT payload FROM jobs ORDER BY id"); err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		for _, p := range payloads {
			seen[gjson.Get(p, "uuid").String()]++
		}
		if len(payloads) != 3 || len(seen) != 3 || res.Retried != 3 || !slices.Equal(res.AlreadyQueued, []string{uuidN(2)}) {
			t.Errorf("jobs by uuid %v, retried %d, already queued %v; want each of 3 once, 3, [%s]", seen, res.Retried, res.AlreadyQueued, uuidN(2))
		}
		if n, _ := store.Count(context.Background(), triage.Filter{}); n != 0 {
			t.Errorf("%d rows left in failed_jobs", n)
		}
	})
}
