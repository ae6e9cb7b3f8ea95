package sqlstore

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/exception"
	"github.com/jobtriage/jobtriage/triage/payload"
)

// The local signature index (triage/sigindex) asks three things of the
// store: the table's identity, the rows above an id, and the live ids.

var (
	_ triage.IndexSource  = (*Store)(nil)
	_ triage.RangeScanner = (*Store)(nil)
)

// errNoIdentity: the server does not say which table this is.
var errNoIdentity = errors.New("the table's identity is unknown")

// indexIdentitySQL selects the failed-jobs table's identity on the server,
// (schema, object), whose object changes when the table is created again
// under the same name: PostgreSQL's oid (which TRUNCATE, VACUUM FULL and
// CLUSTER keep) in the schema the search_path resolved; MySQL's creation
// time (to the second), refined by InnoDB's table id where the account may
// read it (indexIdentityInnoDB); SQLite's root page, often reused, so with
// the schema version (any DDL in the file rebuilds the index), and the
// file's identity added in Go.
var indexIdentitySQL = map[string]string{
	"postgres": `SELECT n.nspname, CAST(c.oid AS text) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.oid = to_regclass(?)`,
	"mysql": `SELECT TABLE_SCHEMA, COALESCE(CAST(CREATE_TIME AS CHAR), '') FROM information_schema.TABLES
		WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ?`,
	"sqlite": `SELECT 'main', CAST(rootpage AS TEXT) || '/' || (SELECT schema_version FROM pragma_schema_version)
		FROM sqlite_master WHERE type = 'table' AND name = ?`,
}

// indexIdentityInnoDB are InnoDB's table ids, MariaDB's view first, then
// MySQL 8's; both need the PROCESS privilege, so an error just leaves them
// out.
var indexIdentityInnoDB = []string{
	`SELECT CAST(TABLE_ID AS CHAR) FROM information_schema.INNODB_SYS_TABLES WHERE NAME = CONCAT(?, '/', ?)`,
	`SELECT CAST(TABLE_ID AS CHAR) FROM information_schema.INNODB_TABLES WHERE NAME = CONCAT(?, '/', ?)`,
}

// IndexIdentity names the failed-jobs table for a local cache: server,
// database, schema, table and the table's identity on the server.
func (s *Store) IndexIdentity(ctx context.Context) (triage.TableIdentity, error) {
	id := triage.TableIdentity{Dialect: s.d.name, Host: cmp.Or(s.ep.Socket, s.ep.Host), Port: strconv.Itoa(s.ep.Port),
		Database: s.ep.Database, Table: s.failedName.name}
	args := s.d.catalogArgs(s.failedName)
	if s.d.name == "sqlite" {
		if s.failedName.schema != "" {
			return id, fmt.Errorf("%w: an attached SQLite database", errNoIdentity)
		}
		// The file's absolute path and identity (device and inode where the
		// system has them): a file replaced under the same name is another
		// database.
		if s.ep.Path == "" || s.ep.Path == ":memory:" {
			return id, fmt.Errorf("%w: an in-memory SQLite database", errNoIdentity)
		}
		abs, err := filepath.Abs(s.ep.Path)
		if err != nil {
			return id, err
		}
		fi, err := os.Stat(abs)
		if err != nil {
			return id, fmt.Errorf("%w: %v", errNoIdentity, err)
		}
		id.Host, id.Port, id.Database, id.Object = "", "", abs, fileID(fi)+"/"
		args = args[:1]
	}
	var schema, object sql.NullString
	if err := s.db.QueryRowContext(ctx, s.db.Rebind(indexIdentitySQL[s.d.name]), args...).Scan(&schema, &object); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return id, fmt.Errorf("%w: table %s not found", errNoIdentity, s.failedName)
		}
		return id, s.queryError(err)
	}
	id.Schema = schema.String
	id.Object += object.String
	if s.d.name == "mysql" {
		for _, q := range indexIdentityInnoDB {
			var tid string
			if err := s.db.QueryRowContext(ctx, q, schema.String, s.failedName.name).Scan(&tid); err == nil {
				id.Object += "/" + tid
				break
			}
		}
	}
	if id.Object == "" {
		return id, errNoIdentity
	}
	return id, nil
}

