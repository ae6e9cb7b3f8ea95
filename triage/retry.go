package triage

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// RetryParams selects failed jobs to put back on their queues.
type RetryParams struct {
	// Query selects by filter when Refs is empty.
	Query
	// Refs are explicit ids; when set, Query is ignored.
	Refs []Ref
	// All must be set to retry with an empty Query and no Refs, so that an
	// empty filter never means "everything" by accident.
	All bool
	// Limit retries only the N oldest matches: a canary before the rest.
	Limit int
	// ToQueue overrides each job's recorded queue.
	ToQueue string
	// RetryUntil gives jobs whose retryUntil has passed a new deadline of
	// now+RetryUntil; zero skips such jobs (they would fail at once).
	RetryUntil time.Duration
	// DryRun reports what would happen and changes nothing.
	DryRun bool
	// Progress, when set, is told how many jobs are done so far.
	Progress func(done int)
	// OnBatch, when set, receives the ids and the skips of each batch once
	// it has committed (dry: once it is planned), and RetryResult.IDs and
	// Skipped stay empty: retrying, or skipping, a million jobs then holds
	// no list of a million.
	OnBatch func(ids []string, skips []Skip) error
	// OnPushed, when set, receives the jobs of each batch once it has
	// committed (never in a dry run), with what a follower needs to find
	// them in their backend: retry --follow watches them from here.
	OnPushed func([]Pushed)
	// BatchSize is the most rows one batch moves; 0 is WriteBatch. Pacing
	// uses small batches so that pushes are spread, not bursts.
	BatchSize int
	// BeforeBatch, when set, runs before each batch with the number of
	// jobs retried so far; a pacer waits in it. Its error ends the run.
	BeforeBatch func(ctx context.Context, retried int) error
	// Stop, when set, is asked before each batch; true ends the run with
	// the rest of the selection left in failed_jobs (a breaker tripped).
	Stop func() bool
	// Exclude names payload uuids the run passes over silently, leaving
	// them in failed_jobs: canaries that failed again and are back there.
	Exclude map[string]bool
}

// Pushed is one job a retry put back on its queue.
type Pushed struct {
	// UUID is the payload uuid, the job's identity in its backend and,
	// when it fails again, in failed_jobs; "" for a payload without one.
	UUID string
	// ID is how the operator addresses the failed job it came from.
	ID         string
	Class      string
	Connection string
	Queue      string
}

// Skip is a job a bulk action left alone, and why.
type Skip struct {
	ID         string `json:"id"`
	Class      string `json:"class"`
	Connection string `json:"connection"`
	Queue      string `json:"queue"`
	// Code names the kind of reason: SkipNotDatabase, SkipRetryUntil, SkipMalformed.
	Code   string `json:"code"`
	Reason string `json:"reason"`
}

// Skip codes.
const (
	SkipNotDatabase = "not_database_connection"
	SkipRetryUntil  = "retry_until_expired"
	SkipMalformed   = "malformed_payload"
	SkipNoJobsTable = "no_jobs_table"
)

// RetryResult says what a retry did (or, dry, would do).
type RetryResult struct {
	DryRun   bool           `json:"dry_run"`
	Retried  int            `json:"retried"`
	IDs      []string       `json:"ids"`
	ByQueue  map[string]int `json:"by_queue"`
	ByClass  map[string]int `json:"by_class"`
	Skipped  []Skip         `json:"skipped"`
	NotFound []string       `json:"not_found"`
	// DeleteWhenMissingModels counts the retried jobs whose payload has
	// deleteWhenMissingModels true (countMissingModels).
	DeleteWhenMissingModels int `json:"delete_when_missing_models"`
	// Targets are the connection:queue pairs pushed onto (pause.go).
	Targets []QueueRef `json:"-"`
}

// PipelinedBatch is the rows of one batch of a pipelined retry (see
// retryPipelined), which holds two batches at once. Three quarters of
// WriteBatch: for 100,000 2 KB jobs into Redis two such batches peak
// under the 64 MB a retry may take (two of WriteBatch rows did not), and
// took less CPU and wall time than two halves (bench/README.md, "Retry
// into Redis on a quiet machine").
const PipelinedBatch = WriteBatch * 3 / 4

