package sqlstore

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/jobtriage/jobtriage/triage"
)

// beginWrite starts a write transaction at the dialect's writeIsolation,
// detached from ctx's cancellation where the dialect needs it
// (detachedWrites).
func (s *Store) beginWrite(ctx context.Context) (*sqlx.Tx, error) { return s.beginWriteOn(ctx, s.db) }

// beginWriteOn is beginWrite on the pool or on one connection.
func (s *Store) beginWriteOn(ctx context.Context, db interface {
	BeginTxx(context.Context, *sql.TxOptions) (*sqlx.Tx, error)
}) (*sqlx.Tx, error) {
	opts := &sql.TxOptions{Isolation: s.d.writeIsolation}
	txCtx := ctx
	if s.d.detachedWrites {
		txCtx = context.WithoutCancel(ctx)
	}
	tx, err := db.BeginTxx(txCtx, opts)
	if err != nil {
		return nil, s.queryError(err)
	}
	return tx, nil
}

// batchColumns is the column list of a write batch: whole payloads (the
// retry edits them) and exception heads (for signature filters).
func (s *Store) batchColumns(p triage.BatchParams) (string, []any) {
	sel, selArgs := s.selectList(false)
	sel = strings.Replace(sel, s.listPayload()+" AS payload", "payload", 1)
	if !p.NeedException {
		// Cutting the top exception out of every 4 KB trace is work only a
		// signature filter needs.
		sel, selArgs = strings.Replace(sel, s.exceptionHead()+" AS exception", "'' AS exception", 1), nil
	}
	return sel, selArgs
}

// batchWhere is the condition of a write batch: its ids, or its filter,
// after p.AfterID; with its arguments, AfterID last.
func (s *Store) batchWhere(ctx context.Context, tx *sqlx.Tx, p triage.BatchParams) (string, []any, error) {
	var cond string
	var args []any
	if len(p.IDs) > 0 {
		cond, args = "id IN ("+marks(len(p.IDs))+")", anys(p.IDs)
	} else {
		// The --since bound is a starting id, found for the first batch
		// (AfterID triage.FirstAfterID, or 0): a later one starts past it.
		// Found again after an id <= 0, it is below every later id.
		f := p.Filter
		if p.AfterID <= 0 {
			var err error
			if f, err = s.withSinceBound(ctx, tx, p.Filter); err != nil {
				return "", nil, err
			}
		}
		cond, args = s.where(f)
	}
	return cond + " AND id > ?", append(args, p.AfterID), nil
}

// lockBatch selects and locks the next batch of a write.
func (s *Store) lockBatch(ctx context.Context, tx *sqlx.Tx, p triage.BatchParams) ([]*triage.FailedRow, error) {
	sel, selArgs := s.batchColumns(p)
	cond, args, err := s.batchWhere(ctx, tx, p)
	if err != nil {
		return nil, err
	}
	// The lock (dialect.lockRows) keeps two retries from moving one job
	// twice. A dry run changes nothing, so it locks nothing: its locks would
	// make a concurrent retry skip (and leave behind) the rows it only
	// counts, and on PostgreSQL FOR UPDATE needs a privilege a read-only
	// user lacks.
	lock := s.d.lockRows
	if p.DryRun {
		lock = ""
	}
	q := "SELECT " + sel + " FROM " + s.failed + " WHERE " + cond + " ORDER BY id LIMIT ?" + lock
	all := append(append(append([]any{}, selArgs...), args...), p.Limit)
	rows, err := tx.QueryContext(ctx, s.db.Rebind(q), all...)
	if err != nil {
		return nil, s.writeError(err, s.schema.FailedTable)
	}
	return s.scanLocked(rows)
}

func (s *Store) scanLocked(rows *sql.Rows) ([]*triage.FailedRow, error) {
	defer rows.Close()
	var out []*triage.FailedRow
	for rows.Next() {
		r, err := s.scanRow(rows, false)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, s.queryError(err)
	}
	return out, nil
}

func marks(n int) string { return tuples("?", n) }

// tuples is n copies of row, comma-separated.
func tuples(row string, n int) string { return strings.TrimSuffix(strings.Repeat(row+", ", n), ", ") }

// anys is a list of values as query arguments.
func anys[T any](vals []T) []any {
	out := make([]any, len(vals))
	for i, v := range vals {
		out[i] = v
	}
	return out
}