// indexScanBatch is the rows per statement of ScanAbove: the listing's
// batch for a whole-table pass (SQLite caps it, see sqliteReadBatch).
const indexScanBatch = 2000

// displayNameValueRE matches, at the start of the displayName class window,
// the key and a JSON string that payload.JobClass decodes to a non-empty
// class: non-empty, closed inside the window, only valid escapes, no raw
// control characters. The same text in PostgreSQL's AREs and in MariaDB's
// PCRE / MySQL's ICU; it is bound as an argument, never quoted into SQL.
const displayNameValueRE = `^("displayName":[ \t\r\n]*"(?:[^"\\\x01-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})+")`

// indexQuery is ScanRange's statement on PostgreSQL and MySQL, which binds
// the range (after, upTo) and the batch's size after the returned
// arguments: the listing's columns, with less sent back where the answer
// is the same.
//
//   - Payload: when the displayName window starts with a JSON string that
//     JobClass takes as the class, only that string and three empty
//     windows (JobClass reads them only when displayName gives no class);
//     otherwise the four windows as a listing reads them.
//   - Exception: the listing's head cut at its first exception.TraceMarker,
//     after which exception.Head reads nothing.
//
// The string is the one displayNameValueRE matches: on MySQL by that
// expression, on PostgreSQL (where it was half the server's work per row)
// without one (indexDisplayNamePG). A string that is not certainly the
// class sends the four windows, never wrong, only longer.
// sqltest.IndexAgrees checks that every row gets the listing's class and
// signature.
func (s *Store) indexQuery() (string, []any) {
	sep := s.d.unitSep
	cols := s.keyColumns() + s.failedAtColumn() + ", "
	switch s.d.name {
	case "postgres":
		inner := "id, connection, queue, failed_at, payload, exception"
		if s.schema.IDMode == triage.IDModeUUID {
			inner += ", uuid"
		}
		value, args := indexDisplayNamePG(indexRest)
		class := "coalesce(" + sep + " || " + value + " || " + sep + " || " + sep + " || " + sep + ", " + s.d.classWindows("payload") + ")"
		// The top block cut at its trace, then at ExceptionHeadChars, is the
		// listing's head cut at its trace unless the marker straddles that
		// cut; a cut head that long takes the listing's expression.
		head := "CASE WHEN octet_length(" + indexHead + ") > " + itoa(indexHeadExact) + " THEN split_part(" + s.exceptionHead() + ", ?, 1) ELSE " + indexHead + " END"
		// The subquery computes the rest and the cut head once per row:
		// PostgreSQL would compute (and decompress) each reference again.
		return "SELECT " + cols + "CASE WHEN payload IS NULL THEN NULL ELSE " + class + " END AS payload, " + head + " AS exception" +
				" FROM (SELECT " + inner +
				", split_part(" + sqlString(indexKeyGuard) + " || payload, " + sqlString(payload.ClassKeys[0]) + ", -1) AS " + indexRest +
				", split_part(" + s.d.topException("exception") + ", ?, 1) AS " + indexHead +
				" FROM " + s.failed + " WHERE id > ? AND id <= ? ORDER BY id LIMIT ?) AS rows ORDER BY id",
			append(args, nextSeparator, exception.TraceMarker, nextSeparator, exception.TraceMarker)
	default: // mysql
		dn := s.d.windowLast("payload", payload.ClassKeys[0], payload.ClassWindowChars)
		class := "coalesce(CONCAT(" + sep + ", NULLIF(REGEXP_SUBSTR(" + dn + " COLLATE utf8mb4_bin, ?), ''), " + sep + ", " + sep + ", " + sep + "), " + s.d.classWindows("payload") + ")"
		head := "SUBSTRING_INDEX(" + s.exceptionHead() + ", ?, 1)"
		return "SELECT " + cols + "CASE WHEN payload IS NULL THEN NULL ELSE " + class + " END AS payload, " + head + " AS exception" +
				" FROM " + s.failed + " WHERE id > ? AND id <= ? ORDER BY id ASC LIMIT ?",
			[]any{displayNameValueRE, nextSeparator, exception.TraceMarker}
	}
}

