package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jobtriage/jobtriage/triage"
)

const (
	defaultBatch = 500 // the keyset batch of a listing or a window read
	// sqliteReadBatch is SQLite's dialect.maxReadBatch.
	sqliteReadBatch = 200
	exceptionChars  = triage.ExceptionHeadChars
	nextSeparator   = triage.NextSeparator
)

// selectList returns the columns of a FailedRow and the arguments that the
// select list itself binds.
func (s *Store) selectList(full bool) (string, []any) {
	cols := s.keyColumns() + s.failedAtColumn() + ", "
	if full {
		return cols + "payload, exception", nil
	}
	cols += s.listPayload() + " AS payload, " + s.exceptionHead() + " AS exception"
	if s.d.topException == nil {
		return cols, nil
	}
	return cols, []any{nextSeparator}
}

// keyColumns selects id, uuid (NULL where the table has none), connection
// and queue.
func (s *Store) keyColumns() string {
	uuid := "uuid"
	if s.schema.IDMode != triage.IDModeUUID {
		uuid = "NULL AS uuid"
	}
	return "id, " + uuid + ", connection, queue, "
}

// failedAtColumn selects failed_at, as text where the dialect needs it
// (failedAtAsText).
func (s *Store) failedAtColumn() string {
	if s.d.failedAtAsText {
		return s.d.asText("failed_at") + " AS failed_at"
	}
	return "failed_at"
}

// listPayload is what a listing reads of the payload: the class windows
// (payload.ClassWindows), not a head, because a Redis job's keys may sit in
// any order and displayName far behind data.command. On SQLite it is the
// whole payload, which payload.JobClass cuts into the same windows.
//
// A NULL payload stays NULL (its windows would be empty text), so the row
// is marked as having none.
func (s *Store) listPayload() string {
	w := s.d.classWindows("payload")
	if w == "payload" {
		return w
	}
	return "CASE WHEN payload IS NULL THEN NULL ELSE " + w + " END"
}

// exceptionHead selects the top exception block's head; on SQLite, which
// has no last-occurrence function, the whole text, cut in Go.
func (s *Store) exceptionHead() string {
	if s.d.topException == nil {
		return "exception"
	}
	return s.d.head(s.d.topException("exception"), exceptionChars)
}

// where renders a Filter as a WHERE clause (without the keyword).
func (s *Store) where(f triage.Filter) (string, []any) {
	var conds []string
	var args []any
	add := func(cond string, condArgs ...any) {
		conds = append(conds, cond)
		args = append(args, condArgs...)
	}
	in := func(col string, vals []string) {
		if len(vals) > 0 {
			add(col+" IN ("+marks(len(vals))+")", anys(vals)...)
		}
	}
	in("queue", f.Queues)
	in("connection", f.Connections)
	like := s.d.likeOp
	if f.Search != "" {
		add("(payload "+like+" ? ESCAPE '!' OR exception "+like+" ? ESCAPE '!')", likeContains(f.Search), likeContains(f.Search))
	}
	for _, p := range f.PayloadContains {
		add("payload "+like+" ? ESCAPE '!'", likeContains(p))
	}
	if !f.Since.IsZero() {
		add("failed_at >= ?", s.wall(f.Since))
	}
	if !f.Until.IsZero() {
		add("failed_at <= ?", s.wall(f.Until))
	}
	if f.MinID != 0 {
		add("id >= ?", f.MinID)
	}
	if f.MaxID != 0 {
		add("id <= ?", f.MaxID)
	}
	if len(conds) == 0 {
		return "1=1", nil
	}
	return strings.Join(conds, " AND "), args
}

// wall formats t as Laravel writes failed_at: wall-clock time in the app
// timezone, no offset.
func (s *Store) wall(t time.Time) string { return t.In(s.loc).Format(triage.FailedAtLayout) }

