package triage

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// WriteBatch is the number of rows one retry or forget transaction moves:
// big enough to amortise round trips, small enough that no transaction holds
// its locks for long.
const WriteBatch = 2000

// PipelinedBatch is the rows of one batch of a pipelined retry (see
// retryPipelined), which holds two batches at once. Three quarters of
// WriteBatch: for 100,000 2 KB jobs into Redis two such batches peak
// under the 64 MB a retry may take (two of WriteBatch rows did not), and
// took less CPU and wall time than two halves (bench/README.md, "Retry
// into Redis on a quiet machine").
const PipelinedBatch = WriteBatch * 3 / 4

// DefaultDatabaseConnection is the queue connection name taken to use
// Laravel's database driver when neither the app profile nor the operator
// names any: the skeleton's.
const DefaultDatabaseConnection = "database"

func (s *Service) isDatabaseConnection(name string) bool {
	conns := s.DatabaseConnections
	if len(conns) == 0 && s.Routes == nil {
		conns = []string{DefaultDatabaseConnection}
	}
	for _, c := range conns {
		if c == name {
			return true
		}
	}
	return false
}

// RouteFor says where a job recorded on a queue connection goes back to.
// Connections named with --database-connection are database queues in the
// failed_jobs database (or the --jobs-dsn store); every other connection is
// routed by the app profile (Routes). A connection neither knows is not
// writable, and its jobs are skipped with the artisan command to run.
func (s *Service) RouteFor(connection string) Route {
	if s.isDatabaseConnection(connection) {
		if s.Jobs != nil {
			return Route{Connection: connection, Driver: DriverDatabase, Backend: s.Jobs}
		}
		return Route{Connection: connection, Driver: DriverDatabase, Local: true}
	}
	if r, ok := s.Routes[connection]; ok {
		r.Connection = connection
		return r
	}
	reason := fmt.Sprintf("connection %q is not a queue connection of this app's config/queue.php", connection)
	if s.Routes == nil {
		reason = fmt.Sprintf("connection %q is not a database queue (name database-driver connections with --database-connection)", connection)
	}
	return Route{Connection: connection, Reason: reason}
}

// hasRemote reports whether any route needs BatchParams.Push.
func (s *Service) hasRemote() bool {
	if s.Jobs != nil {
		return true
	}
	for _, r := range s.Routes {
		if r.Backend != nil && !r.Local {
			return true
		}
	}
	return false
}

// pushRemote hands a batch's non-local moves to their backends, grouped by
// connection, in the batch's order.
func (s *Service) pushRemote(ctx context.Context, moves []Move, now time.Time) error {
	var order []string
	groups := map[string][]Move{}
	for _, m := range moves {
		if _, ok := groups[m.Connection]; !ok {
			order = append(order, m.Connection)
		}
		groups[m.Connection] = append(groups[m.Connection], m)
	}
	for _, conn := range order {
		r := s.RouteFor(conn)
		if r.Backend == nil {
			return fmt.Errorf("connection %q has no queue backend to push to", conn)
		}
		if _, err := r.Backend.Push(ctx, groups[conn], now); err != nil {
			err = fmt.Errorf("pushing to %s (connection %s): %w", r.Backend.Describe(), conn, err)
			if rej := probeRefused(ctx, r.Backend, groups[conn], now, err); rej != nil {
				return rej
			}
			return err
		}
	}
	return nil
}

// ArtisanRetry is the command an operator runs for jobs jobtriage cannot
// re-queue itself.
func ArtisanRetry(ids []string) string {
	return "php artisan queue:retry " + strings.Join(ids, " ")
}