// indexRest names the subquery's column of what follows displayName's
// last occurrence (a name no failed_jobs column has).
const indexRest = "jobtriage_display_name_rest"

// indexHead names the subquery's column of the top exception block cut at
// its first exception.TraceMarker.
const indexHead = "jobtriage_exception_head"

// indexHeadExact is the longest cut head, in bytes, that is certainly the
// listing's head cut at its trace: cutting at ExceptionHeadChars
// characters first changes the answer only when the (ASCII) trace marker
// starts within its own length of that cut.
const indexHeadExact = exceptionChars - len(exception.TraceMarker)

// indexKeyGuard is put before the payload when it is split at its last
// displayName key: without the key, split_part returns the whole text,
// which then starts with the guard and is never taken for a string.
const indexKeyGuard = "x"

// indexDisplayNameChars bounds the class string taken without the
// listing's windows: the key, a longer class name than fits, and its
// quotes send the windows instead.
const indexDisplayNameChars = 160

// indexDisplayNamePG is, on PostgreSQL, the displayName key and its JSON
// string when rest (what follows the key's last occurrence, or the guarded
// payload without one) starts with a string that displayNameValueRE
// matches and that holds no escapes but "\\" (a class name's only ones)
// and no control characters, else NULL: the regular expression's answer,
// by string functions costing a third of it.
func indexDisplayNamePG(rest string) (string, []any) {
	quote := sqlString(`"`)
	window := "substr(" + rest + ", 2, " + itoa(indexDisplayNameChars) + ")"
	value := "split_part(" + window + ", " + quote + ", 1)"
	expr := "CASE WHEN left(" + rest + ", 1) = " + quote + " AND strpos(" + window + ", " + quote + ") > 1" +
		" AND strpos(replace(" + value + ", ?, ''), ?) = 0 AND " + value + " !~ ?" +
		" THEN " + sqlString(payload.ClassKeys[0]+`"`) + " || " + value + " || " + quote + " END"
	return expr, []any{`\\`, `\`, `[\x01-\x1f]`}
}

// ScanAbove streams the rows with id > afterID, oldest first, with the
// columns a grouping needs, cut in SQL where the server can (indexQuery);
// on SQLite the listing's columns, cut in Go.
func (s *Store) ScanAbove(ctx context.Context, afterID int64, fn func(*triage.FailedRow) error) error {
	return s.ScanRange(ctx, afterID, maxID, fn)
}

// RangeScans is how many ScanRange calls a pass may run at once: one per
// client CPU, at least two (a pass is mostly the server's work) and at
// most maxRangeScans, or one on SQLite, which reads through one
// connection.
func (s *Store) RangeScans() int {
	if s.d.topException == nil || s.d.window == nil {
		return 1
	}
	return min(max(runtime.GOMAXPROCS(0), 2), maxRangeScans)
}

// maxRangeScans bounds the connections a pass holds at once.
const maxRangeScans = 4

// errPastRange stops a listing scan at the end of a range.
var errPastRange = errors.New("past the range")

// ScanRange is ScanAbove for afterID < id ≤ upTo. Each call reads through
// one connection of the pool, so calls for disjoint ranges run on as many
// server processes.
func (s *Store) ScanRange(ctx context.Context, afterID, upTo int64, fn func(*triage.FailedRow) error) error {
	if s.d.topException == nil || s.d.window == nil {
		err := s.ScanFailed(ctx, triage.ScanParams{Ascending: true, AfterID: afterID, BatchSize: indexScanBatch}, func(r *triage.FailedRow) error {
			if r.ID > upTo {
				return errPastRange
			}
			return fn(r)
		})
		if errors.Is(err, errPastRange) {
			return nil
		}
		return err
	}
	query, selArgs := s.indexQuery()
	q := s.db.Rebind(query)
	for {
		args := append(append([]any{}, selArgs...), afterID, upTo, indexScanBatch)
		got, last, err := s.scanBatch(ctx, q, args, false, fn)
		if err != nil || got < indexScanBatch {
			return err
		}
		afterID = last
	}
}

// liveIDsBatch is the ids per keyset statement of LiveIDs.
var liveIDsBatch = map[string]int{"postgres": 200_000, "sqlite": 20_000}

// LiveIDs streams the ids ≤ upTo that exist, ascending: in keyset batches
// (an index-only scan on PostgreSQL, short statements on SQLite, see
// sqliteReadBatch), or on MySQL/MariaDB by liveIDsMySQL.
func (s *Store) LiveIDs(ctx context.Context, upTo int64, fn func(id int64) error) error {
	if s.d.name == "mysql" {
		ids, err := s.liveIDsMySQL(ctx, upTo)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if err := fn(id); err != nil {
				return err
			}
		}
		return nil
	}
	q := s.db.Rebind("SELECT id FROM " + s.failed + " WHERE id > ? AND id <= ? ORDER BY id LIMIT ?")
	after := int64(minID)
	batch := liveIDsBatch[s.d.name]
	for {
		n := 0
		err := s.eachID(ctx, s.db, q, []any{after, upTo, batch}, func(id int64) error {
			n++
			after = id
			return fn(id)
		})
		if err != nil || n < batch {
			return err
		}
	}
}

// liveIDsMySQLParts split a uuid index into quarters by the uuids' first
// hexadecimal digit (random uuids split about evenly), read at once on
// connections of their own: InnoDB reads an index with one thread per
// statement, and a pass right after a large retry or forget finds the
// index evicted from a small buffer pool. Every uuid falls in exactly one
// part; a NULL one (which Laravel's schema does not allow) in the first.
var liveIDsMySQLParts = [...]string{
	` WHERE uuid < '4' OR uuid IS NULL`,
	` WHERE uuid >= '4' AND uuid < '8'`,
	` WHERE uuid >= '8' AND uuid < 'c'`,
	` WHERE uuid >= 'c'`,
}

// uuidIndexSQL counts the indexes that begin with the uuid column (the
// parts are ranges of one; without it each part would read the table).
const uuidIndexSQL = `SELECT COUNT(*) FROM information_schema.STATISTICS
	WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ? AND COLUMN_NAME = 'uuid' AND SEQ_IN_INDEX = 1`

// liveIDsMySQL reads the ids ≤ upTo, ascending, by statements without
// ORDER BY or a range on id, which InnoDB answers from the uuid index (it
// holds the id too) instead of the clustered primary key that carries
// whole rows: in liveIDsMySQLParts at once where the table has a uuid
// index, else in one statement; bounded and sorted in Go.
func (s *Store) liveIDsMySQL(ctx context.Context, upTo int64) ([]int64, error) {
	parts := []string{""}
	if s.schema.IDMode == triage.IDModeUUID {
		var n int
		if err := s.db.QueryRowContext(ctx, uuidIndexSQL, s.d.catalogArgs(s.failedName)...).Scan(&n); err == nil && n > 0 {
			parts = liveIDsMySQLParts[:]
		}
	}
	got := make([][]int64, len(parts))
	errs := make([]error, len(parts))
	var wg sync.WaitGroup
	for k, where := range parts {
		wg.Go(func() {
			got[k], errs[k] = s.liveIDsPart(ctx, where)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	ids := slices.Concat(got...)
	ids = slices.DeleteFunc(ids, func(id int64) bool { return id > upTo })
	sortUnique(ids)
	return ids, nil
}

// liveIDsConcatSQL reads a part's ids as one comma-separated text (rows
// cost the server and the driver a row each), with the count to tell a
// whole text from one cut at group_concat_max_len.
var liveIDsConcatSQL = [...]string{
	`SET SESSION group_concat_max_len = %s`,
	`SELECT COUNT(*), COALESCE(GROUP_CONCAT(id), '') FROM %s%s`,
	`SET SESSION group_concat_max_len = DEFAULT`,
	`SELECT id FROM %s%s`,
}

// liveIDsPart reads the ids of one part (where: "" or a WHERE clause),
// unsorted: as one text where it fits a packet, else as rows.
func (s *Store) liveIDsPart(ctx context.Context, where string) ([]int64, error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, s.queryError(err)
	}
	defer conn.Close()
	limit := cmp.Or(s.liveIDsConcatMax, "@@max_allowed_packet")
	if _, err := conn.ExecContext(ctx, fmt.Sprintf(liveIDsConcatSQL[0], limit)); err != nil {
		return nil, s.queryError(err)
	}
	var n int64
	var text []byte
	err = conn.QueryRowContext(ctx, fmt.Sprintf(liveIDsConcatSQL[1], s.failed, where)).Scan(&n, &text)
	if _, rerr := conn.ExecContext(ctx, liveIDsConcatSQL[2]); err == nil && rerr != nil {
		err = rerr
	}
	if err != nil {
		return nil, s.queryError(err)
	}
	if ids, ok := parseIDList(text, int(n)); ok && len(ids) == int(n) {
		return ids, nil
	}
	// Cut: more ids than a packet holds.
	var ids []int64
	err = s.eachID(ctx, conn, fmt.Sprintf(liveIDsConcatSQL[3], s.failed, where), nil, func(id int64) error {
		ids = append(ids, id)
		return nil
	})
	return ids, err
}

// parseIDList parses "1,2,-3" (room made for n ids); ok is false for
// anything else, such as a list cut in the middle of an id or after a
// comma.
func parseIDList(b []byte, n int) (ids []int64, ok bool) {
	if len(b) == 0 {
		return nil, n == 0
	}
	ids = make([]int64, 0, n)
	for field := range bytes.SplitSeq(b, []byte{','}) {
		id, err := strconv.ParseInt(string(field), 10, 64)
		if err != nil {
			return nil, false
		}
		ids = append(ids, id)
	}
	return ids, true
}

// sortUnique sorts distinct ids. Dense ones (as a table's ids are) go by a
// bitmap of their range, in time linear in the ids; sparse ones by
// slices.Sort.
func sortUnique(ids []int64) {
	if len(ids) < 2 {
		return
	}
	lo, hi := slices.Min(ids), slices.Max(ids)
	span := uint64(hi) - uint64(lo)
	if span/bitmapDensity >= uint64(len(ids)) {
		slices.Sort(ids)
		return
	}
	set := make([]uint64, span/64+1)
	for _, id := range ids {
		off := uint64(id) - uint64(lo)
		set[off/64] |= 1 << (off % 64)
	}
	k := 0
	for w, word := range set {
		for word != 0 {
			b := uint64(bits.TrailingZeros64(word))
			ids[k] = int64(uint64(lo) + uint64(w)*64 + b)
			k++
			word &= word - 1
		}
	}
}

// bitmapDensity: sortUnique takes the bitmap while the ids' range is under
// this many times their number (a bitmap of at most this many bits per id).
const bitmapDensity = 64

// minID is below any id a bigint primary key holds.
const minID = -1 << 63

// querier is the pool, one connection of it, or a transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (s *Store) eachID(ctx context.Context, db querier, q string, args []any, fn func(int64) error) error {
	return s.eachRow(ctx, db, q, args, func(rows *sql.Rows) error {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return fmt.Errorf("reading a failed_jobs id: %w", err)
		}
		return fn(id)
	})
}

// eachRow runs q and hands fn each row; an error from fn ends it and is
// returned as it is.
func (s *Store) eachRow(ctx context.Context, db querier, q string, args []any, fn func(*sql.Rows) error) error {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return s.queryError(err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return s.queryError(err)
	}
	return nil
}
