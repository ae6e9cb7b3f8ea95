package triage

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/jobtriage/jobtriage/triage/payload"
)

// RetryParams selects failed jobs to put back on their queues.
type RetryParams struct {
	Query       // when Refs is empty
	Refs  []Ref // explicit ids
	// All must be set to retry with an empty Query and no Refs, so that an
	// empty filter never means "everything" by accident.
	All     bool
	Limit   int    // only the N oldest matches: a canary before the rest
	ToQueue string // overrides each job's recorded queue
	// RetryUntil gives jobs whose retryUntil has passed a new deadline of
	// now+RetryUntil; zero skips such jobs (they would fail at once).
	RetryUntil time.Duration
	DryRun     bool
	// BatchSize is the most rows one batch moves (0: WriteBatch); a run
	// with one (paced) holds no batch between Next calls.
	BatchSize int
	// Exclude are uuids left in failed_jobs silently: canaries failed again.
	Exclude map[string]bool
	// ResolveWait is how long a push in doubt is tried again before the
	// run ends naming its jobs (0: DefaultResolveWait).
	ResolveWait time.Duration
}

// DefaultResolveWait is RetryParams.ResolveWait's default; resolveEvery is
// how often a push in doubt is tried again.
const (
	DefaultResolveWait = 30 * time.Second
	resolveEvery       = 500 * time.Millisecond
)

// Pushed is one job a retry put back on its queue: its payload uuid (its
// identity in its backend and, when it fails again, in failed_jobs; "" for
// a payload without one) and the id of the failed job it came from.
type Pushed struct {
	UUID       string
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
	Code       string `json:"code"` // one of the Skip codes
	Reason     string `json:"reason"`
}

// Skip codes.
const (
	SkipNotDatabase = "not_database_connection"
	SkipRetryUntil  = "retry_until_expired"
	SkipMalformed   = "malformed_payload"
	SkipNoJobsTable = "no_jobs_table"
	// SkipUnreadable: a column a retry needs (connection, queue, payload)
	// is not as Laravel writes it (NULL); the reason names the row.
	SkipUnreadable = "unreadable_row"
	// SkipQueueTooLong: the queue name does not fit the jobs table's queue
	// column, so the insert would fail (or, on a lax MySQL, truncate it).
	SkipQueueTooLong = "queue_too_long"
	// SkipRefused: the jobs table refused the row's insert for a reason of
	// the row's own; the reason carries the database's words.
	SkipRefused = "refused_by_jobs_table"
	// SkipDeleteRefused: failed_jobs refused the row's delete (a trigger,
	// row security), so it was neither pushed nor forgotten.
	SkipDeleteRefused = "delete_refused"
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
	// AlreadyQueued are the retried jobs found waiting or running on their
	// queue already: their rows were deleted, nothing pushed again.
	AlreadyQueued []string `json:"already_queued"`
	// DeleteWhenMissingModels counts retried jobs that Laravel 13 deletes,
	// with no failure row, if their model is gone.
	DeleteWhenMissingModels int `json:"delete_when_missing_models"`
	// Targets are the connection:queue pairs pushed onto (pause warnings).
	Targets []QueueRef `json:"-"`
	// FailsOver says once per failover connection where its jobs went.
	FailsOver []string `json:"-"`
}

// PipelinedBatch is the rows of one batch of a retry that holds two at once
// (RetryRun): for 2 KB jobs into Redis two such batches peak under the 64 MB
// a retry may take (two of WriteBatch did not), and cost less than two
// halves (bench/README.md, "Retry into Redis on a quiet machine").
const PipelinedBatch = WriteBatch * 3 / 4

// artisanRetryHint ends the reason of a job only artisan can retry: a
// whole sentence, since the ids and the command follow on lines of their own.
const artisanRetryHint = "retry such jobs with php artisan queue:retry instead"

// ArtisanCan reports whether php artisan queue:retry can retry a job skipped
// for the reason code (a connection jobtriage cannot write).
func ArtisanCan(code string) bool {
	return code == SkipNotDatabase || code == SkipNoJobsTable
}