// artisanRetryHint ends the reason of a job only artisan can retry: a
// whole sentence, since the ids and the command follow on lines of their own.
const artisanRetryHint = "retry such jobs with php artisan queue:retry instead"

// ArtisanCan reports whether php artisan queue:retry can retry a job that
// a retry skipped for the reason code: a connection jobtriage cannot
// write, not a job that would only fail again.
func ArtisanCan(code string) bool {
	return code == SkipNotDatabase || code == SkipNoJobsTable
}

// ArtisanRetry is the command an operator runs for jobs jobtriage cannot
// re-queue itself.
func ArtisanRetry(ids []string) string {
	return "php artisan queue:retry " + strings.Join(ids, " ")
}

// Retry puts failed jobs back on their queues as Laravel's DatabaseQueue
// would push them, oldest first, batch by batch: each batch's insert into
// jobs and delete from failed_jobs commit together. Jobs that would only
// fail again, or that cannot go to the jobs table, are skipped with a reason
// and stay in failed_jobs.
func (s *Service) Retry(ctx context.Context, p RetryParams) (RetryResult, error) {
	res := RetryResult{DryRun: p.DryRun, ByQueue: map[string]int{}, ByClass: map[string]int{}}
	chunks, f, missing, err := s.selection(ctx, p.Query, p.Refs, p.All)
	if err != nil {
		return res, err
	}
	res.NotFound = missing
	now := s.Now()
	byIDs := len(p.Refs) > 0
	limits := s.loadQueueLimits(ctx)
	if p.ToQueue != "" {
		for _, b := range s.Router.databaseBackends(s.Store.Schema().HasJobs) {
			if col := limits.of(b); !col.Holds(p.ToQueue) {
				return res, fmt.Errorf("%w: --to-queue %q (%d characters) does not fit %s", ErrInvalidInput,
					truncate(p.ToQueue, 40), utf8.RuneCountInString(p.ToQueue), col)
			}
		}
	}
	// refused are the rows the jobs table refused for reasons of their
	// own (RejectedRows), by primary key: their batch runs again without
	// them, and they are skipped with the database's reason.
	refused := map[int64]string{}
	// The rows reported as skipped, by primary key: a sweep pass meets them
	// again and must not report them twice. fresh holds the ones the
	// running batch added, to forget if it is rolled back.
	var skipped keySet
	var fresh []int64
	// pushed are the running batch's moves, for OnPushed once it commits.
	var pushed []Pushed
	plan := func(r *FailedRow) (Move, bool) {
		if p.Limit > 0 && res.Retried >= p.Limit {
			return Move{}, false
		}
		j := p.Query.jobFor(r)
		if !byIDs && !p.Query.match(j) {
			return Move{}, false
		}
		uuid := r.UUID
		if uuid == "" {
			uuid = gjson.GetBytes(r.Payload, "uuid").String()
		}
		if uuid != "" && p.Exclude[uuid] {
			return Move{}, false
		}
		skip := func(code, reason string) (Move, bool) {
			if !skipped.has(r.ID) {
				skipped.add(r.ID)
				fresh = append(fresh, r.ID)
				res.Skipped = append(res.Skipped, Skip{ID: j.ID, Class: j.Class, Connection: j.Connection, Queue: j.Queue, Code: code, Reason: reason})
			}
			return Move{}, false
		}
		if why := unretryable(r.Problems); why != "" {
			return skip(SkipUnreadable, RowName(r)+": "+why+", which a retry needs; left in failed_jobs (see show)")
		}
		if why, ok := refused[r.ID]; ok {
			return skip(SkipRefused, RowName(r)+": the jobs table refused it ("+why+"); left in failed_jobs")
		}
		route := s.Router.For(r.Connection)
		switch {
		case !route.Writable():
			return skip(SkipNotDatabase, route.Reason+"; "+artisanRetryHint)
		case route.Local && !s.Store.Schema().HasJobs:
			return skip(SkipNoJobsTable, fmt.Sprintf("connection %q queues to the %s table, which this database does not have (or not in a usable shape); %s",
				r.Connection, s.Store.Schema().JobsTable, artisanRetryHint))
		}
		body, code, reason := RetryPayload(r.Payload, now, p.RetryUntil, route.Driver == DriverRedis)
		if reason != "" {
			return skip(code, reason)
		}
		queue := r.Queue
		if p.ToQueue != "" {
			queue = p.ToQueue
		}
		if col := limits.of(route); !col.Holds(queue) {
			return skip(SkipQueueTooLong, fmt.Sprintf("%s: queue name of %d characters (%d bytes) does not fit %s; left in failed_jobs (--to-queue can name a shorter queue)",
				RowName(r), utf8.RuneCountInString(queue), len(queue), col))
		}
		res.Retried++
		res.countMissingModels(r)
		res.IDs = append(res.IDs, j.ID)
		res.ByQueue[queue]++
		res.ByClass[j.Class]++
		res.addTarget(r.Connection, queue)
		if p.OnPushed != nil {
			pushed = append(pushed, Pushed{UUID: uuid, ID: j.ID, Class: j.Class, Connection: r.Connection, Queue: queue})
		}
		return Move{UUID: uuid, Queue: queue, Payload: body, Connection: r.Connection, Local: route.Local, RowID: r.ID,
			RedisChecked: route.Driver == DriverRedis}, true
	}
	var push func(context.Context, []Move, time.Time) error
	if s.Router.hasRemote() {
		push = s.pushRemote
	}
	conflicts := 0
	run := func(bp BatchParams) (BatchResult, error) {
		bp.Push = push
		bp.NeedException = p.Signature != ""
		// A batch whose transaction fails is rolled back whole: undo what
		// plan counted for it, and run it again if it was a conflict.
		before := markOf(res)
		undo := func() {
			before.restore(&res)
			skipped.undo(fresh)
			fresh = fresh[:0]
			pushed = pushed[:0]
		}
		fresh = fresh[:0]
		pushed = pushed[:0]
		if p.BeforeBatch != nil {
			if err := p.BeforeBatch(ctx, res.Retried); err != nil {
				return BatchResult{}, err
			}
		}
		var br BatchResult
		var err error
		for round := 0; ; round++ {
			br, err = retryConflicts(ctx, &conflicts, func() (BatchResult, error) {
				undo() // a no-op on the first attempt
				return s.Store.MoveBatch(ctx, bp, plan)
			})
			// One row the jobs table refuses must not fail every run at
			// the same batch: the batch was rolled back whole; run it
			// again without the rows the store named.
			var rej *RejectedRows
			if err == nil || !errors.As(err, &rej) || len(rej.Rows) == 0 || round == maxRejectRounds {
				break
			}
			for _, r := range rej.Rows {
				refused[r.ID] = r.Reason
			}
		}
		if err != nil {
			undo()
			return br, err
		}
		if p.OnBatch != nil && (len(res.IDs) > 0 || len(res.Skipped) > 0) {
			if err := p.OnBatch(res.IDs, res.Skipped); err != nil {
				return br, err
			}
			res.IDs, res.Skipped = nil, nil
		}
		if p.OnPushed != nil && len(pushed) > 0 && !p.DryRun {
			p.OnPushed(pushed)
			pushed = nil
		}
		if p.Progress != nil {
			p.Progress(res.Retried)
		}
		return br, nil
	}
	size := WriteBatch
	if p.BatchSize > 0 && p.BatchSize < WriteBatch {
		size = p.BatchSize
		chunks = rechunk(chunks, size)
	}
	stop := func() bool {
		return (p.Limit > 0 && res.Retried >= p.Limit) || (p.Stop != nil && p.Stop())
	}
	seq := newBatchSeq(chunks, f, byIDs, now, p.DryRun, size)
	pass := func() error { return eachBatch(ctx, seq, run, stop) }
	// Pipelined only for a plain retry: pacing (BeforeBatch), a breaker
	// (Stop) and following (OnPushed) decide batch by batch on what the
	// previous batches did, which the serial loop gives them.
	plain := p.BeforeBatch == nil && p.Stop == nil && p.OnPushed == nil
	if bs, ok := s.Store.(BatchStarter); ok && push != nil && plain {
		if first, more := seq.next(); more {
			first.Push = push
			if bs.CanStartMoveBatch(first) {
				pb := min(size, PipelinedBatch)
				pseq := newBatchSeq(rechunk(chunks, pb), f, byIDs, now, p.DryRun, pb)
				pass = func() error {
					return s.retryPipelined(ctx, bs, pseq, &res, &retryPlan{plan: plan, push: push, signature: p.Signature != "",
						skipped: &skipped, fresh: &fresh, onBatch: p.OnBatch, progress: p.Progress},
						func(from batchSeq) error { return eachBatch(ctx, from, run, stop) }, stop, &conflicts)
				}
			}
		}
	}
	err = sweep(ctx, &conflicts, pass)
	return res, err
}

