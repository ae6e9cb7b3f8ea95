package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/jobtriage/jobtriage/triage"
)

// LedgerTable records the uuids a JobsBackend with Ledger pushed. It is
// jobtriage's own table, created only when the operator opts in.
const LedgerTable = "jobtriage_pushed"

// JobsBackend is the jobs table of a database other than failed_jobs' as a
// triage.QueueBackend: Store is opened with Config.JobsOnly. It pushes as
// DatabaseQueue::pushRaw does (insertJobs) and counts with QueueStats.
//
// Without Ledger, a push skips the uuids still waiting in jobs, so a job
// that a worker ran (and deleted) between a crashed run and its re-run is
// queued again: the documented window of a store without a record. With
// Ledger, every pushed uuid is also recorded in LedgerTable, in the same
// transaction as its jobs row, and a recorded uuid is never pushed again.
// The ledger changes the application's schema, so it is opt-in, and its
// table is created on the first push that needs it.
type JobsBackend struct {
	*Store // its Close, JobStates and QueueColumn serve the backend
	Ledger bool

	mu          sync.Mutex
	ledgerReady bool
}

var _ triage.QueueBackend = (*JobsBackend)(nil)

// Describe names the jobs table and its database, without the password.
func (b *JobsBackend) Describe() string {
	d := "jobs table " + b.Store.schema.JobsTable + " on " + b.Store.ep.Redacted()
	if b.Ledger {
		d += " (push ledger " + b.ledger().String() + ")"
	}
	return d
}

// Stats is the store's QueueStats: queues without rows are absent.
func (b *JobsBackend) Stats(ctx context.Context, p triage.QueueStatsParams) ([]triage.QueueStats, error) {
	return b.Store.QueueStats(ctx, p)
}

// Push inserts the moves into jobs in one transaction, each uuid at most
// once: a uuid repeated within the call, still queued in
// jobs, or (with Ledger) recorded as pushed before counts as Already. Moves
// without a uuid are always inserted. A cancelled ctx makes Push roll back
// and return an error wrapping ctx.Err().
func (b *JobsBackend) Push(ctx context.Context, moves []triage.Move, now time.Time) (triage.PushResult, error) {
	unique, repeated := firstOfEachUUID(moves)
	var err error
	if b.Ledger {
		err = b.ensureLedger(ctx)
	}
	var n int
	if err == nil {
		n, err = b.push(ctx, unique, now)
	}
	if err != nil {
		if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			// The drivers report a cancelled statement in their own words
			// ("canceling statement due to user request", "bad
			// connection"); the caller must still see the cancellation.
			err = fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		return triage.PushResult{}, err
	}
	return triage.PushResult{Pushed: n, Already: len(unique) - n + repeated}, nil
}

// firstOfEachUUID drops the later moves of a uuid the call already has.
func firstOfEachUUID(moves []triage.Move) (unique []triage.Move, repeated int) {
	seen := make(map[string]bool, len(moves))
	unique = make([]triage.Move, 0, len(moves))
	for _, m := range moves {
		if m.UUID != "" {
			if seen[m.UUID] {
				repeated++
				continue
			}
			seen[m.UUID] = true
		}
		unique = append(unique, m)
	}
	return unique, repeated
}