// ArtisanRetry is the command for jobs jobtriage cannot re-queue.
func ArtisanRetry(ids []string) string {
	return "php artisan queue:retry " + strings.Join(ids, " ")
}

// Retry puts failed jobs back on their queues, oldest first, batch by batch
// (StartRetry's run drained); others are skipped with a reason.
func (s *Service) Retry(ctx context.Context, p RetryParams) (RetryResult, error) {
	run := s.StartRetry(ctx, p)
	defer run.Close()
	var ids []string
	var skips []Skip
	for run.Next(ctx) {
		b := run.Batch()
		ids = append(ids, b.IDs...)
		skips = append(skips, b.Skips...)
	}
	res := run.Result()
	res.IDs, res.Skipped = ids, skips
	return res, run.Err()
}

// RetryBatch is what a batch did once committed (dry: would do): its jobs for
// a follower (none dry), and the jobs retried so far.
type RetryBatch struct {
	IDs     []string
	Skips   []Skip
	Pushed  []Pushed
	Retried int
}

// RetryRun is a retry its caller drives batch by batch, as bufio.Scanner
// is driven: Next runs the next batch to its commit, Batch reports it, Err
// says why Next returned false, and Result what it did in all (without
// ids and skips, which each batch reports: a million-job retry holds no
// list of a million). The caller paces by waiting between Next calls and
// stops by not calling it; Close must be called.
//
// On a store with concurrent batches and a queue backend to push to, the
// run takes and plans batch n+1 while batch n is pushed and committed on
// another goroutine, so the SQL server, the backend and the planning
// overlap (bench/README.md, "Retry into Redis"). Batch n+1 is held, not
// pushed, until the next Next: each batch is pushed first and deleted
// second, in its own transaction, after its caller asked for it.
type RetryRun struct {
	s       *Service
	p       RetryParams
	res     RetryResult
	now     time.Time
	limits  queueLimits
	walk    walk
	overlap bool
	// refused are the rows a table refused (RejectedRows), by id, skipped
	// with the database's reason when their batch runs again.
	refused map[int64]RejectedRow
	// skipped are the rows reported skipped, which a sweep pass meets again.
	skipped keySet
	held    *retryBatch // taken and planned, not pushed
	// forget: the run deletes what it selects (StartForget), handing each
	// batch's rows to archive first when it is set.
	forget  bool
	archive Archiver
	last    RetryBatch
	err     error
	done    bool

	// queued are the uuids each remote queue held when the run first pushed
	// to it (JobStates), each taken once.
	queued map[QueueRef]map[string]bool
}

// retryBatch is a taken batch and its plan, counted once it committed.
type retryBatch struct {
	b      Batch
	walk   walk // the walk at this batch
	bp     BatchParams
	rows   []*FailedRow
	remote []Move
	d      Decision
	report RetryBatch
	fresh  []int64 // the rows it skips
	// queued are the ids of its jobs found queued already (skipQueued).
	queued []string
	// planned is what the batch adds to the result once it committed.
	planned []planned
}

// planned is one move of a batch as the result counts it.
type planned struct {
	queue, class, target, via string
	missingModels             bool
}

// StartRetry begins a retry; a selection that cannot start fails Next.
func (s *Service) StartRetry(ctx context.Context, p RetryParams) *RetryRun {
	r := &RetryRun{s: s, p: p, now: s.Now(), refused: map[int64]RejectedRow{}, queued: map[QueueRef]map[string]bool{},
		res: RetryResult{DryRun: p.DryRun, ByQueue: map[string]int{}, ByClass: map[string]int{}}}
	// Overlapping batches pays where a push to another backend waits on
	// the network; a paced run (BatchSize) waits anyway.
	r.overlap = s.Store.Schema().ConcurrentBatches && !p.DryRun && s.Router.hasRemote() && p.BatchSize == 0
	size := WriteBatch
	switch {
	case p.BatchSize > 0 && p.BatchSize < WriteBatch:
		size = p.BatchSize
	case r.overlap:
		size = PipelinedBatch
	}
	if r.walk, r.res.NotFound, r.err = s.selection(ctx, p.Query, p.Refs, p.All, r.now, p.DryRun, size); r.err != nil {
		return r
	}
	r.limits = s.loadQueueLimits(ctx)
	if p.ToQueue != "" {
		for _, b := range s.Router.databaseBackends(s.Store.Schema().HasJobs) {
			if col := r.limits.of(b); !col.Holds(p.ToQueue) {
				r.err = fmt.Errorf("%w: --to-queue %q (%d characters) does not fit %s", ErrInvalidInput,
					truncate(p.ToQueue, 40), utf8.RuneCountInString(p.ToQueue), col)
				return r
			}
		}
	}
	return r
}