// serialHandles reports whether the serial batch loop deals with err by
// running the batch again (a conflict, rows the backend refused); any
// other error ends a retry, pipelined or not.
func serialHandles(err error) bool {
	var rej *RejectedRows
	return errors.Is(err, ErrConflict) || errors.As(err, &rej)
}

// retryPlan is what a pipelined retry pass shares with Retry: the plan of
// each row and the state plan keeps.
type retryPlan struct {
	plan      func(*FailedRow) (Move, bool)
	push      func(context.Context, []Move, time.Time) error
	signature bool
	skipped   *keySet
	fresh     *[]int64 // the skips the batch being planned added
	onBatch   func(ids []string, skipped []Skip) error
	progress  func(retried int)
}

// openRetry is a batch of a pipelined pass that was planned and not yet
// reported: what it added to the result, to report or take back.
type openRetry struct {
	ob         OpenBatch
	from       batchSeq  // the sequence from this batch on
	mark       retryMark // the result before it was planned
	fresh      []int64
	ids, skips int // entries it appended to IDs and Skipped
}

// retryPipelined is a retry pass that reads and plans batch n+1 while
// batch n is pushed and committed on another goroutine, so that the SQL
// server, the queue backend and the planning overlap instead of adding up
// (bench/README.md, "Retry into Redis"). At most two batches are open.
// Pushes keep their order: batch n+1 is committed (and pushed) only after
// batch n's commit returned. Each batch is still pushed first and deleted
// second, in its own transaction, so the exactly-once contract is the
// serial one's.
//
// On an error the open batches are rolled back and taken back from the
// result. A conflict or refused rows make the pass go on serially (serial,
// Retry's batch loop) from the first batch not committed, which runs
// conflicts again and isolates refused rows; any other error ends it, as
// it ends the serial loop. A batch rolled back counts as a conflict, so
// that sweep runs one more pass for rows a concurrent retry skipped while
// this one held them.
func (s *Service) retryPipelined(ctx context.Context, bs BatchStarter, seq batchSeq, res *RetryResult, rp *retryPlan,
	serial func(from batchSeq) error, stop func() bool, conflicts *int) error {
	type outcome struct {
		res BatchResult
		err error
	}
	var prev *openRetry
	var prevDone chan outcome
	// takeBack removes what the given batches (oldest first, none of them
	// committed) added to the result.
	takeBack := func(bs ...*openRetry) {
		n, k := 0, 0
		for _, b := range bs {
			n += b.ids
			k += b.skips
			rp.skipped.undo(b.fresh)
		}
		res.IDs = res.IDs[:len(res.IDs)-n]
		res.Skipped = res.Skipped[:len(res.Skipped)-k]
		res.Retried = bs[0].mark.retried
		res.ByQueue = maps.Clone(bs[0].mark.byQueue)
		res.ByClass = maps.Clone(bs[0].mark.byClass)
	}
	// report hands a committed batch's ids and skips to OnBatch, as the
	// serial loop does after each batch; retried is the count up to it.
	report := func(b *openRetry, retried int) error {
		if rp.onBatch != nil && (b.ids > 0 || b.skips > 0) {
			if err := rp.onBatch(res.IDs[:b.ids], res.Skipped[:b.skips]); err != nil {
				return err
			}
			res.IDs, res.Skipped = res.IDs[b.ids:], res.Skipped[b.skips:]
		}
		if rp.progress != nil {
			rp.progress(retried)
		}
		return nil
	}
	for {
		var cur *openRetry
		var br BatchResult
		var startErr error
		if !stop() && ctx.Err() == nil {
			if bp, ok := seq.next(); ok {
				bp.Push = rp.push
				bp.NeedException = rp.signature
				cur = &openRetry{from: seq, mark: markOf(*res)}
				ids, skips := len(res.IDs), len(res.Skipped)
				*rp.fresh = nil
				cur.ob, br, startErr = bs.StartMoveBatch(ctx, bp, rp.plan)
				cur.fresh = *rp.fresh
				cur.ids, cur.skips = len(res.IDs)-ids, len(res.Skipped)-skips
			}
		}
		if prev != nil {
			out := <-prevDone
			err := out.err
			if err == nil {
				retried := res.Retried
				if cur != nil {
					retried = cur.mark.retried
				}
				if err = report(prev, retried); err != nil {
					// prev is committed and stays reported as far as
					// OnBatch got; only cur is taken back.
					if cur != nil {
						if startErr == nil {
							cur.ob.Rollback()
						}
						takeBack(cur)
					}
					return err
				}
			} else {
				// prev was rolled back by its Commit.
				*conflicts++
				if cur != nil {
					if startErr == nil {
						cur.ob.Rollback()
					}
					takeBack(prev, cur)
				} else {
					takeBack(prev)
				}
				if !serialHandles(err) {
					return err
				}
				return serial(prev.from)
			}
		}
		if cur == nil {
			if err := ctx.Err(); err != nil && !stop() {
				return err
			}
			return nil
		}
		if startErr != nil {
			*conflicts++
			takeBack(cur)
			if !serialHandles(startErr) {
				return startErr
			}
			return serial(cur.from)
		}
		seq.advance(br)
		prev, prevDone = cur, make(chan outcome, 1)
		go func(ob OpenBatch, done chan<- outcome) {
			r, err := ob.Commit(ctx)
			done <- outcome{r, err}
		}(cur.ob, prevDone)
	}
}

