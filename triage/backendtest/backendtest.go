// Package backendtest is the conformance suite every triage.QueueBackend
// passes: pushes queue each payload once, verbatim and in order; a repeated
// push (the re-run after a crash between push and delete) queues nothing
// twice; counts match what was pushed and consumed; interrupted pushes
// complete exactly once when run again. A backend's test supplies a Harness
// that opens the backend on a fresh store and reads it as Laravel's worker.
package backendtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/jobtriage/jobtriage/triage"
)

// Harness opens a backend under test.
type Harness struct {
	// Open returns a backend on a fresh, empty store and a Queue reading the
	// same store. Open registers the cleanup of both with t.Cleanup.
	Open func(t *testing.T) (triage.QueueBackend, Queue)
	// RemembersConsumed: the backend keeps a record of every pushed uuid
	// that outlives the job itself (Redis markers, the SQL ledger), so a
	// re-run does not queue a job a worker already ran. Without it the
	// suite asserts the opposite — the documented window in which a re-run
	// queues such a job again — so the flag cannot be wrong silently.
	RemembersConsumed bool
}

// Queue reads and works a backend's store directly, as a worker does:
// Queued are the payloads waiting on queue in the order a worker takes
// them, Consume runs the next job (pop, then delete), Reserve starts it
// (pop: reserved, not yet deleted).
type Queue interface {
	Queued(t *testing.T, queue string) [][]byte
	Consume(t *testing.T, queue string)
	Reserve(t *testing.T, queue string)
}

// Sizes of the suite's pushes.
const (
	smallBatch = 40   // the ordinary push: a few jobs over two queues
	LargeBatch = 5000 // the flat-memory case's one call
	// largePayload is near a real job with a serialized model and hooks.
	largePayload = 2048
	// memoryShare bounds the heap a push may add to 1/memoryShare of its
	// payload bytes. A backend that copied the batch would need all of it
	// and more; a half was too tight for PostgreSQL's COPY path, whose
	// sampled peak varied from 20 % to 64 % (garbage, not a copy).
	memoryShare     = 1
	heapSampleEvery = time.Millisecond
	retryAfter      = 90 * time.Second // Laravel's default, for Stats
	lowGCPercent    = 10               // so garbage neither hides nor fakes a peak
)

// Queue names the suite pushes to.
const (
	queueA = "default"
	queueB = "emails"
	queueC = "empty"
)

// Run runs every case, each on a fresh backend.
func Run(t *testing.T, h Harness) {
	t.Helper()
	cases := []struct {
		name string
		fn   func(*testing.T, Harness, triage.QueueBackend, Queue, time.Time)
	}{
		{"PushKeepsBytesAndOrder", testPush},
		{"PushAgainQueuesNothingTwice", testPushAgain},
		{"DuplicateUUIDInOneCall", testDuplicateInCall},
		{"ConsumedThenPushedAgain", testConsumedThenPushed},
		{"Stats", testStats},
		{"EmptyUUID", testEmptyUUID},
		{"LargeBatchFlatMemory", testLargeBatch},
		{"CancelMidPushThenRerun", testCancel},
		{"JobStates", testJobStates},
		{"FailedAgainIsPushedAgain", testFailedAgain},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, q := h.Open(t)
			c.fn(t, h, b, q, now())
		})
	}
}

// now is the suite's clock: whole seconds, as both Laravel stores keep them.
func now() time.Time { return time.Now().Truncate(time.Second) }

// NewUUID returns a random (version 4) uuid.
func NewUUID() string { return uuid.NewString() }