// Next runs the next batch to its commit; false when the run is over.
func (r *RetryRun) Next(ctx context.Context) bool {
	if r.err != nil || r.done {
		return false
	}
	if err := r.step(ctx); err != nil {
		r.err = err
		r.Close()
		return false
	}
	return !r.done
}

// More reports whether Next would run a batch: a pacer waits before one.
func (r *RetryRun) More() bool {
	if r.err != nil || r.done || r.limited(r.res.Retried) {
		return false
	}
	w := r.walk
	_, ok := w.next()
	return r.held != nil || ok
}

// Batch reports the batch the last Next ran.
func (r *RetryRun) Batch() RetryBatch { return r.last }

// Err is what ended the run early; nil when it ran to its end.
func (r *RetryRun) Err() error { return r.err }

// Result is what the committed batches did, ids and skips aside.
func (r *RetryRun) Result() RetryResult { return r.res }

// Close rolls back a batch the run holds; the run is over.
func (r *RetryRun) Close() {
	r.drop()
	r.done = true
}

// drop rolls back the held batch, as a conflict: the walk must pass again.
func (r *RetryRun) drop() {
	if r.held != nil {
		r.held.b.Rollback()
		r.held = nil
		*r.walk.conflicts++
	}
}

func (r *RetryRun) limited(planned int) bool { return r.p.Limit > 0 && planned >= r.p.Limit }