// TakeBatch begins a batch's transaction and takes the batch: for a retry
// on MariaDB by DELETE … RETURNING (takeByDelete), elsewhere, in forgets
// and in dry runs by a locking SELECT (lockBatch) whose rows Commit
// deletes. Commit inserts the moved jobs into jobs as pushRaw does and
// deletes their rows in that one transaction, so a crash at any moment
// leaves every job in exactly one of the two tables.
func (s *Store) TakeBatch(ctx context.Context, p triage.BatchParams) (triage.Batch, error) {
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return nil, err
	}
	b := &batch{s: s, tx: tx, p: p, byLock: !s.deleteReturning || !p.Retry || p.DryRun}
	if !b.byLock {
		// One row whose delete is refused fails the whole DELETE: such a
		// batch is taken by lock, whose deletes isolate the row (deleteRows).
		if err = b.takeByDelete(ctx); rowData.match(err) {
			_, err = tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT jobtriage_batch")
			b.byLock = true
		}
	}
	if b.byLock && err == nil {
		b.rows, err = s.lockBatch(ctx, tx, p)
	}
	if err != nil {
		_ = tx.Rollback()
		return nil, err
	}
	return b, nil
}

// batch is a batch TakeBatch took, in tx, not yet committed: its rows
// locked (byLock), or already deleted after the savepoint jobtriage_batch.
type batch struct {
	s      *Store
	tx     *sqlx.Tx
	p      triage.BatchParams
	byLock bool
	rows   []*triage.FailedRow
	d      triage.Decision
}

func (b *batch) Rows() []*triage.FailedRow { return b.rows }

// QueuedUUIDs finds which of the moves' uuids are in jobs already, in the
// batch's transaction (triage.QueuedReader).
func (b *batch) QueuedUUIDs(ctx context.Context, moves []triage.Move) (map[string]bool, error) {
	return b.s.queuedUUIDs(ctx, b.tx, moves)
}

// Raw reads the locked rows as stored; a batch taken by deleting its rows
// has none left to read.
func (b *batch) Raw(ctx context.Context, ids []int64) ([]triage.RawRow, error) {
	if !b.byLock {
		return nil, errors.New("sqlstore: Raw of a batch taken for a retry")
	}
	return b.s.rawByIDs(ctx, b.tx, ids)
}

// takeByDelete is MariaDB's retry batch in one pass over failed_jobs
// instead of three: DELETE … RETURNING locks, reads and deletes the batch,
// and the moves are made from what it returned. Separate statements visit
// each row three times, which on InnoDB, with the purge of earlier
// batches' deletes competing for the buffer pool, made a large retry much
// slower (bench/README.md). Decide puts back the rows the decision leaves.
func (b *batch) takeByDelete(ctx context.Context) error {
	s, tx, p := b.s, b.tx, b.p
	if _, err := tx.ExecContext(ctx, "SAVEPOINT jobtriage_batch"); err != nil {
		return s.queryError(err)
	}
	sel, selArgs := s.batchColumns(p)
	cond, args, err := s.batchWhere(ctx, tx, p)
	if err != nil {
		return err
	}
	q := "DELETE FROM " + s.failed + " WHERE " + cond + " ORDER BY id LIMIT ? RETURNING " + sel
	all := append(append(append([]any{}, args...), p.Limit), selArgs...)
	rs, err := tx.QueryContext(ctx, s.db.Rebind(q), all...)
	if err != nil {
		return s.writeError(err, s.schema.FailedTable)
	}
	if b.rows, err = s.scanLocked(rs); err != nil {
		return err
	}
	slices.SortFunc(b.rows, func(x, y *triage.FailedRow) int { return cmp.Compare(x.ID, y.ID) })
	return nil
}

// Decide keeps the decision for Commit and deletes, before anything is
// pushed or archived, the rows no local move copies from (those Commit
// deletes after their insert), so that a row whose delete is refused
// (deleteRows) is never queued twice. A batch taken by deleting its rows
// puts back the rows the decision leaves by rolling back to the savepoint
// taken before the DELETE and deletes the accepted ones again — before the
// next batch is taken, which could otherwise hold a row this delete waits for.
func (b *batch) Decide(ctx context.Context, d triage.Decision) error {
	b.d = d
	if b.p.DryRun || len(d.Delete) == 0 || (!b.byLock && len(d.Delete) == len(b.rows)) {
		return nil // with none accepted, Commit rolls every row back
	}
	ids := d.Delete
	if b.byLock {
		local := map[int64]bool{}
		for _, m := range d.Local {
			local[m.RowID] = true
		}
		ids = slices.DeleteFunc(slices.Clone(ids), func(id int64) bool { return local[id] })
	} else if _, err := b.tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT jobtriage_batch"); err != nil {
		_ = b.tx.Rollback()
		return b.s.queryError(err)
	}
	err := b.s.deleteBatch(ctx, b.tx, ids)
	if err != nil {
		_ = b.tx.Rollback()
	}
	return err
}