// ScanFailed streams rows in keyset batches: each batch is one short query
// ordered by the primary key, so neither side holds the table in memory.
func (s *Store) ScanFailed(ctx context.Context, p triage.ScanParams, fn func(*triage.FailedRow) error) error {
	batch := cmp.Or(max(p.BatchSize, 0), defaultBatch)
	if s.d.maxReadBatch > 0 && batch > s.d.maxReadBatch {
		batch = s.d.maxReadBatch
	}
	sel, selArgs := s.selectList(p.Full)
	f, err := s.withSinceBound(ctx, s.db, p.Filter)
	if err != nil {
		return err
	}
	cond, condArgs := s.where(f)
	order, op := "DESC", "<"
	if p.Ascending {
		order, op = "ASC", ">"
	}
	q := s.db.Rebind("SELECT " + sel + " FROM " + s.failed + " WHERE " + cond +
		" AND id " + op + " ? ORDER BY id " + order + " LIMIT ?")
	cursor := p.BeforeID
	if p.Ascending {
		cursor = p.AfterID
	} else if cursor == 0 {
		cursor = maxID // a negative BeforeID continues below a negative id
	}
	seen := 0
	for {
		n := batch
		if p.Limit > 0 && p.Limit-seen < n {
			n = p.Limit - seen
		}
		if n <= 0 {
			return nil
		}
		args := append(append(append([]any{}, selArgs...), condArgs...), cursor, n)
		got, last, err := s.scanBatch(ctx, q, args, p.Full, fn)
		if err != nil {
			return err
		}
		seen += got
		if got < n {
			return nil
		}
		cursor = last
	}
}

// maxID is above any id a bigint primary key holds.
const maxID = int64(1<<63 - 1)

func (s *Store) scanBatch(ctx context.Context, q string, args []any, full bool, fn func(*triage.FailedRow) error) (n int, last int64, err error) {
	err = s.eachRow(ctx, s.db, q, args, func(rows *sql.Rows) error {
		r, err := s.scanRow(rows, full)
		if err != nil {
			return err
		}
		n++
		last = r.ID
		return fn(r)
	})
	return n, last, err
}

// scanRow reads one row. A column that is not as Laravel writes it (NULL
// connection, queue or payload; a failed_at that is no time) does not fail
// the scan: the row comes back with what could be read and the column in
// Problems, so a listing shows it and a retry skips it by name, while every
// other row is served.
func (s *Store) scanRow(rows *sql.Rows, full bool) (*triage.FailedRow, error) {
	var (
		r          triage.FailedRow
		uuid       sql.NullString
		connection sql.NullString
		queue      sql.NullString
		failedAt   rawValue
		payload    []byte
		exc        sql.NullString
	)
	if err := rows.Scan(&r.ID, &uuid, &connection, &queue, &failedAt, &payload, &exc); err != nil {
		return nil, fmt.Errorf("reading a failed_jobs row: %w", err)
	}
	r.UUID, r.Connection, r.Queue = uuid.String, connection.String, queue.String
	r.Payload, r.Exception = payload, exc.String
	for _, c := range []struct {
		col   string
		valid bool
	}{{"connection", connection.Valid}, {"queue", queue.Valid}, {"payload", payload != nil}, {"exception", exc.Valid}, {"failed_at", failedAt.v != nil}} {
		if !c.valid {
			r.Problems = append(r.Problems, triage.RowProblem{Column: c.col, Reason: triage.ReasonNull})
		}
	}
	if failedAt.v != nil {
		var err error
		if r.FailedAt, err = s.wallClock(failedAt.v); err != nil {
			r.Problems = append(r.Problems, triage.RowProblem{Column: "failed_at", Reason: err.Error()})
		}
	}
	if !full && s.d.topException == nil {
		r.Exception = triage.TopExceptionHead(r.Exception)
	}
	return &r, nil
}

// rawValue keeps a column's driver value for a later, fallible conversion.
// Byte slices are copied: the driver reuses their memory on the next row.
type rawValue struct{ v any }

func (r *rawValue) Scan(src any) error {
	if b, ok := src.([]byte); ok {
		src = string(b)
	}
	r.v = src
	return nil
}