// retryMark is a RetryResult as it was before a batch. Ids and skips are
// only appended to, so their lengths suffice: copying them before every
// batch made a long retry quadratic in the rows it moved.
type retryMark struct {
	retried, ids, skipped int
	byQueue, byClass      map[string]int
	missingModels         int
}

func markOf(r RetryResult) retryMark {
	return retryMark{retried: r.Retried, ids: len(r.IDs), skipped: len(r.Skipped),
		byQueue: maps.Clone(r.ByQueue), byClass: maps.Clone(r.ByClass), missingModels: r.DeleteWhenMissingModels}
}

func (m retryMark) restore(r *RetryResult) {
	r.Retried = m.retried
	r.DeleteWhenMissingModels = m.missingModels
	r.IDs = r.IDs[:m.ids]
	r.Skipped = r.Skipped[:m.skipped]
	r.ByQueue = maps.Clone(m.byQueue)
	r.ByClass = maps.Clone(m.byClass)
}

// Skip codes of rows a retry cannot move for reasons of their own (see
// also SkipMalformed).
const (
	// SkipUnreadable: a column a retry needs (connection, queue, payload)
	// is not as Laravel writes it (NULL); the reason names the row.
	SkipUnreadable = "unreadable_row"
	// SkipQueueTooLong: the queue name does not fit the jobs table's queue
	// column, so the insert would fail (or, on a lax MySQL, truncate it).
	SkipQueueTooLong = "queue_too_long"
	// SkipRefused: the jobs table refused the row's insert for a reason of
	// the row's own; the reason carries the database's words.
	SkipRefused = "refused_by_jobs_table"
)