// Payload is a payload as RedisQueue writes it (id and attempts appended,
// which the database queue accepts too), padded by pad bytes. Its bytes
// exercise what must never be re-encoded: escaped slashes, a NUL property
// marker, non-ASCII text.
func Payload(uuid string, created time.Time, pad int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"uuid":%q,"displayName":"App\\Jobs\\Résumé","job":"Illuminate\\Queue\\CallQueuedHandler@call",`, uuid)
	b.WriteString(`"maxTries":3,"maxExceptions":null,"failOnTimeout":false,"backoff":"10,60","timeout":120,"retryUntil":null,`)
	b.WriteString(`"data":{"commandName":"App\\Jobs\\Résumé","command":"O:18:\"App\\Jobs\\R\u00e9sum\u00e9\":1:{s:9:\"\u0000*\u0000url\";s:20:\"https:\/\/example.com\/`)
	b.WriteString(strings.Repeat("x", max(0, pad)))
	fmt.Fprintf(&b, `\";}"},"createdAt":%d,"delay":null,"id":%q,"attempts":0}`, created.Unix(), strings.ReplaceAll(uuid, "-", ""))
	return b.Bytes()
}

// moves makes n moves alternating over the queues, each with a fresh uuid.
func moves(n int, at time.Time, pad int, queues ...string) []triage.Move {
	out := make([]triage.Move, n)
	for i := range out {
		u := NewUUID()
		out[i] = triage.Move{UUID: u, Queue: queues[i%len(queues)], Payload: Payload(u, at, pad), Connection: "conformance"}
	}
	return out
}

// want is what each queue should hold after moves were pushed once.
func want(ms []triage.Move) map[string][][]byte {
	out := map[string][][]byte{}
	for _, m := range ms {
		out[m.Queue] = append(out[m.Queue], m.Payload)
	}
	return out
}

// expectQueued checks each queue holds exactly these payloads, in order.
func expectQueued(t *testing.T, q Queue, exp map[string][][]byte, queues ...string) {
	t.Helper()
	for _, name := range queues {
		got := q.Queued(t, name)
		w := exp[name]
		if len(got) != len(w) {
			t.Fatalf("queue %s holds %d jobs, want %d", name, len(got), len(w))
		}
		for i := range w {
			if !bytes.Equal(got[i], w[i]) {
				t.Fatalf("queue %s job %d differs:\n got %.200q\nwant %.200q", name, i, got[i], w[i])
			}
		}
	}
}

func push(t *testing.T, b triage.QueueBackend, ms []triage.Move, at time.Time) triage.PushResult {
	t.Helper()
	res, err := b.Push(context.Background(), ms, at)
	if err != nil {
		t.Fatalf("Push: %v", err)
	}
	return res
}

func expectResult(t *testing.T, got triage.PushResult, pushed, already int) {
	t.Helper()
	if got.Pushed != pushed || got.Already != already {
		t.Fatalf("Push = %+v, want Pushed %d, Already %d", got, pushed, already)
	}
}

func testPush(t *testing.T, h Harness, b triage.QueueBackend, q Queue, at time.Time) {
	ms := moves(smallBatch, at, 0, queueA, queueB)
	expectResult(t, push(t, b, ms, at), len(ms), 0)
	expectQueued(t, q, want(ms), queueA, queueB)
	if d := b.Describe(); d == "" {
		t.Error("Describe is empty")
	}
}

func testPushAgain(t *testing.T, h Harness, b triage.QueueBackend, q Queue, at time.Time) {
	ms := moves(smallBatch, at, 0, queueA, queueB)
	expectResult(t, push(t, b, ms, at), len(ms), 0)
	// The re-run after a crash between push and delete: the same moves.
	expectResult(t, push(t, b, ms, at.Add(time.Minute)), 0, len(ms))
	expectQueued(t, q, want(ms), queueA, queueB)
	// Half of them again, mixed with new ones: only the new ones go.
	fresh := moves(smallBatch/2, at, 0, queueA, queueB)
	mixed := append(append([]triage.Move{}, ms[:smallBatch/2]...), fresh...)
	expectResult(t, push(t, b, mixed, at), len(fresh), smallBatch/2)
	expectQueued(t, q, want(append(append([]triage.Move{}, ms...), fresh...)), queueA, queueB)
}

func testDuplicateInCall(t *testing.T, h Harness, b triage.QueueBackend, q Queue, at time.Time) {
	ms := moves(2, at, 0, queueA)
	dup := []triage.Move{ms[0], ms[1], ms[0]}
	expectResult(t, push(t, b, dup, at), 2, 1)
	expectQueued(t, q, want(ms), queueA)
}

func testConsumedThenPushed(t *testing.T, h Harness, b triage.QueueBackend, q Queue, at time.Time) {
	ms := moves(smallBatch, at, 0, queueA)
	expectResult(t, push(t, b, ms, at), len(ms), 0)
	// Workers ran the first few jobs, then the crashed run is repeated.
	const ran = smallBatch / 4
	for range ran {
		q.Consume(t, queueA)
	}
	res := push(t, b, ms, at)
	if h.RemembersConsumed {
		expectResult(t, res, 0, len(ms))
		expectQueued(t, q, want(ms[ran:]), queueA)
		return
	}
	// The documented window of a backend without a record: the jobs that
	// already ran are queued again, at the tail.
	expectResult(t, res, ran, len(ms)-ran)
	expectQueued(t, q, want(append(append([]triage.Move{}, ms[ran:]...), ms[:ran]...)), queueA)
	t.Logf("documented window: without a push record, %d jobs that had already run were queued again by the re-run", ran)
}

func testStats(t *testing.T, h Harness, b triage.QueueBackend, q Queue, at time.Time) {
	const onA, onB, ran = 7, 5, 3
	ms := append(moves(onA, at, 0, queueA), moves(onB, at, 0, queueB)...)
	expectResult(t, push(t, b, ms, at), onA+onB, 0)
	for range ran {
		q.Consume(t, queueA)
	}
	stats, err := b.Stats(context.Background(), triage.QueueStatsParams{
		Queues: []string{queueB, queueA, queueC}, Now: at, RetryAfter: retryAfter})
	if err != nil {
		t.Fatalf("Stats: %v", err)
	}
	byQueue := map[string]triage.QueueStats{}
	for _, s := range stats {
		if _, dup := byQueue[s.Queue]; dup {
			t.Fatalf("Stats reports queue %s twice", s.Queue)
		}
		byQueue[s.Queue] = s
	}
	for name, n := range map[string]int64{queueA: onA - ran, queueB: onB, queueC: 0} {
		s, ok := byQueue[name]
		if !ok {
			if n != 0 {
				t.Fatalf("Stats lacks queue %s", name)
			}
			continue // an empty queue may be absent (the SQL stores) or zero
		}
		if s.Size != n || s.Pending != n || s.Delayed != 0 || s.Reserved != 0 || s.Stuck != 0 {
			t.Errorf("queue %s: %+v, want Size = Pending = %d and nothing delayed or reserved", name, s, n)
		}
		switch {
		case n > 0 && !s.OldestPendingAt.Equal(at):
			t.Errorf("queue %s: OldestPendingAt %v, want %v", name, s.OldestPendingAt, at)
		case n == 0 && !s.OldestPendingAt.IsZero():
			t.Errorf("empty queue %s: OldestPendingAt %v, want zero", name, s.OldestPendingAt)
		}
	}
	for name := range byQueue {
		if name != queueA && name != queueB && name != queueC {
			t.Errorf("Stats reports queue %s, which was not asked for", name)
		}
	}
}

func testEmptyUUID(t *testing.T, h Harness, b triage.QueueBackend, q Queue, at time.Time) {
	marked := moves(2, at, 0, queueA)
	bare := moves(2, at, 0, queueA)
	for i := range bare {
		bare[i].UUID = "" // the caller could not read a uuid: nothing to remember it by
	}
	ms := []triage.Move{bare[0], marked[0], bare[1], marked[1]}
	expectResult(t, push(t, b, ms, at), 4, 0)
	// Without a uuid a move cannot be recognised: a re-run pushes it again.
	expectResult(t, push(t, b, ms, at), 2, 2)
	expectQueued(t, q, map[string][][]byte{queueA: {
		bare[0].Payload, marked[0].Payload, bare[1].Payload, marked[1].Payload, bare[0].Payload, bare[1].Payload,
	}}, queueA)
}

func testLargeBatch(t *testing.T, h Harness, b triage.QueueBackend, q Queue, at time.Time) {
	ms := moves(LargeBatch, at, largePayload, queueA, queueB)
	var total int
	for _, m := range ms {
		total += len(m.Payload)
	}
	defer debug.SetGCPercent(debug.SetGCPercent(lowGCPercent))
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(heapSampleEvery)
		defer tick.Stop()
		var ms runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				runtime.ReadMemStats(&ms)
				if ms.HeapAlloc > peak.Load() {
					peak.Store(ms.HeapAlloc)
				}
			}
		}
	})
	start := time.Now()
	res, err := b.Push(context.Background(), ms, at)
	took := time.Since(start)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("Push: %v", err)
	}
	expectResult(t, res, LargeBatch, 0)
	grew := int64(peak.Load()) - int64(base.HeapAlloc)
	t.Logf("%d jobs (%d KiB of payloads) in %v (%.0f jobs/s); peak heap growth %d KiB",
		LargeBatch, total>>10, took.Round(time.Millisecond), float64(LargeBatch)/took.Seconds(), max(grew, 0)>>10)
	if grew > int64(total/memoryShare) {
		t.Errorf("the push grew the heap by %d KiB, more than 1/%d of the %d KiB it pushed: memory is not flat", grew>>10, memoryShare, total>>10)
	}
	expectQueued(t, q, want(ms), queueA, queueB)
	expectResult(t, push(t, b, ms, at), 0, LargeBatch)
}