// GetFailed reads one whole row by uuid or integer id.
func (s *Store) GetFailed(ctx context.Context, ref triage.Ref) (*triage.FailedRow, error) {
	sel, _ := s.selectList(true)
	var q string
	var arg any
	switch {
	case ref.UUID != "":
		if s.schema.IDMode != triage.IDModeUUID {
			return nil, fmt.Errorf("%w: failed job %s (table %s has no uuid column; use the integer id)",
				triage.ErrNotFound, ref.UUID, s.schema.FailedTable)
		}
		q, arg = "uuid = ?", ref.UUID
	case ref.ID > 0:
		q, arg = "id = ?", ref.ID
	default:
		return nil, fmt.Errorf("%w: empty failed job id", triage.ErrNotFound)
	}
	var row *triage.FailedRow
	q = s.db.Rebind("SELECT " + sel + " FROM " + s.failed + " WHERE " + q + " LIMIT 1")
	_, _, err := s.scanBatch(ctx, q, []any{arg}, true, func(r *triage.FailedRow) error {
		row = r
		return nil
	})
	if err != nil {
		return nil, err
	}
	if row == nil {
		return nil, fmt.Errorf("%w: no failed job with id %s", triage.ErrNotFound, ref)
	}
	return row, nil
}

// queryError keeps context cancellation recognisable and names the endpoint.
func (s *Store) queryError(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if lost := s.lostConnection(err); lost != nil {
		return lost
	}
	return &dbError{msg: "query on " + s.ep.Redacted() + " failed: " + scrub(err, s.ep), cause: err}
}

// lostConnection names a call that lost its connection to the server as
// triage.ErrUnreachable, nil for any other error: the server stopped
// answering (a client deadline fired, which go-sql-driver/mysql reports as
// its own ErrInvalidConn, so the store's silence says which it was), or it
// went away (the connection broke, or no new one could be made).
func (s *Store) lostConnection(err error) error {
	var op *net.OpError
	broken := errors.Is(err, mysql.ErrInvalidConn) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &op)
	at := "query on " + s.ep.Redacted() + " failed: "
	if errors.Is(err, ErrServerSilent) || broken && s.heard != nil && s.heard.fired.Load() {
		silent := silentError(s.heard.idle)
		return &dbError{msg: at + silent.Error(), cause: errors.Join(silent, err)}
	}
	if errors.Is(err, triage.ErrUnreachable) || !broken {
		return nil // already named, or not lost
	}
	return &dbError{msg: at + "lost the connection to the database server (" + scrub(err, s.ep) + ")",
		cause: fmt.Errorf("%w: %w", triage.ErrUnreachable, err)}
}

// dbError keeps the driver error for errors.As (deadlock codes) while its
// message is the scrubbed one.
type dbError struct {
	msg   string
	cause error
}

func (e *dbError) Error() string { return e.msg }
func (e *dbError) Unwrap() error { return e.cause }

// Is makes deadlock victims recognisable as triage.ErrConflict: the
// transaction was rolled back whole and may simply run again.
func (e *dbError) Is(target error) bool {
	return target == triage.ErrConflict && deadlock.match(e.cause)
}

// wallClock reads failed_at as any driver returns it (not nil): a
// time.Time whose clock fields are the stored wall-clock time (PostgreSQL,
// SQLite) or the text (MySQL, and a zoned text of PostgreSQL's timestamptz,
// whose clock fields are the session's). Either way the clock fields are
// wall-clock time in the app timezone. Its error says what is wrong with
// the value ("\"garbage\" is not a time"), the caller names the column.
func (s *Store) wallClock(src any) (time.Time, error) {
	var t time.Time
	switch v := src.(type) {
	case time.Time:
		t = v
	case string:
		var ok bool
		if t, ok = triage.ParseFailedAt(v, s.loc); !ok {
			v = strings.TrimSpace(v)
			if r := []rune(v); len(r) > 40 { // a hostile value, cut for the message
				v = string(r[:40]) + "…"
			}
			return time.Time{}, fmt.Errorf("%q is not a time", v)
		}
	default:
		return time.Time{}, fmt.Errorf("has an unexpected type %T", src)
	}
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), s.loc), nil
}