// maxRejectRounds bounds how often one batch runs again without rows the
// jobs table refused: each round names every refused row of the batch, so
// a second is needed only when the first probe missed one.
const maxRejectRounds = 3

// RejectedRows is MoveBatch's error when the queue backend refused rows of
// the batch for reasons of their own (a value its column cannot hold, a
// constraint): the batch was rolled back whole, and running it again
// without these rows moves the others.
type RejectedRows struct {
	Rows []RejectedRow
	// Cause is the error the batch met.
	Cause error
}

// RejectedRow is one refused failed_jobs row and the database's reason.
type RejectedRow struct {
	ID     int64
	Reason string
}

func (e *RejectedRows) Error() string {
	ids := make([]string, 0, min(len(e.Rows), 5))
	for _, r := range e.Rows[:min(len(e.Rows), 5)] {
		ids = append(ids, fmt.Sprint(r.ID))
	}
	return fmt.Sprintf("the jobs table refused %d row(s) of the batch (ids %s): %v", len(e.Rows), strings.Join(ids, ", "), e.Cause)
}

func (e *RejectedRows) Unwrap() error { return e.Cause }

// QueueColumn is what the queue column of a jobs table holds: at most
// MaxChars characters and MaxBytes bytes (0: no such bound).
type QueueColumn struct {
	Type     string // the declared type, for messages ("varchar(255)")
	Table    string
	MaxChars int
	MaxBytes int
}

