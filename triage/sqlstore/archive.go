package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"slices"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/jobtriage/jobtriage/triage"
)

const (
	// insertChunk is the rows of one multi-row INSERT (insertChunked): at
	// seven parameters a row well inside every driver's parameter limit.
	insertChunk = 200
	// selectInChunk is the values of one selectIn statement.
	selectInChunk = 500
)

// rawColumns selects a whole failed_jobs row as stored: failed_at as the
// database's text for it, NULLs kept (scanRaw).
func (s *Store) rawColumns() string {
	return s.keyColumns() + s.d.asText("failed_at") + ", payload, exception"
}

func scanRaw(rows *sql.Rows) ([]triage.RawRow, error) {
	defer rows.Close()
	var out []triage.RawRow
	for rows.Next() {
		r, err := scanRawRow(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func scanRawRow(rows *sql.Rows) (triage.RawRow, error) {
	var r triage.RawRow
	var uuid, conn, queue, failedAt, payload, exc sql.NullString
	if err := rows.Scan(&r.ID, &uuid, &conn, &queue, &failedAt, &payload, &exc); err != nil {
		return r, fmt.Errorf("reading a failed_jobs row: %w", err)
	}
	r.UUID, r.Connection, r.Queue = ptr(uuid), ptr(conn), ptr(queue)
	r.FailedAt, r.Payload, r.Exception = ptr(failedAt), ptr(payload), ptr(exc)
	return r, nil
}

func ptr(v sql.NullString) *string {
	if !v.Valid {
		return nil
	}
	return &v.String
}

// rawByIDs reads whole rows of the batch tx holds locked.
func (s *Store) rawByIDs(ctx context.Context, tx *sqlx.Tx, ids []int64) ([]triage.RawRow, error) {
	var out []triage.RawRow
	err := s.selectIn(ctx, tx, "SELECT "+s.rawColumns()+" FROM "+s.failed+" WHERE id IN (", anys(ids), func(rows *sql.Rows) error {
		r, err := scanRawRow(rows)
		out = append(out, r)
		return err
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b triage.RawRow) int { return cmp.Compare(a.ID, b.ID) })
	if len(out) != len(ids) {
		// The rows are locked by this transaction; one missing means
		// someone deleted it without a lock (SQLite aside, cannot happen).
		return nil, fmt.Errorf("failed_jobs: %d of %d locked rows could not be read whole: %w", len(ids)-len(out), len(ids), triage.ErrConflict)
	}
	return out, nil
}

// archiveRange deletes the rows where selects (with args) and archives
// those it deleted, in one transaction that holds them locked; without an
// archive (a range whose delete was refused, pruneRange) it selects them
// unlocked. The rows whose delete is refused (deleteRows) stay, are not
// archived, and are returned.
func (s *Store) archiveRange(ctx context.Context, where string, args []any, archive triage.Archiver) (int64, []triage.RejectedRow, error) {
	tx, err := s.beginWrite(ctx)
	if err != nil {
		return 0, nil, err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit this is a no-op
	q := "SELECT " + s.rawColumns() + " FROM " + s.failed + where + " ORDER BY id"
	if archive != nil {
		q += s.d.lockRows
	}
	rs, err := tx.QueryContext(ctx, s.db.Rebind(q), args...)
	if err != nil {
		return 0, nil, s.deniedError(err, s.schema.FailedTable, s.pruneGrants())
	}
	rows, err := scanRaw(rs)
	if err != nil {
		return 0, nil, s.queryError(err)
	}
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	n, kept, err := s.deleteRows(ctx, tx, ids)
	if permissionDenied.match(err) {
		err = s.deniedError(err, s.schema.FailedTable, s.pruneGrants())
	}
	if err != nil {
		return 0, nil, err
	}
	rows = slices.DeleteFunc(rows, func(r triage.RawRow) bool {
		return slices.ContainsFunc(kept, func(k triage.RejectedRow) bool { return k.ID == r.ID })
	})
	if archive != nil {
		if err := archive.Write(rows); err != nil {
			return 0, nil, err
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, nil, s.queryError(err)
	}
	return n, kept, nil
}

// RestoreRows puts archived rows back into failed_jobs (triage.Restorer),
// in one transaction. A row is present, and skipped, when a row with its
// uuid is there (the uuid is what Laravel and jobtriage address a job by);
// a row without uuid (a legacy row, or a table without the column) when
// a row with its id and the same payload is there. A restored row keeps
// its original id when no row holds it — references in tickets, logs and
// `queue:retry <id>` stay right — and gets a new one from the database
// otherwise.
func (s *Store) RestoreRows(ctx context.Context, p triage.RestoreParams) (triage.RestoreResult, error) {
	var res triage.RestoreResult
	if len(p.Rows) == 0 {
		return res, nil
	}
	var tx *sqlx.Tx
	var err error
	if p.DryRun {
		// A dry run writes nothing and needs no write privilege.
		tx, err = s.db.BeginTxx(ctx, &sql.TxOptions{ReadOnly: s.d.readOnlyTx})
		if err != nil {
			return res, s.queryError(err)
		}
	} else {
		var release func()
		if tx, release, err = s.beginRestore(ctx); err != nil {
			return res, err
		}
		defer release() // after the Rollback below: the lock outlives the commit
	}
	defer tx.Rollback() //nolint:errcheck // after Commit this is a no-op
	byUUID := s.schema.IDMode == triage.IDModeUUID
	var uuids []any
	var ids []any
	for _, r := range p.Rows {
		if byUUID && r.UUID != nil {
			uuids = append(uuids, *r.UUID)
		}
		ids = append(ids, r.ID)
	}
	presentUUID := map[string]bool{}
	if err := s.selectIn(ctx, tx, "SELECT uuid FROM "+s.failed+" WHERE uuid IN (", uuids, func(rows *sql.Rows) error {
		var u string
		if err := rows.Scan(&u); err != nil {
			return err
		}
		presentUUID[u] = true
		return nil
	}); err != nil {
		return res, err
	}
	// Which ids are taken, and by what payload (for rows without uuid).
	taken := map[int64]*string{}
	if err := s.selectIn(ctx, tx, "SELECT id, payload FROM "+s.failed+" WHERE id IN (", ids, func(rows *sql.Rows) error {
		var id int64
		var payload sql.NullString
		if err := rows.Scan(&id, &payload); err != nil {
			return err
		}
		taken[id] = ptr(payload)
		return nil
	}); err != nil {
		return res, err
	}
	var keepID, newID []triage.RawRow
	seenUUID := map[string]bool{}
	for _, r := range p.Rows {
		if byUUID && r.UUID != nil {
			if presentUUID[*r.UUID] || seenUUID[*r.UUID] {
				res.Present++
				continue
			}
			seenUUID[*r.UUID] = true
		} else if have, ok := taken[r.ID]; ok && sameText(have, r.Payload) {
			res.Present++
			continue
		}
		if _, ok := taken[r.ID]; ok {
			newID = append(newID, r)
			continue
		}
		taken[r.ID] = r.Payload // a later row of the batch with this id is renumbered
		keepID = append(keepID, r)
	}
	res.Restored, res.Renumbered = len(keepID)+len(newID), len(newID)
	if p.DryRun {
		return res, nil
	}
	if err := s.insertRaw(ctx, tx, keepID, true); err != nil {
		return triage.RestoreResult{}, err
	}
	if err := s.insertRaw(ctx, tx, newID, false); err != nil {
		return triage.RestoreResult{}, err
	}
	if len(keepID) > 0 && s.d.explicitIDsAdvanceSequence {
		if err := s.advanceSequence(ctx, tx); err != nil {
			return triage.RestoreResult{}, err
		}
	}
	if err := tx.Commit(); err != nil {
		return triage.RestoreResult{}, s.queryError(err)
	}
	return res, nil
}

// beginRestore begins a restore batch's write transaction holding the
// table's restore lock (dialect.restoreLock), so that no other restore
// checks or inserts between this batch's check and its commit; release,
// called after the transaction ended, gives the lock up where the
// transaction's end does not (restoreUnlock).
func (s *Store) beginRestore(ctx context.Context) (*sqlx.Tx, func(), error) {
	args := s.d.catalogArgs(s.failedName)
	release := func() {}
	var tx *sqlx.Tx
	var err error
	if s.d.restoreUnlock == "" {
		tx, err = s.beginWrite(ctx)
	} else {
		// A session's lock: taken and released on one connection.
		var conn *sqlx.Conn
		if conn, err = s.db.Connx(ctx); err != nil {
			return nil, nil, s.queryError(err)
		}
		release = func() {
			if _, err := conn.ExecContext(context.WithoutCancel(ctx), s.db.Rebind(s.d.restoreUnlock), args...); err != nil {
				// A lock left held would outlive the run in the pool: the
				// connection is closed instead, and its session's locks end.
				conn.Raw(func(any) error { return driver.ErrBadConn }) //nolint:errcheck // the error is the point
			}
			conn.Close()
		}
		tx, err = s.beginWriteOn(ctx, conn)
	}
	if err != nil {
		release()
		return nil, nil, err
	}
	if s.d.restoreLock == "" {
		return tx, release, nil
	}
	var got sql.NullInt64
	if err = tx.QueryRowContext(ctx, s.db.Rebind(s.d.restoreLock), args...).Scan(&got); err != nil {
		err = s.queryError(err)
	} else if got.Int64 != 1 {
		err = fmt.Errorf("failed_jobs: another restore held the table's restore lock too long: %w", triage.ErrConflict)
	}
	if err != nil {
		tx.Rollback() //nolint:errcheck // the lock's error is the one to report
		release()
		return nil, nil, err
	}
	return tx, release, nil
}

func sameText(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// selectIn runs head + "?, …)" over vals, selectInChunk values at a time,
// on the pool or in a transaction, and hands scan each row.
func (s *Store) selectIn(ctx context.Context, db querier, head string, vals []any, scan func(*sql.Rows) error) error {
	for i := 0; i < len(vals); i += selectInChunk {
		chunk := vals[i:min(i+selectInChunk, len(vals))]
		rows, err := db.QueryContext(ctx, s.db.Rebind(head+marks(len(chunk))+")"), chunk...)
		if err != nil {
			return s.queryError(err)
		}
		for rows.Next() {
			if err := scan(rows); err != nil {
				rows.Close()
				return s.queryError(err)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return s.queryError(err)
		}
	}
	return nil
}

// insertRaw inserts archived rows, with their ids (withID) or without.
// failed_at goes back as the text the database gave for it, which it
// parses into the same value.
func (s *Store) insertRaw(ctx context.Context, tx *sqlx.Tx, rows []triage.RawRow, withID bool) error {
	cols := []string{"connection", "queue", "payload", "exception", "failed_at"}
	if s.schema.IDMode == triage.IDModeUUID {
		cols = append([]string{"uuid"}, cols...)
	}
	if withID {
		cols = append([]string{"id"}, cols...)
	}
	head := "INSERT INTO " + s.failed + " (" + strings.Join(cols, ", ") + ") "
	err := s.insertChunked(ctx, tx, head, "("+marks(len(cols))+")", len(rows), func(k int) []any {
		r := rows[k]
		var args []any
		if withID {
			args = append(args, r.ID)
		}
		if s.schema.IDMode == triage.IDModeUUID {
			args = append(args, nullable(r.UUID))
		}
		return append(args, nullable(r.Connection), nullable(r.Queue), nullable(r.Payload), nullable(r.Exception), nullable(r.FailedAt))
	})
	if uniqueViolation.match(err) {
		// A concurrent restore (or a worker's failure) took a uuid or an id
		// first: the batch rolls back whole, and run again it finds them
		// present (or taken).
		return fmt.Errorf("failed_jobs: %s: %w", scrub(err, s.ep), triage.ErrConflict)
	}
	if err != nil {
		return s.deniedError(err, s.schema.FailedTable, s.restoreGrants())
	}
	return nil
}

// insertChunked runs head + "VALUES " and n rows of tuple, insertChunk rows
// a statement, with row k's values vals(k).
func (s *Store) insertChunked(ctx context.Context, tx *sqlx.Tx, head, tuple string, n int, vals func(k int) []any) error {
	for i := 0; i < n; i += insertChunk {
		j := min(i+insertChunk, n)
		var args []any
		for k := i; k < j; k++ {
			args = append(args, vals(k)...)
		}
		if _, err := tx.ExecContext(ctx, s.db.Rebind(head+"VALUES "+tuples(tuple, j-i)), args...); err != nil {
			return err
		}
	}
	return nil
}

// nullable is a column value as a driver argument: NULL for nil, text
// otherwise (a string, so lib/pq does not send bytea).
func nullable(v *string) any {
	if v == nil {
		return nil
	}
	return *v
}

// advanceSequence moves PostgreSQL's id sequence past the highest id, so
// that the next failure Laravel records does not collide with an id a
// restore inserted explicitly (dialect.explicitIDsAdvanceSequence). A table
// without a sequence is left alone.
func (s *Store) advanceSequence(ctx context.Context, tx *sqlx.Tx) error {
	var seq sql.NullString
	if err := tx.QueryRowContext(ctx, "SELECT pg_get_serial_sequence($1, 'id')", s.failed).Scan(&seq); err != nil {
		return s.queryError(err)
	}
	if !seq.Valid {
		return nil
	}
	q := "SELECT setval(CAST($1 AS regclass), m) FROM (SELECT MAX(id) AS m FROM " + s.failed + ") x " +
		"WHERE m > COALESCE(pg_sequence_last_value(CAST($1 AS regclass)), 0)"
	if _, err := tx.ExecContext(ctx, q, seq.String); err != nil {
		return s.deniedError(err, s.schema.FailedTable, s.restoreGrants())
	}
	return nil
}

// restoreGrants is what restore needs (deniedError): to read and insert
// rows, and on PostgreSQL to draw from and advance the id sequence.
func (s *Store) restoreGrants() string {
	need := "restore needs SELECT and INSERT on " + s.schema.FailedTable
	if s.d.explicitIDsAdvanceSequence {
		need += " and USAGE and UPDATE on its id sequence"
	}
	return need
}

var _ triage.Restorer = (*Store)(nil)