// cancelDelays are when the cancel case interrupts a push that showed no
// progress (a transactional store shows none until it commits), the latest
// first, so the first interrupted push was most likely half-way through.
var cancelDelays = []time.Duration{300 * time.Millisecond, 100 * time.Millisecond, 30 * time.Millisecond,
	10 * time.Millisecond, 3 * time.Millisecond, time.Millisecond, 0}

// progressPoll is how often the cancel case looks for a first queued job.
const progressPoll = 200 * time.Microsecond

// testCancel interrupts a push (at its first visible progress, else after
// a delay), expects an error wrapping context.Canceled, and then expects
// the re-run to complete it with every job queued exactly once.
func testCancel(t *testing.T, h Harness, b triage.QueueBackend, q Queue, at time.Time) {
	var (
		ms       []triage.Move
		queue    string
		canceled bool
	)
	// The first attempt waits for progress only; the others also for a delay.
	delays := append([]time.Duration{-1}, cancelDelays...)
	for i, delay := range delays {
		// A queue per attempt: an attempt finished before its cancel stays apart.
		queue = fmt.Sprintf("cancel%d", i)
		ms = moves(LargeBatch, at, 0, queue)
		ctx, cancel := context.WithCancel(context.Background())
		stopTimer := func() bool { return false }
		if delay >= 0 {
			// Its own timer: the progress poll may wait for the store
			// (SQLite has one connection) and must not delay the cancel.
			stopTimer = time.AfterFunc(delay, cancel).Stop
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			tick := time.NewTicker(progressPoll)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				st, err := b.Stats(ctx, triage.QueueStatsParams{Queues: []string{queue}, Now: at})
				if err == nil && len(st) > 0 && st[0].Size > 0 {
					cancel()
					return
				}
			}
		}()
		_, err := b.Push(ctx, ms, at)
		stopTimer()
		cancel()
		<-done
		if err != nil {
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("an interrupted Push returned %v, want an error wrapping context.Canceled", err)
			}
			t.Logf("attempt %d interrupted with %d of %d jobs queued", i, len(q.Queued(t, queue)), len(ms))
			canceled = true
			break
		}
	}
	if !canceled {
		t.Fatal("no Push was interrupted: every attempt finished before its cancel")
	}
	res := push(t, b, ms, at)
	if res.Pushed+res.Already != len(ms) {
		t.Fatalf("the re-run reports %+v for %d moves", res, len(ms))
	}
	expectQueued(t, q, want(ms), queue)
}