// Commit inserts the local moves, deletes the rows and commits: a crash
// before the commit leaves every row in failed_jobs, and a re-run's push
// skips the jobs already pushed. A dry run commits nothing.
func (b *batch) Commit(ctx context.Context) error {
	s, tx, d := b.s, b.tx, b.d
	defer tx.Rollback() //nolint:errcheck // after Commit this is a no-op
	if b.p.DryRun || len(d.Delete) == 0 {
		return nil // the deferred rollback puts every row back
	}
	now := b.p.Now.Unix()
	if len(d.Local) > 0 {
		if err := s.requireJobs(); err != nil {
			return err
		}
		// A job going back to its own queue with its payload untouched
		// (the common case) is copied by the server, not sent back over
		// the wire — while its row is still there to copy from.
		var verbatim []int64
		var edited []triage.Move
		rows := map[int64]*triage.FailedRow{}
		if b.byLock {
			for _, r := range b.rows {
				rows[r.ID] = r
			}
		}
		for _, m := range d.Local {
			if r := rows[m.RowID]; r != nil && m.Queue == r.Queue && bytes.Equal(m.Payload, r.Payload) {
				verbatim = append(verbatim, m.RowID)
			} else {
				edited = append(edited, m)
			}
		}
		if err := s.copyVerbatim(ctx, tx, verbatim, now); err != nil {
			return s.isolate(ctx, tx, err, d.Local, now)
		}
		if err := s.insertJobs(ctx, tx, edited, now); err != nil {
			return s.isolate(ctx, tx, err, d.Local, now)
		}
	}
	if b.byLock {
		ids := make([]int64, len(d.Local))
		for i, m := range d.Local {
			ids[i] = m.RowID
		}
		if err := s.deleteBatch(ctx, tx, ids); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return s.queryError(err)
	}
	return nil
}

// Rollback abandons the batch.
func (b *batch) Rollback() { _ = b.tx.Rollback() }

// isolate turns a batch insert into jobs that failed for a row-specific
// reason (a value the column cannot hold, a constraint) into
// triage.RejectedRows naming those rows, so that the batch can run again
// without them instead of failing every run at the same batch. The batch's
// transaction is rolled back first, then probe changes nothing. Any other
// error, or a probe in which no row fails alone, returns err as it was.
func (s *Store) isolate(ctx context.Context, batch *sqlx.Tx, err error, moves []triage.Move, now int64) error {
	if !rowData.match(err) || len(moves) == 0 || ctx.Err() != nil {
		return err
	}
	// The batch's locks go first: SQLite has one writer, and the probe
	// must not wait for a transaction that is over anyway.
	_ = batch.Rollback()
	reasons, perr := s.probe(ctx, moves, now)
	if perr != nil {
		return err
	}
	rej := &triage.RejectedRows{Cause: s.writeError(err, s.schema.JobsTable)}
	for i, why := range reasons {
		if why != "" {
			rej.Rows = append(rej.Rows, triage.RejectedRow{ID: moves[i].RowID, Reason: why})
		}
	}
	if len(rej.Rows) == 0 {
		return err
	}
	return rej
}

// errNotRowSpecific stops a probe: a move failed alone for a reason that
// is not its own (the session, the table), so no move is to blame.
var errNotRowSpecific = errors.New("a refusal that is not about one row")

// probe inserts each move into jobs alone, under a savepoint, in a
// transaction that is rolled back whole, and returns by index why the
// table refuses a move ("" where it takes it).
func (s *Store) probe(ctx context.Context, moves []triage.Move, now int64) ([]string, error) {
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback() //nolint:errcheck // the probe never commits
	reasons := make([]string, len(moves))
	q := s.db.Rebind(s.jobsInsert() + "VALUES " + jobsRow)
	for i, m := range moves {
		if _, err := tx.ExecContext(ctx, "SAVEPOINT jobtriage_probe"); err != nil {
			return nil, err
		}
		var payload any = m.Payload
		if s.d.bytesAreBinary {
			payload = string(m.Payload) // text, not bytea
		}
		if _, err := tx.ExecContext(ctx, q, m.Queue, now, now, payload); err != nil {
			if !rowData.match(err) {
				return nil, errNotRowSpecific
			}
			reasons[i] = scrub(err, s.ep)
		}
		if _, err := tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT jobtriage_probe"); err != nil {
			return nil, err
		}
	}
	return reasons, nil
}