// push skips, in one transaction, the uuids still queued (queuedUUIDs) or,
// with the ledger, recorded; records the others and inserts their jobs.
// Two runs recording the same uuid at once collide on the ledger's primary
// key; the loser rolls back whole and reports triage.ErrConflict.
//
// Where writes are detached (PostgreSQL) its statements do not watch ctx
// either: lib/pq, cancelled inside the COPY of insertJobs, sends ROLLBACK
// and waits for an answer the server (waiting for COPY data) does not give
// until idle_in_transaction_session_timeout ends the session. Cancellation
// is honoured between statements instead, and always before the commit.
func (b *JobsBackend) push(ctx context.Context, moves []triage.Move, now time.Time) (int, error) {
	s := b.Store
	if err := s.requireJobs(); err != nil {
		return 0, err
	}
	txCtx := ctx
	if s.d.detachedWrites {
		txCtx = context.WithoutCancel(ctx)
	}
	tx, err := s.beginWrite(txCtx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit this is a no-op
	var known map[string]bool
	if b.Ledger {
		if known, err = b.recorded(txCtx, tx, moves); err != nil {
			return 0, err
		}
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	queued, err := s.queuedUUIDs(txCtx, tx, moves)
	if err != nil {
		return 0, err
	}
	var fresh []triage.Move
	var record []string
	for _, m := range moves {
		switch {
		case m.UUID == "":
			fresh = append(fresh, m)
		case !known[ledgerKey(m)] && !queued[m.UUID]:
			fresh = append(fresh, m)
			record = append(record, ledgerKey(m))
		case !known[ledgerKey(m)]:
			// Queued by a run without the ledger: record it now, so that
			// the record outlives the job.
			record = append(record, ledgerKey(m))
		}
	}
	if b.Ledger {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if err := b.record(txCtx, tx, record, now.Unix()); err != nil {
			return 0, err
		}
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := s.insertJobs(txCtx, tx, fresh, now.Unix()); err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := tx.Commit(); err != nil {
		e := s.queryError(err)
		if b.Ledger {
			e = b.ledgerError(err)
		}
		if !errors.Is(e, triage.ErrConflict) {
			// The server may have committed before the answer was lost.
			e = fmt.Errorf("%w: the commit's outcome is unknown (%w)", e, triage.ErrInDoubt)
		}
		return 0, e
	}
	return len(fresh), nil
}

// RecordsPushes says whether the backend keeps the ledger (triage.PushRecorder).
func (b *JobsBackend) RecordsPushes() bool { return b.Ledger }

// ledger is the ledger's table, in the jobs table's schema.
func (b *JobsBackend) ledger() tableName {
	jobs, _ := parseTableName(b.Store.schema.JobsTable) // Open checked it
	return tableName{schema: jobs.schema, name: LedgerTable}
}

// LedgerDDL is the statement that creates the ledger, for an operator who
// creates it by hand (columns: dialect.ledgerColumns).
func (b *JobsBackend) LedgerDDL() string {
	return "CREATE TABLE IF NOT EXISTS " + b.ledger().quoted(b.Store.d) + " " + b.Store.d.ledgerColumns
}

// ensureLedger creates the ledger once per backend.
func (b *JobsBackend) ensureLedger(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ledgerReady {
		return nil
	}
	_, err := b.Store.db.ExecContext(ctx, b.LedgerDDL())
	if uniqueViolation.match(err) || duplicateObject.match(err) {
		// PostgreSQL: a concurrent CREATE TABLE IF NOT EXISTS of the same
		// table loses on the catalog's unique index (23505) or on its row
		// type (42710 duplicate_object); the table exists now.
		_, err = b.Store.db.ExecContext(ctx, b.LedgerDDL())
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("creating the push ledger %s on %s (or create it yourself: %s): %w",
			b.ledger().String(), b.Store.ep.Redacted(), b.LedgerDDL(), b.Store.queryError(err))
	}
	b.ledgerReady = true
	return nil
}

// ledgerKey is what the ledger records of a move: its PushKey, so that a
// job that failed again (a new failed_jobs row) is pushed again; the uuid
// alone where the key would not fit the column.
func ledgerKey(m triage.Move) string {
	if k := m.PushKey(); len(k) <= ledgerKeyMax {
		return k
	}
	return m.UUID
}

// ledgerKeyMax is the width of the ledger's key column (varchar(255)).
const ledgerKeyMax = 255

// recorded returns which of the moves' ledger keys the ledger holds.
func (b *JobsBackend) recorded(ctx context.Context, tx *sqlx.Tx, moves []triage.Move) (map[string]bool, error) {
	var uuids []any
	for _, m := range moves {
		if m.UUID != "" {
			uuids = append(uuids, ledgerKey(m))
		}
	}
	out := make(map[string]bool, len(uuids))
	err := b.Store.selectIn(ctx, tx, "SELECT uuid FROM "+b.ledger().quoted(b.Store.d)+" WHERE uuid IN (", uuids, func(rows *sql.Rows) error {
		var u string
		if err := rows.Scan(&u); err != nil {
			return err
		}
		out[u] = true
		return nil
	})
	return out, err
}

func (b *JobsBackend) record(ctx context.Context, tx *sqlx.Tx, uuids []string, now int64) error {
	head := "INSERT INTO " + b.ledger().quoted(b.Store.d) + " (uuid, pushed_at) "
	err := b.Store.insertChunked(ctx, tx, head, "(?, ?)", len(uuids), func(k int) []any { return []any{uuids[k], now} })
	if err != nil {
		return b.ledgerError(err)
	}
	return nil
}

// ledgerError reports a uuid another run recorded meanwhile as a conflict
// (the transaction rolled back; running it again is safe and skips it).
func (b *JobsBackend) ledgerError(err error) error {
	if uniqueViolation.match(err) {
		return fmt.Errorf("%w: another run recorded one of these jobs in %s at the same time: %s",
			triage.ErrConflict, b.ledger().String(), scrub(err, b.Store.ep))
	}
	return b.Store.writeError(err, b.ledger().String())
}

// Queues lists the queues with rows in the jobs table.
func (b *JobsBackend) Queues(ctx context.Context) ([]string, error) {
	stats, err := b.Store.QueueStats(ctx, triage.QueueStatsParams{Now: time.Now()})
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(stats))
	for _, s := range stats {
		out = append(out, s.Queue)
	}
	return out, nil
}