// step runs one batch: the held one, or the next of the walk, taken
// again while it conflicts and without the rows the jobs table refuses.
func (r *RetryRun) step(ctx context.Context) error {
	if r.limited(r.res.Retried) {
		r.done = true
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	c := r.held
	r.held = nil
	if c != nil {
		r.walk = c.walk
	} else {
		bp, ok := r.walk.next()
		if !ok {
			r.done = true
			return nil
		}
		c = &retryBatch{walk: r.walk, bp: bp}
	}
	attempts, rounds := 0, 0
	for {
		err := r.take(ctx, c, r.res.Retried)
		if err == nil {
			if err = r.finish(ctx, c); err == nil {
				return nil
			}
		}
		// One row a table refuses must not fail every run at the same
		// batch: run it again without the rows the store named.
		c.b = nil
		var rej *RejectedRows
		if errors.As(err, &rej) && len(rej.Rows) > 0 && rounds < maxRejectRounds {
			rounds++
			for _, x := range rej.Rows {
				r.refused[x.ID] = x
			}
			continue
		}
		if again, err := r.walk.again(ctx, err, &attempts); !again {
			return err
		}
	}
}

// take takes and plans c; planned counts the jobs of the batches before it.
func (r *RetryRun) take(ctx context.Context, c *retryBatch, planned int) error {
	if c.b != nil {
		return nil
	}
	bp := c.bp
	bp.NeedException = r.p.Signature != ""
	bp.Retry = !r.forget
	b, err := r.s.Store.TakeBatch(ctx, bp)
	if err != nil {
		return err
	}
	c.b, c.rows = b, b.Rows()
	c.remote, c.d, c.report, c.fresh, c.planned, c.queued = nil, Decision{}, RetryBatch{}, nil, nil, nil
	for _, row := range c.rows {
		if r.limited(planned + len(c.d.Delete)) {
			break
		}
		if m, ok := r.plan(c, row); ok {
			c.d.Delete = append(c.d.Delete, row.ID)
			if m.Local {
				c.d.Local = append(c.d.Local, m)
			} else if !r.forget {
				c.remote = append(c.remote, m)
			}
		}
	}
	if !r.p.DryRun && !r.forget {
		if err := r.skipQueued(ctx, c); err != nil {
			b.Rollback()
			return err
		}
	}
	return nil
}

// skipQueued takes out of c's pushes the jobs already waiting or running on
// their queue (left by an interrupted artisan queue:retry, which pushes
// before it forgets): their rows are only deleted. The local jobs table is
// asked each batch, in its transaction; a backend once per queue and run,
// since its queues can be long and what this run pushes its Push keeps
// once. A uuid found there is taken once: a second row of it is pushed.
func (r *RetryRun) skipQueued(ctx context.Context, c *retryBatch) error {
	local := map[string]bool{}
	if qr, ok := c.b.(QueuedReader); ok && len(c.d.Local) > 0 {
		var err error
		if local, err = qr.QueuedUUIDs(ctx, c.d.Local); err != nil {
			return err
		}
	}
	found := func(m Move) (bool, error) {
		if m.UUID == "" || m.Local {
			return m.UUID != "" && local[m.UUID], nil
		}
		ref := QueueRef{Connection: m.Connection, Queue: m.Queue}
		set, ok := r.queued[ref]
		if !ok {
			set = map[string]bool{}
			if jr, ok := r.s.Router.For(m.Connection).Backend.(JobStateReader); ok {
				st, err := jr.JobStates(ctx, JobStatesParams{UUIDs: map[string][]string{m.Queue: nil}})
				if err != nil {
					return false, err
				}
				for u := range st.ByUUID {
					set[u] = true
				}
			}
			r.queued[ref] = set
		}
		was := set[m.UUID]
		delete(set, m.UUID)
		return was, nil
	}
	var err error
	keep := func(ms []Move) []Move {
		out := ms[:0]
		for _, m := range ms {
			q, ferr := found(m)
			err = cmp.Or(err, ferr)
			if !q {
				out = append(out, m)
			} else if i := slices.IndexFunc(c.report.Pushed, func(p Pushed) bool { return p.UUID == m.UUID }); i >= 0 {
				c.queued = append(c.queued, c.report.Pushed[i].ID)
			}
		}
		return out
	}
	c.d.Local, c.remote = keep(c.d.Local), keep(c.remote)
	return err
}

// finish pushes and commits c (taking the next batch meanwhile) and counts it.
func (r *RetryRun) finish(ctx context.Context, c *retryBatch) error {
	// A forget reads before Decide the rows it archives and archives them
	// after Decide deleted them: a row whose delete is refused is not.
	var raw []RawRow
	if r.archive != nil && !r.p.DryRun && len(c.d.Delete) > 0 {
		var err error
		if raw, err = c.b.Raw(ctx, c.d.Delete); err != nil {
			c.b.Rollback()
			return err
		}
	}
	if err := c.b.Decide(ctx, c.d); err != nil {
		return err
	}
	if raw != nil {
		if err := r.archive.Write(raw); err != nil {
			c.b.Rollback()
			return err
		}
	}
	done := make(chan error, 1)
	if !r.overlap {
		done <- r.commit(ctx, c)
	} else {
		go func() { done <- r.commit(ctx, c) }()
		w := c.walk
		w.seq.advance(c.rows)
		if bp, ok := w.next(); ok && !r.limited(r.res.Retried+len(c.d.Delete)) {
			next := &retryBatch{walk: w, bp: bp}
			// An error leaves the batch to be taken when its turn comes.
			if r.take(ctx, next, r.res.Retried+len(c.d.Delete)) == nil {
				r.held = next
			}
		}
	}
	if err := <-done; err != nil {
		r.drop()
		return err
	}
	r.walk = c.walk
	r.walk.seq.advance(c.rows)
	for _, id := range c.fresh {
		r.skipped.add(id)
	}
	r.res.Retried += len(c.d.Delete)
	r.res.AlreadyQueued = append(r.res.AlreadyQueued, c.queued...)
	for _, m := range c.planned {
		r.res.ByQueue[m.queue]++
		r.res.ByClass[m.class]++
		if m.missingModels {
			r.res.DeleteWhenMissingModels++
		}
		if t := (QueueRef{Connection: m.target, Queue: m.queue}); !slices.Contains(r.res.Targets, t) {
			r.res.Targets = append(r.res.Targets, t)
		}
		if m.via != "" && !slices.Contains(r.res.FailsOver, m.via) {
			r.res.FailsOver = append(r.res.FailsOver, m.via)
		}
	}
	r.last = c.report
	r.last.Retried = r.res.Retried
	return nil
}

// commit pushes c's remote moves and commits it; a dry run commits nothing.
func (r *RetryRun) commit(ctx context.Context, c *retryBatch) error {
	if r.p.DryRun {
		c.b.Rollback()
		return nil
	}
	if len(c.remote) > 0 {
		err := r.s.pushRemote(ctx, c.remote, r.now)
		if errors.Is(err, ErrInDoubt) {
			err = r.resolve(ctx, c.remote, err)
		}
		if err != nil {
			c.b.Rollback()
			return err
		}
	}
	return c.b.Commit(ctx)
}

// resolve settles a push in doubt before its batch commits: Push queues
// each move once by its PushKey, so pushing the moves again, every
// resolveEvery for ResolveWait, queues what the first push did not and
// finds the rest. Still in doubt (or with a move without a uuid, which has
// no key), the error names the jobs to retry once the backend answers.
func (r *RetryRun) resolve(ctx context.Context, moves []Move, err error) error {
	wait, cancel := context.WithTimeout(ctx, cmp.Or(r.p.ResolveWait, DefaultResolveWait))
	defer cancel()
	first, keyless := err, slices.ContainsFunc(moves, func(m Move) bool { return m.UUID == "" })
	for err != nil && !keyless && wait.Err() == nil {
		select {
		case <-wait.Done():
		case <-time.After(resolveEvery):
			err = r.s.pushRemote(wait, moves, r.now)
		}
	}
	if err == nil {
		return nil
	}
	ids := make([]string, len(moves))
	for i, m := range moves {
		ids[i] = strconv.FormatInt(m.RowID, 10)
	}
	return &PushInDoubt{IDs: ids, Cause: first}
}

// plan decides what becomes of one row: a move, a skip, or nothing.
func (r *RetryRun) plan(c *retryBatch, row *FailedRow) (Move, bool) {
	s, p := r.s, r.p
	j := p.Query.jobFor(row)
	if len(p.Refs) == 0 && (!p.Query.match(j) || !p.Query.tagged(row)) {
		return Move{}, false
	}
	uuid := row.UUID
	if uuid == "" {
		uuid = gjson.GetBytes(row.Payload, "uuid").String()
	}
	if uuid != "" && p.Exclude[uuid] {
		return Move{}, false
	}
	skip := func(code, reason string) (Move, bool) {
		if !r.skipped.has(row.ID) {
			c.fresh = append(c.fresh, row.ID)
			c.report.Skips = append(c.report.Skips, Skip{ID: j.ID, Class: j.Class, Connection: j.Connection, Queue: j.Queue, Code: code, Reason: reason})
		}
		return Move{}, false
	}
	if x, ok := r.refused[row.ID]; ok && x.Delete {
		left := "; left there, not queued"
		if r.forget {
			left = "; left there"
		}
		return skip(SkipDeleteRefused, RowName(row)+": failed_jobs refused to delete it ("+x.Reason+")"+left)
	}
	if r.forget {
		c.report.IDs = append(c.report.IDs, j.ID)
		return Move{}, true
	}
	if why := unretryable(row.Problems); why != "" {
		return skip(SkipUnreadable, RowName(row)+": "+why+", which a retry needs; left in failed_jobs (see show)")
	}
	if x, ok := r.refused[row.ID]; ok {
		return skip(SkipRefused, RowName(row)+": the jobs table refused it ("+x.Reason+"); left in failed_jobs")
	}
	route := s.Router.For(row.Connection)
	switch {
	case !route.Writable():
		return skip(SkipNotDatabase, route.Reason+"; "+artisanRetryHint)
	case route.Local && !s.Store.Schema().HasJobs:
		return skip(SkipNoJobsTable, fmt.Sprintf("connection %q queues to the %s table, which this database does not have (or not in a usable shape); %s",
			row.Connection, s.Store.Schema().JobsTable, artisanRetryHint))
	}
	body, code, reason := RetryPayload(row.Payload, r.now, p.RetryUntil, route.Driver == DriverRedis)
	if reason != "" {
		return skip(code, reason)
	}
	queue := row.Queue
	if p.ToQueue != "" {
		queue = p.ToQueue
	}
	if col := r.limits.of(route); !col.Holds(queue) {
		return skip(SkipQueueTooLong, fmt.Sprintf("%s: queue name of %d characters (%d bytes) does not fit %s; left in failed_jobs (--to-queue can name a shorter queue)",
			RowName(row), utf8.RuneCountInString(queue), len(queue), col))
	}
	c.report.IDs = append(c.report.IDs, j.ID)
	if !p.DryRun {
		c.report.Pushed = append(c.report.Pushed, Pushed{UUID: uuid, ID: j.ID, Class: j.Class, Connection: row.Connection, Queue: queue})
	}
	c.planned = append(c.planned, planned{queue: queue, class: j.Class, target: route.pushedTo(), via: route.ViaNote(),
		missingModels: payload.DeletesWhenModelMissing(row.Payload)})
	return Move{UUID: uuid, Queue: queue, Payload: body, Connection: row.Connection, Local: route.Local, RowID: row.ID,
		RedisChecked: route.Driver == DriverRedis}, true
}

// maxRejectRounds bounds how often one batch runs again without rows the
// jobs table refused (each round names every refused row it found).
const maxRejectRounds = 3

// RejectedRows is Batch.Commit's (or a push's) error when the backend
// refused rows for reasons of their own (a value its column cannot hold, a
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
	// Delete: failed_jobs refused to delete the row (a trigger, row
	// security); else its target refused its insert.
	Delete bool
}