// testJobStates: a follower finds each pushed job by uuid, per queue, as
// waiting until a worker reserves it, running while reserved, and gone once
// consumed; a uuid never pushed, or asked on another queue, is not found.
func testJobStates(t *testing.T, h Harness, b triage.QueueBackend, q Queue, at time.Time) {
	r, ok := b.(triage.JobStateReader)
	if !ok {
		t.Fatalf("%T does not implement triage.JobStateReader: retry --follow cannot follow its jobs", b)
	}
	onA, onB := moves(3, at, 0, queueA), moves(2, at, 0, queueB)
	expectResult(t, push(t, b, append(append([]triage.Move{}, onA...), onB...), at), len(onA)+len(onB), 0)
	q.Reserve(t, queueA) // onA[0] runs
	q.Consume(t, queueB) // onB[0] ran
	stranger := NewUUID()
	uuids := func(ms []triage.Move) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.UUID)
		}
		return out
	}
	got, err := r.JobStates(context.Background(), triage.JobStatesParams{UUIDs: map[string][]string{
		queueA: append(uuids(onA), stranger, onB[1].UUID), // onB[1] is on another queue
		queueB: uuids(onB),
		queueC: {stranger},
	}})
	if err != nil {
		t.Fatalf("JobStates: %v", err)
	}
	if got.Partial {
		t.Error("JobStates is Partial for queues far below triage.MaxJobStateScan")
	}
	want := map[string]triage.JobState{
		onA[0].UUID: triage.JobRunning, onA[1].UUID: triage.JobWaiting, onA[2].UUID: triage.JobWaiting,
		onB[1].UUID: triage.JobWaiting,
	}
	if len(got.ByUUID) != len(want) {
		t.Errorf("JobStates found %d jobs, want %d: %v", len(got.ByUUID), len(want), got.ByUUID)
	}
	for u, st := range want {
		if got.ByUUID[u] != st {
			t.Errorf("job %s: %v, want %v", u, got.ByUUID[u], st)
		}
	}
	for _, u := range []string{onB[0].UUID, stranger} {
		if st, found := got.ByUUID[u]; found {
			t.Errorf("job %s is %v, want absent (consumed, or never pushed)", u, st)
		}
	}
	empty, err := r.JobStates(context.Background(), triage.JobStatesParams{})
	if err != nil || len(empty.ByUUID) != 0 {
		t.Errorf("JobStates of nothing = %v, %v; want nothing", empty, err)
	}
	// A queue asked without uuids reports every job waiting or running on
	// it (what retry checks before it pushes), no other queue's.
	every, err := r.JobStates(context.Background(), triage.JobStatesParams{UUIDs: map[string][]string{queueA: nil, queueC: nil}})
	maps.DeleteFunc(want, func(u string, _ triage.JobState) bool { return u == onB[1].UUID })
	if err != nil || !maps.Equal(every.ByUUID, want) {
		t.Errorf("every job on %s = %v, %v; want %v", queueA, every.ByUUID, err, want)
	}
}

// testFailedAgain: a job retried, run and failed again comes back in a new
// failed_jobs row (same uuid, another RowID); retrying it once more queues
// it again, while a repeat of the same row's push still queues nothing.
// Else a backend that remembers uuids would let the retry delete the new
// row with the job queued nowhere.
func testFailedAgain(t *testing.T, h Harness, b triage.QueueBackend, q Queue, at time.Time) {
	first := moves(1, at, 0, queueA)[0]
	first.RowID = 41
	expectResult(t, push(t, b, []triage.Move{first}, at), 1, 0)
	q.Consume(t, queueA) // ran, and failed again: a new row
	again := first
	again.RowID = 97
	expectResult(t, push(t, b, []triage.Move{again}, at), 1, 0)
	expectQueued(t, q, map[string][][]byte{queueA: {again.Payload}}, queueA)
	// The crash re-run of that last push: nothing twice.
	expectResult(t, push(t, b, []triage.Move{again}, at), 0, 1)
	expectQueued(t, q, map[string][][]byte{queueA: {again.Payload}}, queueA)
}