// ProbeMoves names the moves of a refused push that the other database's
// jobs table refuses for reasons of their own (triage.MoveProber); a push
// that failed for any other reason is not probed.
func (b *JobsBackend) ProbeMoves(ctx context.Context, moves []triage.Move, now time.Time, pushErr error) ([]string, error) {
	if !rowData.match(pushErr) {
		return nil, errNotRowSpecific
	}
	return b.Store.probe(ctx, moves, now.Unix())
}

// QueueColumn reads what the jobs table's queue column holds from the
// catalog: varchar(n) and char(n) hold n characters (PostgreSQL, MySQL);
// MySQL's text types hold a number of bytes; SQLite enforces no length.
func (s *Store) QueueColumn(ctx context.Context) (triage.QueueColumn, error) {
	t, err := parseTableName(s.schema.JobsTable)
	if err != nil {
		return triage.QueueColumn{}, err
	}
	cols, err := s.columns(ctx, t)
	if err != nil {
		return triage.QueueColumn{}, err
	}
	c, ok := cols["queue"]
	if !ok {
		return triage.QueueColumn{}, fmt.Errorf("%s has no queue column", t)
	}
	return queueColumnOf(s.d.name, s.schema.JobsTable, c.typ), nil
}

// mysqlTextBytes are the byte limits of MySQL's text types.
var mysqlTextBytes = map[string]int{"tinytext": 255, "text": 65535, "mediumtext": 16777215}

// queueColumnOf reads a declared type ("character varying(255)",
// "varchar(255)", "tinytext").
func queueColumnOf(dialect, table, typ string) triage.QueueColumn {
	c := triage.QueueColumn{Type: typ, Table: table}
	if dialect == "sqlite" {
		return c // SQLite keeps any length in any column
	}
	base, arg := typ, ""
	if i := strings.IndexByte(typ, '('); i >= 0 {
		base = strings.TrimSpace(typ[:i])
		if j := strings.IndexByte(typ[i:], ')'); j > 0 {
			arg = typ[i+1 : i+j]
		}
	}
	switch base {
	case "varchar", "char", "character varying", "character", "nvarchar", "nchar":
		var n int
		if _, err := fmt.Sscanf(arg, "%d", &n); err == nil && n > 0 {
			c.MaxChars = n
		}
	default:
		if dialect == "mysql" {
			c.MaxBytes = mysqlTextBytes[base]
		}
	}
	return c
}

// copyVerbatim inserts the failed rows with these ids into jobs as they are
// (their own queue, their payload bytes), in id order, as pushRaw would.
func (s *Store) copyVerbatim(ctx context.Context, tx *sqlx.Tx, ids []int64, now int64) error {
	if len(ids) == 0 {
		return nil
	}
	q := s.jobsInsert() + "SELECT queue, 0, NULL, ?, ?, payload FROM " + s.failed + " WHERE id IN (" + marks(len(ids)) + ") ORDER BY id"
	if _, err := tx.ExecContext(ctx, s.db.Rebind(q), append([]any{now, now}, anys(ids)...)...); err != nil {
		return s.writeError(err, s.schema.JobsTable)
	}
	return nil
}

// jobsInsert and jobsRow insert into jobs as DatabaseQueue::pushRaw does:
// attempts 0, reserved_at NULL, available_at = created_at = now.
func (s *Store) jobsInsert() string {
	return "INSERT INTO " + s.jobs + " (queue, attempts, reserved_at, available_at, created_at, payload) "
}

const jobsRow = "(?, 0, NULL, ?, ?, ?)"