func (e *RejectedRows) Error() string {
	ids := make([]string, 0, min(len(e.Rows), 5))
	for _, r := range e.Rows[:min(len(e.Rows), 5)] {
		ids = append(ids, fmt.Sprint(r.ID))
	}
	return fmt.Sprintf("%d row(s) of the batch refused (ids %s): %v", len(e.Rows), strings.Join(ids, ", "), e.Cause)
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

// QueueColumnReader reads a jobs table's queue column from the catalog, so
// retry skips a job whose queue would not fit.
type QueueColumnReader interface {
	QueueColumn(ctx context.Context) (QueueColumn, error)
}

// queueLimits are the queue columns of the jobs tables a run writes to (the
// nil key: this database's), read once before its first batch: a catalog
// query inside a batch would wait for the connection the batch holds
// (SQLite has one). A table whose catalog cannot be read is taken as
// unbounded: a row it then refuses is still isolated by RejectedRows.
type queueLimits map[QueueBackend]QueueColumn

func (s *Service) loadQueueLimits(ctx context.Context) queueLimits {
	l := queueLimits{}
	for _, r := range s.Router.databaseBackends(s.Store.Schema().HasJobs) {
		var key QueueBackend
		var reader any = s.Store
		if !r.Local {
			key, reader = r.Backend, r.Backend
		}
		if _, done := l[key]; done {
			continue
		}
		var c QueueColumn
		if qr, ok := reader.(QueueColumnReader); ok {
			if got, err := qr.QueueColumn(ctx); err == nil {
				c = got
			}
		}
		l[key] = c
	}
	return l
}

// of is a route's jobs table's queue column; unbounded for Redis.
func (l queueLimits) of(r Route) QueueColumn {
	switch {
	case r.Local:
		return l[nil]
	case r.Backend != nil && r.Driver == DriverDatabase:
		return l[r.Backend]
	}
	return QueueColumn{}
}

// unretryable says which of a row's problems keep it from being retried:
// those of its connection, queue and payload, which are what is pushed.
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
