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
	"github.com/jobtriage/jobtriage/triage/sqlstore"
)

// scriptedBackend is a Redis stand-in whose pushes can fail: fail says,
// for the n-th call (from 1), which error to return instead of pushing.
type scriptedBackend struct {
	mu     sync.Mutex
	calls  int
	pushed []string // uuids, in push order
	fail   func(call int) error
}

func (b *scriptedBackend) Describe() string { return "scripted://redis" }
func (b *scriptedBackend) Close() error     { return nil }
func (b *scriptedBackend) Stats(context.Context, triage.QueueStatsParams) ([]triage.QueueStats, error) {
	return nil, nil
}

func (b *scriptedBackend) Push(_ context.Context, moves []triage.Move, _ time.Time) (triage.PushResult, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	if b.fail != nil {
		if err := b.fail(b.calls); err != nil {
			return triage.PushResult{}, err
		}
	}
	for _, m := range moves {
		if gjson.GetBytes(m.Payload, "attempts").Raw != "0" {
			return triage.PushResult{}, fmt.Errorf("%s pushed with attempts %s", m.UUID, gjson.GetBytes(m.Payload, "attempts").Raw)
		}
		b.pushed = append(b.pushed, m.UUID)
	}
	return triage.PushResult{Pushed: len(moves)}, nil
}

// insertRedisRows fills failed_jobs with n Redis jobs on two interleaved
// queues, every skipEvery-th (if > 0) on a connection jobtriage cannot
// write to; it returns the uuids of the writable ones, in id order, and of
// the others.
func insertRedisRows(t *testing.T, s *sqlstore.Store, n, skipEvery int) (movable, stay []string) {
	t.Helper()
	db := s.DB()
	const perInsert = 250
	for i := 0; i < n; i += perInsert {
		var marks []string
		var args []any
		for k := i; k < min(i+perInsert, n); k++ {
			u := fmt.Sprintf("00000000-0000-4000-8000-%012d", k)
			conn := "redis"
			if skipEvery > 0 && k%skipEvery == skipEvery-1 {
				conn = "gone"
				stay = append(stay, u)
			} else {
				movable = append(movable, u)
			}
			queue := []string{"default", "emails"}[k%2]
			payload := payloadOf(u, `,"id":"r`+fmt.Sprint(k)+`","attempts":`+fmt.Sprint(1+k%3))
			marks = append(marks, "(?, ?, ?, ?, ?, ?)")
			args = append(args, u, conn, queue, payload, "RuntimeException: x in /a.php:1", "2026-11-30 23:00:00")
		}
		q := "INSERT INTO failed_jobs (uuid, connection, queue, payload, exception, failed_at) VALUES " + strings.Join(marks, ", ")
		if _, err := db.Exec(db.Rebind(q), args...); err != nil {
			t.Fatal(err)
		}
	}
	return movable, stay
}

func redisService(t *testing.T, driver string, b triage.QueueBackend) (*triage.Service, *sqlstore.Store) {
	svc, store := newService(t, driver)
	svc.Router = triage.NewRouter(map[string]triage.Route{
		"database": {Driver: triage.DriverDatabase, Local: true},
		"redis":    {Driver: triage.DriverRedis, Backend: b},
	}, nil, nil)
	return svc, store
}

// failedUUIDs are the uuids left in failed_jobs.
func failedUUIDs(t *testing.T, s *sqlstore.Store) map[string]bool {
	t.Helper()
	var us []string
	if err := s.DB().Select(&us, "SELECT uuid FROM failed_jobs"); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, u := range us {
		out[u] = true
	}
	return out
}

// drain runs a retry batch by batch and gathers what its batches report:
// their ids and skipped ids, and the count after each.
func drain(svc *triage.Service, p triage.RetryParams) (res triage.RetryResult, ids, skips []string, progress []int, err error) {
	ctx := context.Background()
	run := svc.StartRetry(ctx, p)
	defer run.Close()
	for run.Next(ctx) {
		b := run.Batch()
		ids = append(ids, b.IDs...)
		for _, s := range b.Skips {
			skips = append(skips, s.ID)
		}
		progress = append(progress, b.Retried)
	}
	return run.Result(), ids, skips, progress, run.Err()
}