// insertJobs inserts the moves (jobsInsert), by COPY where the dialect has
// it (bulkCopy).
func (s *Store) insertJobs(ctx context.Context, tx *sqlx.Tx, moves []triage.Move, now int64) error {
	if len(moves) == 0 {
		return nil
	}
	if s.d.bulkCopy {
		cols := []string{"queue", "attempts", "reserved_at", "available_at", "created_at", "payload"}
		err := copyIn(ctx, tx, s.jobs, cols, func(put func(...any) error) error {
			for _, m := range moves {
				// The payload goes as text: pq would send []byte as bytea.
				if err := put(m.Queue, int64(0), nil, now, now, string(m.Payload)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return s.writeError(err, s.schema.JobsTable)
		}
		return nil
	}
	err := s.insertChunked(ctx, tx, s.jobsInsert(), jobsRow, len(moves), func(k int) []any {
		return []any{moves[k].Queue, now, now, moves[k].Payload}
	})
	if err != nil {
		return s.writeError(err, s.schema.JobsTable)
	}
	return nil
}

// queuedUUIDs finds which of the moves' uuids are already in jobs. jobs has
// no uuid column, but Laravel writes "uuid" as the payload's first key, so
// the heads of the rows on the batch's queues are enough (jobs is indexed
// on queue).
func (s *Store) queuedUUIDs(ctx context.Context, tx *sqlx.Tx, moves []triage.Move) (map[string]bool, error) {
	queues := map[string]bool{}
	var args []any
	for _, m := range moves {
		if !queues[m.Queue] {
			queues[m.Queue] = true
			args = append(args, m.Queue)
		}
	}
	out := map[string]bool{}
	q := "SELECT " + s.d.head("payload", jobStateHeadChars) + " FROM " + s.jobs + " WHERE queue IN ("
	err := s.selectIn(ctx, tx, q, args, func(rows *sql.Rows) error {
		var head string
		err := rows.Scan(&head)
		if u := payloadUUID(head); u != "" {
			out[u] = true
		}
		return err
	})
	return out, err
}

// payloadUUID reads the "uuid" of a payload head.
func payloadUUID(head string) string {
	const key = `"uuid":"`
	i := strings.Index(head, key)
	if i < 0 {
		return ""
	}
	rest := head[i+len(key):]
	if j := strings.IndexByte(rest, '"'); j > 0 {
		return rest[:j]
	}
	return ""
}

// deleteBatch deletes a batch's rows, held locked: a row whose delete is
// refused (deleteRows) makes it triage.RejectedRows naming the row (Delete
// set), to run again without it; a row missing under its lock, a conflict.
func (s *Store) deleteBatch(ctx context.Context, tx *sqlx.Tx, ids []int64) error {
	n, kept, err := s.deleteRows(ctx, tx, ids)
	switch {
	case err != nil:
		return err
	case len(kept) > 0:
		return &triage.RejectedRows{Rows: kept, Cause: fmt.Errorf("%s refused to delete %d row(s)", s.schema.FailedTable, len(kept))}
	case n != int64(len(ids)):
		return fmt.Errorf("failed_jobs: %d of %d rows vanished under their locks: %w", int64(len(ids))-n, len(ids), triage.ErrConflict)
	}
	return nil
}

// errSilentHold is the reason of a row a DELETE left without an error.
var errSilentHold = errors.New("the delete changed nothing: a trigger or row security keeps it")

// deleteRows deletes the rows with these ids in tx. A delete refused for a
// reason of a row's own — a trigger's error or a constraint (rowData), or
// fewer rows deleted than asked, which is how a trigger returning nothing
// or row security keeps a row silently — is undone and made again row by
// row, each under a savepoint, so that only the refused rows stay: those
// are returned with the database's reason, the others deleted (n).
func (s *Store) deleteRows(ctx context.Context, tx *sqlx.Tx, ids []int64) (n int64, kept []triage.RejectedRow, err error) {
	if _, err := tx.ExecContext(ctx, "SAVEPOINT jobtriage_delete"); err != nil {
		return 0, nil, s.queryError(err)
	}
	if n, err = s.deleteCounted(ctx, tx, ids); (err == nil && n == int64(len(ids))) || (err != nil && !rowData.match(err)) {
		return n, nil, err
	}
	if _, err := tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT jobtriage_delete"); err != nil {
		return 0, nil, s.queryError(err)
	}
	n = 0
	q := s.db.Rebind("DELETE FROM " + s.failed + " WHERE id = ?")
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, "SAVEPOINT jobtriage_delete"); err != nil {
			return n, kept, s.queryError(err)
		}
		r, err := tx.ExecContext(ctx, q, id)
		var c int64
		if err == nil {
			c, err = r.RowsAffected()
		}
		switch {
		case err != nil && !rowData.match(err):
			return n, kept, s.writeError(err, s.schema.FailedTable)
		case err == nil && c == 1:
			n++
			continue
		case err == nil:
			err = errSilentHold
		}
		kept = append(kept, triage.RejectedRow{ID: id, Reason: scrub(err, s.ep), Delete: true})
		if _, err := tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT jobtriage_delete"); err != nil {
			return n, kept, s.queryError(err)
		}
	}
	return n, kept, nil
}