// Holds reports whether queue fits the column.
func (c QueueColumn) Holds(queue string) bool {
	return (c.MaxChars <= 0 || utf8.RuneCountInString(queue) <= c.MaxChars) && (c.MaxBytes <= 0 || len(queue) <= c.MaxBytes)
}

func (c QueueColumn) String() string {
	limit := fmt.Sprintf("%d characters", c.MaxChars)
	if c.MaxChars <= 0 {
		limit = fmt.Sprintf("%d bytes", c.MaxBytes)
	}
	return fmt.Sprintf("%s.queue (%s, at most %s)", c.Table, c.Type, limit)
}

// QueueColumnReader is a jobs table that can say what its queue column
// holds, read from the database's catalog (Laravel's stock column is
// varchar(255)). Retry skips a job whose queue name would not fit before
// inserting anything, instead of failing its whole batch.
type QueueColumnReader interface {
	QueueColumn(ctx context.Context) (QueueColumn, error)
}

// queueLimits are the queue columns of the jobs tables a run writes to,
// read once before its first batch: a catalog query inside a batch would
// wait for the connection the batch holds (SQLite has one). A table whose
// catalog cannot be read is taken as unbounded: a row it then refuses is
// still isolated by RejectedRows.
type queueLimits struct {
	cache map[QueueBackend]QueueColumn // nil key: this database's jobs table
}

func (s *Service) loadQueueLimits(ctx context.Context) *queueLimits {
	l := &queueLimits{cache: map[QueueBackend]QueueColumn{}}
	for _, r := range s.Router.databaseBackends(s.Store.Schema().HasJobs) {
		var key QueueBackend
		var reader any = s.Store
		if !r.Local {
			key, reader = r.Backend, r.Backend
		}
		if _, done := l.cache[key]; done {
			continue
		}
		var c QueueColumn
		if qr, ok := reader.(QueueColumnReader); ok {
			if got, err := qr.QueueColumn(ctx); err == nil {
				c = got
			}
		}
		l.cache[key] = c
	}
	return l
}

// of is the queue column of a route's jobs table; unbounded for other
// backends (Redis keeps any name).
func (l *queueLimits) of(r Route) QueueColumn {
	switch {
	case r.Local:
		return l.cache[nil]
	case r.Backend != nil && r.Driver == DriverDatabase:
		return l.cache[r.Backend]
	}
	return QueueColumn{}
}

// unretryable says which of a row's problems keep it from being retried:
// a job goes back with its connection, queue and payload; a failed_at or
// exception that cannot be read does not change what is pushed.
func unretryable(ps []RowProblem) string {
	var bad []RowProblem
	for _, p := range ps {
		switch p.Column {
		case "connection", "queue", "payload":
			bad = append(bad, p)
		}
	}
	if len(bad) == 0 {
		return ""
	}
	return describeProblems(bad)
}