// selection turns ids or a query into the batch parameters of a bulk write,
// and reports the ids that matched nothing.
func (s *Service) selection(ctx context.Context, q Query, refs []Ref, all bool) ([][]int64, Filter, []string, error) {
	if len(refs) == 0 {
		if !all && q.empty() {
			return nil, Filter{}, nil, fmt.Errorf("%w: name job ids, a filter, or all", ErrInvalidInput)
		}
		return nil, q.filter(), nil, nil
	}
	found, err := s.Store.ResolveRefs(ctx, refs)
	if err != nil {
		return nil, Filter{}, nil, err
	}
	var ids []int64
	var missing []string
	seen := map[int64]bool{}
	for _, r := range refs {
		id, ok := found[r]
		if !ok {
			missing = append(missing, r.String())
			continue
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	var chunks [][]int64
	for i := 0; i < len(ids); i += WriteBatch {
		chunks = append(chunks, ids[i:min(i+WriteBatch, len(ids))])
	}
	return chunks, Filter{}, missing, nil
}

// rechunk splits id chunks into chunks of at most size ids.
func rechunk(chunks [][]int64, size int) [][]int64 {
	var out [][]int64
	for _, c := range chunks {
		for i := 0; i < len(c); i += size {
			out = append(out, c[i:min(i+size, len(c))])
		}
	}
	return out
}

// FirstAfterID starts an ascending keyset scan or batch walk at the lowest
// id a bigint primary key holds.
const FirstAfterID = int64(math.MinInt64)

// batchSeq yields the params of a bulk write's batches: the explicit id
// chunks in order, or ascending keyset batches over the filter, each
// starting after the previous one's last id, until one comes back short.
// It is a value: a copy taken before next is the sequence from that batch.
type batchSeq struct {
	chunks [][]int64
	byIDs  bool
	i      int
	p      BatchParams
	done   bool
}

func newBatchSeq(chunks [][]int64, f Filter, byIDs bool, now time.Time, dry bool, size int) batchSeq {
	// The keyset starts below the lowest id, not at 0: rows with negative
	// (or zero) ids are failed jobs too.
	return batchSeq{chunks: chunks, byIDs: byIDs,
		p: BatchParams{Filter: f, Limit: size, Now: now, DryRun: dry, AfterID: FirstAfterID}}
}

// next is the params of the next batch; false when there is none.
func (q *batchSeq) next() (BatchParams, bool) {
	if q.byIDs {
		if q.i >= len(q.chunks) {
			return BatchParams{}, false
		}
		c := q.chunks[q.i]
		return BatchParams{IDs: c, Limit: len(c), Now: q.p.Now, DryRun: q.p.DryRun}, true
	}
	return q.p, !q.done
}

// advance moves past the batch next gave, which ran with result res.
func (q *batchSeq) advance(res BatchResult) {
	if q.byIDs {
		q.i++
		return
	}
	if res.Locked < q.p.Limit {
		q.done = true
		return
	}
	q.p.AfterID = res.LastID
}

// eachBatch runs a batch operation over the sequence until it ends or
// stop says so.
func eachBatch(ctx context.Context, seq batchSeq, run func(BatchParams) (BatchResult, error), stop func() bool) error {
	for !stop() {
		if err := ctx.Err(); err != nil {
			return err
		}
		bp, ok := seq.next()
		if !ok {
			return nil
		}
		res, err := run(bp)
		if err != nil {
			return err
		}
		seq.advance(res)
	}
	return nil
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
		for _, b := range s.databaseBackends() {
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
		route := s.RouteFor(r.Connection)
		switch {
		case !route.Writable():
			return skip(SkipNotDatabase, route.Reason+"; php artisan queue:retry can")
		case route.Local && !s.Store.Schema().HasJobs:
			return skip(SkipNoJobsTable, fmt.Sprintf("connection %q queues to the %s table, which this database does not have (or not in a usable shape); php artisan queue:retry can",
				r.Connection, s.Store.Schema().JobsTable))
		}
		body, code, reason := retryPayload(r.Payload, now, p.RetryUntil, route.Driver == DriverRedis)
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
		res.IDs = append(res.IDs, j.ID)
		res.ByQueue[queue]++
		res.ByClass[j.Class]++
		if p.OnPushed != nil {
			pushed = append(pushed, Pushed{UUID: uuid, ID: j.ID, Class: j.Class, Connection: r.Connection, Queue: queue})
		}
		return Move{UUID: uuid, Queue: queue, Payload: body, Connection: r.Connection, Local: route.Local, RowID: r.ID,
			RedisChecked: route.Driver == DriverRedis}, true
	}
	var push func(context.Context, []Move, time.Time) error
	if s.hasRemote() {
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
}

func markOf(r RetryResult) retryMark {
	return retryMark{retried: r.Retried, ids: len(r.IDs), skipped: len(r.Skipped),
		byQueue: maps.Clone(r.ByQueue), byClass: maps.Clone(r.ByClass)}
}

func (m retryMark) restore(r *RetryResult) {
	r.Retried = m.retried
	r.IDs = r.IDs[:m.ids]
	r.Skipped = r.Skipped[:m.skipped]
	r.ByQueue = maps.Clone(m.byQueue)
	r.ByClass = maps.Clone(m.byClass)
}

// RetryPayload returns the payload a retried job is pushed with, or why it
// must not be pushed. Only the keys that must change are touched — every
// other byte, data.command above all, stays as Laravel wrote it:
//   - "attempts" is reset to 0 only where the payload carries it (Redis
//     payloads; for the database driver attempts live in the column);
//   - an expired "retryUntil" would make the worker fail the job at once with
//     MaxAttemptsExceededException, so the job is skipped unless extend gives
//     it a new deadline of now+extend.
func RetryPayload(raw []byte, now time.Time, extend time.Duration) (payload []byte, code, reason string) {
	return retryPayload(raw, now, extend, false)
}

// RedisRetryPayload is RetryPayload for a job that goes back to a Redis
// queue. A payload it returns is what Move.RedisChecked promises: a JSON
// object with an integer "attempts" (0) and an "id" that is neither null
// nor empty, each once at the top level.
func RedisRetryPayload(raw []byte, now time.Time, extend time.Duration) (payload []byte, code, reason string) {
	return retryPayload(raw, now, extend, true)
}

// Why a Redis job's payload stays in failed_jobs (see retryPayload).
const (
	redisEmptyID    = `payload "id" is null or empty, which a Redis job needs (left in failed_jobs; see show)`
	redisRepeatsKey = `payload repeats "id" or "attempts" at its top level: a retry would reset the first, Redis's pop script reads the last (left in failed_jobs; see show)`
)

// retryPayload is RetryPayload; forRedis also puts "attempts":0 into a
// payload that lacks it, because Redis's pop script does arithmetic on it
// and loses a job without it inside Redis (queue-spec §6.2), and refuses a
// payload whose "id" is null or empty or that repeats "id" or "attempts"
// (a retry edits the first, Lua's cjson reads the last), so that what it
// returns for Redis needs no second check (Move.RedisChecked).
func retryPayload(raw []byte, now time.Time, extend time.Duration, forRedis bool) (payload []byte, code, reason string) {
	if !gjson.ValidBytes(raw) {
		return nil, SkipMalformed, malformedPayload
	}
	// The walk reads raw in place, not a copy of it (2 KB of garbage per
	// job): raw is never written, and what leaves this function is built
	// anew (applyEdits, sjson) or formatted, never a view of it.
	obj := gjson.Parse(unsafe.String(unsafe.SliceData(raw), len(raw)))
	if !obj.IsObject() {
		return nil, SkipMalformed, malformedPayload
	}
	// One walk over the top-level keys finds every key a retry reads,
	// each at its first occurrence (as a lookup by name finds it); the
	// edits then replace values at the offsets the walk found.
	k := topKeysOf(obj)
	// A worker resolves the handler from "job" (Job::fire parses it with
	// JobName::parse); without it the worker cannot run the job and deletes
	// it without a failure record: lost. Such a payload stays here.
	if k.job.Type != gjson.String || strings.TrimSpace(k.job.String()) == "" {
		return nil, SkipMalformed, `malformed payload: no "job" string naming its handler, so no worker can run it (left in failed_jobs; see show)`
	}
	if forRedis {
		if k.repeated {
			return nil, SkipMalformed, redisRepeatsKey
		}
		if k.id.Exists() && (k.id.Type == gjson.Null || (k.id.Type == gjson.String && k.id.Str == "")) {
			return nil, SkipMalformed, redisEmptyID
		}
	}
	var insert []string // keys a Redis payload must gain, in this order
	if forRedis && !k.id.Exists() {
		// RedisQueue payloads always carry an id (the job id workers
		// report); Horizon uses the uuid for it, and so does a retry.
		if k.uuid.String() == "" {
			return nil, SkipMalformed, "payload has neither id nor uuid, which a Redis job needs (left in failed_jobs; see show)"
		}
		insert = append(insert, "id")
	}
	if forRedis && !k.attempts.Exists() {
		insert = append(insert, "attempts")
	}
	var edits []valueEdit
	if k.attempts.Exists() && (k.attempts.Type != gjson.Number || k.attempts.Raw != "0") {
		edits = append(edits, valueEdit{at: k.attempts.Index, old: k.attempts.Raw, new: "0"})
	}
	if ru := k.retryUntil; ru.Type == gjson.Number && ru.Int() > 0 && ru.Int() <= now.Unix() {
		if extend <= 0 {
			return nil, SkipRetryUntil, fmt.Sprintf("retryUntil passed at %s: the worker would fail it at once "+
				"(MaxAttemptsExceededException); --retry-until gives it a new deadline",
				time.Unix(ru.Int(), 0).UTC().Format(time.RFC3339))
		}
		edits = append(edits, valueEdit{at: ru.Index, old: ru.Raw, new: strconv.FormatInt(now.Add(extend).Unix(), 10)})
	}
	out, ok := applyEdits(raw, edits)
	if !ok {
		// The offsets did not point at the values (cannot happen for a
		// valid payload); edit by name instead.
		return retryPayloadByName(raw, now, extend, forRedis)
	}
	var err error
	for _, key := range insert {
		var v any = 0
		if key == "id" {
			v = k.uuid.String()
		}
		if out, err = sjson.SetBytes(out, key, v); err != nil {
			return nil, SkipMalformed, "payload " + key + " cannot be set: " + err.Error()
		}
	}
	return out, "", ""
}

const malformedPayload = "malformed payload: not a JSON object (left in failed_jobs; see show)"

// topKeys are the top-level values of a payload that a retry reads;
// repeated says "id" or "attempts" occurs more than once.
type topKeys struct {
	job, id, uuid, attempts, retryUntil gjson.Result
	repeated                            bool
}

// topKeysOf walks obj's top-level keys once; a repeated key keeps its first
// value, as gjson.Get finds it.
func topKeysOf(obj gjson.Result) topKeys {
	var k topKeys
	obj.ForEach(func(key, v gjson.Result) bool {
		var dst *gjson.Result
		switch key.Str {
		case "job":
			dst = &k.job
		case "id":
			dst = &k.id
		case "uuid":
			dst = &k.uuid
		case "attempts":
			dst = &k.attempts
		case "retryUntil":
			dst = &k.retryUntil
		default:
			return true
		}
		if !dst.Exists() {
			*dst = v
		} else if dst == &k.id || dst == &k.attempts {
			k.repeated = true
		}
		return true
	})
	return k
}

// valueEdit replaces the value old found at offset at with new.
type valueEdit struct {
	at       int
	old, new string
}

// applyEdits returns raw with the edits made, in a new slice (raw itself
// when there are none); false when an edit's offset does not hold its old
// value.
func applyEdits(raw []byte, edits []valueEdit) ([]byte, bool) {
	if len(edits) == 0 {
		return raw, true
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].at < edits[j].at })
	out := make([]byte, 0, len(raw)+16)
	pos := 0
	for _, e := range edits {
		if e.at < pos || e.at+len(e.old) > len(raw) || string(raw[e.at:e.at+len(e.old)]) != e.old {
			return nil, false
		}
		out = append(append(out, raw[pos:e.at]...), e.new...)
		pos = e.at + len(e.old)
	}
	return append(out, raw[pos:]...), true
}

// retryPayloadByName is retryPayload with every key looked up and edited
// by name: the reference the one-walk version must agree with.
func retryPayloadByName(raw []byte, now time.Time, extend time.Duration, forRedis bool) (payload []byte, code, reason string) {
	if !gjson.ValidBytes(raw) || !gjson.ParseBytes(raw).IsObject() {
		return nil, SkipMalformed, malformedPayload
	}
	if j := gjson.GetBytes(raw, "job"); j.Type != gjson.String || strings.TrimSpace(j.String()) == "" {
		return nil, SkipMalformed, `malformed payload: no "job" string naming its handler, so no worker can run it (left in failed_jobs; see show)`
	}
	if forRedis {
		counts := map[string]int{}
		gjson.ParseBytes(raw).ForEach(func(k, _ gjson.Result) bool {
			counts[k.Str]++
			return true
		})
		if counts["id"] > 1 || counts["attempts"] > 1 {
			return nil, SkipMalformed, redisRepeatsKey
		}
		if id := gjson.GetBytes(raw, "id"); id.Exists() && (id.Type == gjson.Null || (id.Type == gjson.String && id.Str == "")) {
			return nil, SkipMalformed, redisEmptyID
		}
	}
	out := raw
	var err error
	if forRedis && !gjson.GetBytes(raw, "id").Exists() {
		u := gjson.GetBytes(raw, "uuid").String()
		if u == "" {
			return nil, SkipMalformed, "payload has neither id nor uuid, which a Redis job needs (left in failed_jobs; see show)"
		}
		if out, err = sjson.SetBytes(out, "id", u); err != nil {
			return nil, SkipMalformed, "payload id cannot be set: " + err.Error()
		}
	}
	if a := gjson.GetBytes(raw, "attempts"); a.Exists() || forRedis {
		if a.Exists() && a.Type == gjson.Number && a.Raw == "0" {
			// already 0: keep the bytes
		} else if out, err = sjson.SetBytes(out, "attempts", 0); err != nil {
			return nil, SkipMalformed, "payload attempts cannot be reset: " + err.Error()
		}
	}
	ru := gjson.GetBytes(raw, "retryUntil")
	if ru.Type == gjson.Number && ru.Int() > 0 && ru.Int() <= now.Unix() {
		if extend <= 0 {
			return nil, SkipRetryUntil, fmt.Sprintf("retryUntil passed at %s: the worker would fail it at once "+
				"(MaxAttemptsExceededException); --retry-until gives it a new deadline",
				time.Unix(ru.Int(), 0).UTC().Format(time.RFC3339))
		}
		if out, err = sjson.SetBytes(out, "retryUntil", now.Add(extend).Unix()); err != nil {
			return nil, SkipMalformed, "payload retryUntil cannot be set: " + err.Error()
		}
	}
	return out, "", ""
}

// Forget deletes failed jobs by id or by filter, batch by batch.
func (s *Service) Forget(ctx context.Context, p ForgetParams) (ForgetResult, error) {
	res := ForgetResult{DryRun: p.DryRun}
	chunks, f, missing, err := s.selection(ctx, p.Query, p.Refs, p.All)
	if err != nil {
		return res, err
	}
	res.NotFound = missing
	byIDs := len(p.Refs) > 0
	plan := func(r *FailedRow) bool {
		j := p.Query.jobFor(r)
		if !byIDs && !p.Query.match(j) {
			return false
		}
		res.Deleted++
		res.IDs = append(res.IDs, j.ID)
		return true
	}
	conflicts := 0
	run := func(bp BatchParams) (BatchResult, error) {
		bp.NeedException = p.Signature != ""
		bp.Archive = p.Archive
		deleted, ids := res.Deleted, len(res.IDs) // ids are only appended to
		br, err := retryConflicts(ctx, &conflicts, func() (BatchResult, error) {
			res.Deleted, res.IDs = deleted, res.IDs[:ids]
			return s.Store.DeleteBatch(ctx, bp, plan)
		})
		if err != nil {
			res.Deleted, res.IDs = deleted, res.IDs[:ids]
			return br, err
		}
		if p.OnBatch != nil && len(res.IDs) > 0 {
			if err := p.OnBatch(res.IDs); err != nil {
				return br, err
			}
			res.IDs = nil
		}
		if p.Progress != nil {
			p.Progress(res.Deleted)
		}
		return br, nil
	}
	err = sweep(ctx, &conflicts, func() error {
		return eachBatch(ctx, newBatchSeq(chunks, f, byIDs, s.Now(), p.DryRun, WriteBatch), run, func() bool { return false })
	})
	return res, err
}

// Prune deletes the failed jobs older than hours, as queue:prune-failed
// does (failed_at < now − hours, in the app timezone), in short batches.
func (s *Service) Prune(ctx context.Context, hours float64, dry bool, progress func(int64)) (int64, error) {
	return s.PruneArchived(ctx, hours, dry, nil, progress)
}

// PruneArchived is Prune handing each batch's rows to archive, which must
// make them durable, before the batch is deleted (nil: no archive).
func (s *Service) PruneArchived(ctx context.Context, hours float64, dry bool, archive func([]RawRow) error, progress func(int64)) (int64, error) {
	if hours <= 0 {
		return 0, fmt.Errorf("%w: --hours must be greater than 0, got %v", ErrInvalidInput, hours)
	}
	before := s.Now().Add(-time.Duration(hours * float64(time.Hour)))
	return s.Store.DeleteBefore(ctx, PruneParams{Before: before, DryRun: dry, Progress: progress, Archive: archive})
}

// Flush deletes every failed job, or with hours > 0 those that failed at or
// before now − hours (queue:flush --hours, <=), in short batches.
func (s *Service) Flush(ctx context.Context, hours float64, progress func(int64)) (int64, error) {
	return s.FlushArchived(ctx, hours, nil, progress)
}

// FlushArchived is Flush handing each batch's rows to archive before the
// batch is deleted (nil: no archive).
func (s *Service) FlushArchived(ctx context.Context, hours float64, archive func([]RawRow) error, progress func(int64)) (int64, error) {
	if hours < 0 {
		return 0, fmt.Errorf("%w: --hours must not be negative, got %v", ErrInvalidInput, hours)
	}
	if hours == 0 {
		if archive != nil {
			return s.Store.DeleteBefore(ctx, PruneParams{All: true, BatchSize: flushBatch, Progress: progress, Archive: archive})
		}
		return s.Store.DeleteAll(ctx, flushBatch, progress)
	}
	before := s.Now().Add(-time.Duration(hours * float64(time.Hour)))
	return s.Store.DeleteBefore(ctx, PruneParams{Before: before, Inclusive: true, Progress: progress, Archive: archive})
}

// flushBatch is the rows one statement of a flush deletes.
const flushBatch = 1000

// sweep runs a whole pass and, if any batch of it was rolled back and run
// again, runs the pass once more (up to three times). With SKIP LOCKED a
// batch passes over rows another transaction holds, trusting it to move
// them; if that transaction is then rolled back, nobody comes back for
// them. A second pass does, and costs little: what was moved is gone.
func sweep(ctx context.Context, conflicts *int, pass func() error) error {
	for round := 0; ; round++ {
		before := *conflicts
		if err := pass(); err != nil {
			return err
		}
		if *conflicts == before || round == 2 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// retryConflicts runs one batch transaction again when the database chose it
// as a deadlock victim: it was rolled back whole, so running it again is
// safe. InnoDB picks victims among concurrent writers (workers inserting into
// jobs, another jobtriage) even when they share no row.
func retryConflicts(ctx context.Context, conflicts *int, run func() (BatchResult, error)) (BatchResult, error) {
	const attempts = 8
	var err error
	for i := 0; i < attempts; i++ {
		var res BatchResult
		res, err = run()
		if err == nil || !errors.Is(err, ErrConflict) {
			return res, err
		}
		*conflicts++
		select {
		case <-ctx.Done():
			return BatchResult{}, ctx.Err()
		case <-time.After(time.Duration(10*(i+1)*(i+1)) * time.Millisecond):
		}
	}
	return BatchResult{}, err
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

// MoveProber is a queue backend that can say which of a refused push's
// moves it refuses for reasons of their own, without keeping any of them.
type MoveProber interface {
	// ProbeMoves tries each move alone and returns, by index, why the
	// backend refuses it ("" for a move it takes); an error when the
	// refusal of the push is not about particular moves.
	ProbeMoves(ctx context.Context, moves []Move, now time.Time, pushErr error) ([]string, error)
}

// probeRefused turns a failed push into RejectedRows when the backend can
// name the moves it refused (a jobs table in another database): the batch
// then runs again without their rows, as for the local jobs table.
func probeRefused(ctx context.Context, b QueueBackend, moves []Move, now time.Time, pushErr error) *RejectedRows {
	pr, ok := b.(MoveProber)
	if !ok || ctx.Err() != nil {
		return nil
	}
	reasons, err := pr.ProbeMoves(ctx, moves, now, pushErr)
	if err != nil {
		return nil
	}
	rej := &RejectedRows{Cause: pushErr}
	for i, why := range reasons {
		if why != "" && i < len(moves) && moves[i].RowID != 0 {
			rej.Rows = append(rej.Rows, RejectedRow{ID: moves[i].RowID, Reason: why})
		}
	}
	if len(rej.Rows) == 0 {
		return nil
	}
	return rej
}

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
	for _, r := range s.databaseBackends() {
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

// databaseBackends are the routes to jobs tables a retry may write to.
func (s *Service) databaseBackends() []Route {
	var out []Route
	if s.Jobs != nil {
		out = append(out, Route{Driver: DriverDatabase, Backend: s.Jobs})
	} else if s.Store.Schema().HasJobs {
		out = append(out, Route{Driver: DriverDatabase, Local: true})
	}
	for _, r := range s.Routes {
		if r.Driver == DriverDatabase && r.Backend != nil && !r.Local {
			out = append(out, r)
		}
	}
	return out
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