// deleteCounted deletes the rows with these ids and says how many there were.
func (s *Store) deleteCounted(ctx context.Context, tx *sqlx.Tx, ids []int64) (int64, error) {
	const perDelete = 1000
	var n int64
	for i := 0; i < len(ids); i += perDelete {
		j := min(i+perDelete, len(ids))
		q := "DELETE FROM " + s.failed + " WHERE id IN (" + marks(j-i) + ")"
		r, err := tx.ExecContext(ctx, s.db.Rebind(q), anys(ids[i:j])...)
		if err != nil {
			return n, s.writeError(err, s.schema.FailedTable)
		}
		c, err := r.RowsAffected()
		if err != nil {
			return n, s.queryError(err)
		}
		n += c
	}
	return n, nil
}

// ResolveRefs finds the row ids of the given refs; refs not found are absent
// from the map.
func (s *Store) ResolveRefs(ctx context.Context, refs []triage.Ref) (map[triage.Ref]int64, error) {
	out := map[triage.Ref]int64{}
	var uuids, ids []any
	for _, r := range refs {
		switch {
		case r.UUID != "" && s.schema.IDMode == triage.IDModeUUID:
			uuids = append(uuids, r.UUID)
		case r.ID > 0:
			ids = append(ids, r.ID)
		}
	}
	err := s.selectIn(ctx, s.db, "SELECT id, uuid FROM "+s.failed+" WHERE uuid IN (", uuids, func(rows *sql.Rows) error {
		var id int64
		var uuid string
		err := rows.Scan(&id, &uuid)
		out[triage.Ref{UUID: uuid}] = id
		return err
	})
	if err == nil {
		err = s.selectIn(ctx, s.db, "SELECT id FROM "+s.failed+" WHERE id IN (", ids, func(rows *sql.Rows) error {
			var id int64
			err := rows.Scan(&id)
			out[triage.Ref{ID: id}] = id
			return err
		})
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Count counts the rows matching a SQL filter (for confirmations).
func (s *Store) Count(ctx context.Context, f triage.Filter) (int64, error) {
	cond, args := s.where(f)
	var n int64
	if err := s.db.QueryRowContext(ctx, s.db.Rebind("SELECT COUNT(*) FROM "+s.failed+" WHERE "+cond), args...).Scan(&n); err != nil {
		return 0, s.queryError(err)
	}
	return n, nil
}

// writeError explains a write the database refused for lack of privilege:
// which table and which grants, where the driver names an error code.
// Other errors are ordinary query errors. Neither shows the password.
func (s *Store) writeError(err error, table string) error {
	return s.deniedError(err, table, fmt.Sprintf("retry and forget need SELECT, UPDATE and DELETE on %s and INSERT on %s",
		s.schema.FailedTable, s.schema.JobsTable))
}

// deniedError is writeError for the operation whose grants need names
// ("prune and flush need …"). A denial already explained for another
// operation is explained again for this one.
func (s *Store) deniedError(err error, table, need string) error {
	if !permissionDenied.match(err) {
		return s.queryError(err)
	}
	var explained *dbError
	if errors.As(err, &explained) {
		err = explained.cause
	}
	who := "this database user"
	if s.ep.User != "" {
		who = fmt.Sprintf("user %q", s.ep.User)
	}
	return &dbError{msg: fmt.Sprintf("%s may not write to %s on %s: %s (%s)",
		who, table, s.ep.Redacted(), need, scrub(err, s.ep)), cause: err}
}

// copyIn sends the rows rows puts by COPY ... FROM STDIN, the bulk write
// lib/pq prepares, into table, already quoted for SQL text (a
// schema-qualified name is two identifiers, tableName.quoted), with the
// columns quoted as identifiers (what the deprecated pq.CopyIn built).
func copyIn(ctx context.Context, tx interface {
	PrepareContext(context.Context, string) (*sql.Stmt, error)
}, table string, cols []string, rows func(put func(...any) error) error) error {
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = pq.QuoteIdentifier(c)
	}
	stmt, err := tx.PrepareContext(ctx, "COPY "+table+" ("+strings.Join(q, ", ")+") FROM STDIN")
	if err != nil {
		return err
	}
	defer stmt.Close()
	err = rows(func(vals ...any) error {
		_, err := stmt.ExecContext(ctx, vals...)
		return err
	})
	if err == nil {
		_, err = stmt.ExecContext(ctx)
	}
	return err
}