// TestRetryManyBatchesToRedis: a retry of several batches to a remote
// backend (overlapped where the store can take a batch while the previous
// one is pushed) pushes every job once and in id order, reports every
// batch's ids and skips once and in order, and leaves exactly the skipped
// rows.
func TestRetryManyBatchesToRedis(t *testing.T) {
	forEachDriver(t, func(t *testing.T, driver string) {
		b := &scriptedBackend{}
		svc, store := redisService(t, driver, b)
		n := 2*triage.WriteBatch + 7
		movable, stay := insertRedisRows(t, store, n, 97)
		res, reported, skips, progress, err := drain(svc, triage.RetryParams{All: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.Retried != len(movable) || strings.Join(b.pushed, ",") != strings.Join(movable, ",") {
			t.Fatalf("retried %d, pushed %d jobs; want %d, each once in id order", res.Retried, len(b.pushed), len(movable))
		}
		if strings.Join(reported, ",") != strings.Join(movable, ",") || strings.Join(skips, ",") != strings.Join(stay, ",") {
			t.Fatalf("OnBatch got %d ids and %d skips, want %d and %d, each once in order", len(reported), len(skips), len(movable), len(stay))
		}
		if len(progress) < 3 || progress[len(progress)-1] != len(movable) {
			t.Fatalf("progress %v, want one per batch ending at %d", progress, len(movable))
		}
		for i := 1; i < len(progress); i++ {
			if progress[i] < progress[i-1] {
				t.Fatalf("progress went back: %v", progress)
			}
		}
		left := failedUUIDs(t, store)
		if len(left) != len(stay) {
			t.Fatalf("%d rows left in failed_jobs, want the %d skipped", len(left), len(stay))
		}
		for _, u := range stay {
			if !left[u] {
				t.Fatalf("skipped %s is not in failed_jobs", u)
			}
		}
	})
}

// TestRetryToRedisStopsAtFailedPush: a push that fails for good ends the
// retry with its error; what was reported retried is exactly what left
// failed_jobs and was pushed, and the rest stays.
func TestRetryToRedisStopsAtFailedPush(t *testing.T) {
	forEachDriver(t, func(t *testing.T, driver string) {
		down := errors.New("redis is down")
		b := &scriptedBackend{fail: func(call int) error {
			if call >= 3 {
				return down
			}
			return nil
		}}
		svc, store := redisService(t, driver, b)
		n := 4*triage.WriteBatch + 3
		movable, _ := insertRedisRows(t, store, n, 0)
		res, reported, _, _, err := drain(svc, triage.RetryParams{All: true})
		if !errors.Is(err, down) {
			t.Fatalf("Retry = %v, want the push error", err)
		}
		if res.Retried != len(reported) || len(reported) != len(b.pushed) || len(reported) == 0 {
			t.Fatalf("retried %d, reported %d, pushed %d: want the same, not 0", res.Retried, len(reported), len(b.pushed))
		}
		left := failedUUIDs(t, store)
		if len(left)+len(reported) != len(movable) {
			t.Fatalf("%d left + %d retried != %d", len(left), len(reported), len(movable))
		}
		for _, u := range reported {
			if left[u] {
				t.Fatalf("%s reported retried but still in failed_jobs", u)
			}
		}
	})
}

// TestRetryToRedisRunsAConflictAgain: a batch whose push reports a
// conflict is rolled back and run again; every job ends pushed once.
func TestRetryToRedisRunsAConflictAgain(t *testing.T) {
	forEachDriver(t, func(t *testing.T, driver string) {
		b := &scriptedBackend{fail: func(call int) error {
			if call == 2 {
				return fmt.Errorf("%w: deadlock in the other store", triage.ErrConflict)
			}
			return nil
		}}
		svc, store := redisService(t, driver, b)
		n := 3*triage.WriteBatch + 11
		movable, _ := insertRedisRows(t, store, n, 0)
		res, reported, _, _, err := drain(svc, triage.RetryParams{All: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.Retried != len(movable) || len(b.pushed) != len(movable) || len(reported) != len(movable) {
			t.Fatalf("retried %d, pushed %d, reported %d; want %d each", res.Retried, len(b.pushed), len(reported), len(movable))
		}
		seen := map[string]bool{}
		for _, u := range b.pushed {
			if seen[u] {
				t.Fatalf("%s pushed twice", u)
			}
			seen[u] = true
		}
		if left := failedUUIDs(t, store); len(left) != 0 {
			t.Fatalf("%d rows left in failed_jobs", len(left))
		}
	})
}

// TestRetryToRedisLimit: --limit stops a multi-batch retry at exactly
// that many jobs.
func TestRetryToRedisLimit(t *testing.T) {
	forEachDriver(t, func(t *testing.T, driver string) {
		b := &scriptedBackend{}
		svc, store := redisService(t, driver, b)
		movable, _ := insertRedisRows(t, store, 3*triage.WriteBatch, 0)
		limit := triage.WriteBatch + 5
		res, err := svc.Retry(context.Background(), triage.RetryParams{All: true, Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		if res.Retried != limit || strings.Join(b.pushed, ",") != strings.Join(movable[:limit], ",") {
			t.Fatalf("retried %d, pushed %d; want the first %d", res.Retried, len(b.pushed), limit)
		}
		if left := failedUUIDs(t, store); len(left) != len(movable)-limit {
			t.Fatalf("%d rows left, want %d", len(left), len(movable)-limit)
		}
	})
}

// checkedBackend records each move's payload and whether the retry marked
// it checked for Redis.
type checkedBackend struct {
	scriptedBackend
	unchecked []string
}

func (b *checkedBackend) Push(ctx context.Context, moves []triage.Move, now time.Time) (triage.PushResult, error) {
	for _, m := range moves {
		if !m.RedisChecked {
			b.unchecked = append(b.unchecked, m.UUID)
		}
	}
	return b.scriptedBackend.Push(ctx, moves, now)
}

// TestRetryToRedisSkipsUncheckablePayloads: a Redis job whose payload has
// an "id" that is null or empty, or repeats "id" or "attempts" (which Lua's
// cjson reads as the last one), is skipped with its reason and stays in
// failed_jobs, while the rest go, each marked checked (the backend then
// trusts it: Move.RedisChecked). Such a row used to reach the backend,
// which refused the whole push.
func TestRetryToRedisSkipsUncheckablePayloads(t *testing.T) {
	forEachDriver(t, func(t *testing.T, driver string) {
		b := &checkedBackend{}
		svc, store := redisService(t, driver, b)
		extras := map[string]string{
			"00000000-0000-4000-8000-000000000001": `,"id":"a","attempts":1`,
			"00000000-0000-4000-8000-000000000002": `,"id":null,"attempts":1`,
			"00000000-0000-4000-8000-000000000003": `,"id":"","attempts":1`,
			"00000000-0000-4000-8000-000000000004": `,"id":"b","attempts":1,"attempts":"x"`,
			"00000000-0000-4000-8000-000000000005": `,"id":"c","attempts":2,"\u0069d":"d"`,
			"00000000-0000-4000-8000-000000000006": ``,
		}
		db := store.DB()
		for u, extra := range extras {
			if _, err := db.Exec(db.Rebind("INSERT INTO failed_jobs (uuid, connection, queue, payload, exception, failed_at) VALUES (?, 'redis', 'default', ?, 'RuntimeException: x in /a.php:1', '2026-11-30 23:00:00')"),
				u, payloadOf(u, extra)); err != nil {
				t.Fatal(err)
			}
		}
		res, err := svc.Retry(context.Background(), triage.RetryParams{All: true})
		if err != nil {
			t.Fatal(err)
		}
		reasons := map[string]string{}
		for _, s := range res.Skipped {
			reasons[s.ID] = s.Code + ": " + s.Reason
		}
		for _, n := range []string{"2", "3", "4", "5"} {
			u := "00000000-0000-4000-8000-00000000000" + n
			if !strings.HasPrefix(reasons[u], triage.SkipMalformed+": payload") {
				t.Errorf("%s: skipped %q, want a malformed-payload skip", u, reasons[u])
			}
		}
		slices.Sort(b.pushed)
		if res.Retried != 2 || strings.Join(b.pushed, ",") != "00000000-0000-4000-8000-000000000001,00000000-0000-4000-8000-000000000006" {
			t.Errorf("retried %d, pushed %v; want the two checkable jobs", res.Retried, b.pushed)
		}
		if len(b.unchecked) > 0 {
			t.Errorf("moves not marked checked: %v", b.unchecked)
		}
		if left := failedUUIDs(t, store); len(left) != 4 {
			t.Errorf("%d rows left in failed_jobs, want the 4 skipped", len(left))
		}
	})
}

// TestRetryRunStoppedPushesNoMore: a caller that stops after one batch (a
// breaker) has pushed that batch and nothing else, even where the run
// took the next batch while this one was pushed: Close puts the held
// batch back in failed_jobs, whole.
func TestRetryRunStoppedPushesNoMore(t *testing.T) {
	forEachDriver(t, func(t *testing.T, driver string) {
		b := &scriptedBackend{}
		svc, store := redisService(t, driver, b)
		n := 3 * triage.WriteBatch
		movable, _ := insertRedisRows(t, store, n, 0)
		ctx := context.Background()
		run := svc.StartRetry(ctx, triage.RetryParams{All: true})
		if !run.Next(ctx) {
			t.Fatalf("no first batch: %v", run.Err())
		}
		first := run.Batch()
		run.Close()
		if run.Next(ctx) || run.More() || run.Err() != nil {
			t.Fatalf("a closed run goes on: %v", run.Err())
		}
		if len(first.IDs) == 0 || len(b.pushed) != len(first.IDs) || run.Result().Retried != len(first.IDs) ||
			strings.Join(b.pushed, ",") != strings.Join(movable[:len(first.IDs)], ",") {
			t.Fatalf("batch of %d, pushed %d, retried %d: want the first batch only", len(first.IDs), len(b.pushed), run.Result().Retried)
		}
		if left := failedUUIDs(t, store); len(left) != n-len(first.IDs) {
			t.Fatalf("%d rows left in failed_jobs, want %d", len(left), n-len(first.IDs))
		}
		// Nothing of the run holds a row: the next retry moves the rest.
		rest, err := svc.Retry(ctx, triage.RetryParams{All: true})
		if err != nil || rest.Retried != n-len(first.IDs) || len(b.pushed) != n {
			t.Fatalf("the rest: retried %d of %d, pushed %d in all: %v", rest.Retried, n-len(first.IDs), len(b.pushed), err)
		}
	})
}

// TestRetryToRedisNeverPushesARowItCannotDelete: a row failed_jobs will not
// let go (PostgreSQL: a trigger returning NULL; SQLite: RAISE(IGNORE);
// MySQL: a trigger's SIGNAL) in the middle of an overlapped many-batch
// retry is skipped and named, never pushed; every other job is pushed once.
func TestRetryToRedisNeverPushesARowItCannotDelete(t *testing.T) {
	forEachDriver(t, func(t *testing.T, driver string) {
		b := &scriptedBackend{}
		svc, store := redisService(t, driver, b)
		movable, _ := insertRedisRows(t, store, 2*triage.WriteBatch+7, 0)
		held := movable[triage.WriteBatch+3]
		hold := map[string][]string{
			"postgres": {`CREATE FUNCTION hold() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF OLD.uuid = '` + held + `' THEN RETURN NULL; END IF; RETURN OLD; END $$`,
				"CREATE TRIGGER hold BEFORE DELETE ON failed_jobs FOR EACH ROW EXECUTE FUNCTION hold()"},
			"mysql":  {"CREATE TRIGGER hold BEFORE DELETE ON failed_jobs FOR EACH ROW BEGIN IF OLD.uuid = '" + held + "' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'held'; END IF; END"},
			"sqlite": {"CREATE TRIGGER hold BEFORE DELETE ON failed_jobs WHEN OLD.uuid = '" + held + "' BEGIN SELECT RAISE(IGNORE); END"},
		}[driver]
		for _, q := range hold {
			if _, err := store.DB().Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		res, _, skips, _, err := drain(svc, triage.RetryParams{All: true})
		if err != nil {
			t.Fatal(err)
		}
		want := slices.DeleteFunc(slices.Clone(movable), func(u string) bool { return u == held })
		if res.Retried != len(want) || strings.Join(b.pushed, ",") != strings.Join(want, ",") || !slices.Equal(skips, []string{held}) {
			t.Fatalf("retried %d, pushed %d, skipped %v; want %d pushed once each, %s skipped", res.Retried, len(b.pushed), skips, len(want), held)
		}
		if left := failedUUIDs(t, store); len(left) != 1 || !left[held] {
			t.Fatalf("left in failed_jobs: %v", left)
		}
	})
}
