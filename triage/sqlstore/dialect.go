package sqlstore

import (
	"database/sql"
	"strconv"
	"strings"

	"github.com/jobtriage/jobtriage/triage/payload"
)

func itoa(n int) string { return strconv.Itoa(n) }

// dialect holds what differs between the three databases, side by side.
// Queries are written with ? placeholders and rebound by sqlx.
type dialect struct {
	name string
	// quote quotes an identifier that identRE already validated.
	quote func(string) string
	// likeOp is the case-insensitive LIKE: MySQL's default collation and
	// SQLite's LIKE already ignore ASCII case; PostgreSQL needs ILIKE.
	likeOp string
	// head selects the first n characters of a text column.
	head func(col string, n int) string
	// window selects n characters of a text column from the first
	// occurrence of the literal key (NULL when it does not occur), counting
	// characters and matching case-sensitively. Nil when listings read the
	// whole payload and Go cuts the windows.
	window func(col, key string, n int) string
	// windowLast is window from the key's last occurrence
	// (payload.ClassKeyLast). The key is ASCII (payload.ClassKeys): its
	// length in bytes is its length in characters.
	windowLast func(col, key string, n int) string
	// concat joins texts; NULL parts must have been coalesced.
	concat func(parts []string) string
	// unitSep is the ClassWindowSep character as an expression.
	unitSep string
	// topException selects the text after the last "\n\nNext " separator,
	// bound as an argument (the thrown exception), so a listing never
	// transfers whole chains. Nil where Go must split.
	topException func(col string) string
	// asText reads a column as the database's own text for its value
	// (what it parses back on insert): an archive keeps failed_at so.
	asText func(col string) string
	// lockRows is appended to a write batch's SELECT. PostgreSQL skips the
	// rows another transaction holds. MySQL/MariaDB waits: with SKIP LOCKED
	// two concurrent retries on MariaDB deadlocked in their DELETEs and
	// both skipped a row the victim had locked, left behind while both
	// exited 0 (stress.TestRetryAllTwiceAtOnce); waiting locks taken in id
	// order do not deadlock, and the locking read then sees the committed
	// state. SQLite has no row locks: _txlock=immediate takes the write
	// lock at BEGIN, so a second writer waits (busy_timeout).
	lockRows string
	// writeIsolation is a write transaction's isolation level (0: the
	// server's default). READ COMMITTED keeps InnoDB from holding locks on
	// rows the WHERE clause rejected and from taking gap locks that would
	// collide with workers inserting into jobs; on both servers each
	// statement sees what committed before it began, so a restore batch
	// that waited for restoreLock sees the rows the batch before it put in
	// (a server default of REPEATABLE READ would fix its view before the
	// wait).
	writeIsolation sql.IsolationLevel
	// restoreLock, in a restore batch's write transaction before anything
	// else, waits for the failed_jobs table's restore lock and selects 1
	// once it has it (binding the table as catalogArgs does): the check for
	// rows already there and the insert are then one step, which nothing
	// else makes them on a table without the uuid unique index. Only
	// restores take the lock — an advisory lock, not a table lock — so the
	// app's workers and a concurrent retry write on, and a restore that
	// waits for it holds no lock anything waits for: no deadlock. PostgreSQL's
	// transaction lock is per database (keyed on the table's oid) and ends
	// with the transaction. MySQL's GET_LOCK is server-wide (keyed on
	// database and table), waits as long as for a row lock and is the
	// session's until restoreUnlock. SQLite needs none: _txlock=immediate
	// takes the database's one write lock at BEGIN.
	restoreLock, restoreUnlock string
	// silentHolds selects whether failed_jobs (catalogArgs) may keep a row
	// from a DELETE without an error: a trigger (PostgreSQL returning NULL,
	// SQLite RAISE(IGNORE)) or row security. MySQL has neither ("": never).
	silentHolds string
	// detachedWrites begins write transactions without the context's
	// cancellation (PostgreSQL): database/sql rolls a cancelled transaction
	// back from another goroutine, and lib/pq then sends ROLLBACK in the
	// middle of a COPY and waits forever (lib/pq#768). Each statement still
	// takes the context, so Ctrl-C cancels it and the batch rolls back whole.
	detachedWrites bool
	// concurrentBatches: a retry may hold a second batch open while one is
	// pushed (triage.Schema.ConcurrentBatches); not on SQLite's one writer.
	concurrentBatches bool
	// maxReadBatch bounds the rows of one keyset read statement (0: the
	// caller's batch). On SQLite in rollback-journal mode (Laravel's
	// default) a statement's shared lock keeps the app's writers from
	// committing until it ends.
	maxReadBatch int
	// readOnlyTx: a dry run begins a read-only transaction (it needs no
	// write privilege); the SQLite driver refuses the option.
	readOnlyTx bool
	// explicitIDsAdvanceSequence: rows inserted with their own id leave
	// PostgreSQL's serial behind, so a restore that kept ids moves it;
	// AUTO_INCREMENT and SQLite's rowid follow the highest id.
	explicitIDsAdvanceSequence bool
	// bulkCopy: many rows go in by COPY … FROM STDIN (PostgreSQL), which
	// is much faster than multi-row INSERTs parsed and planned anew for
	// every statement (bench/).
	bulkCopy bool
	// failedAtAsText: listings read failed_at as text (PostgreSQL): lib/pq
	// fails the whole result set on a timestamp it cannot decode
	// ('infinity', a BC date); as text only that row's failed_at is
	// marked unreadable.
	failedAtAsText bool
	// bytesAreBinary: the driver sends a []byte argument as binary (lib/pq:
	// bytea), so text columns must be given strings.
	bytesAreBinary bool
	// insertRowsPerStatement keeps the Seeder's multi-row INSERT under
	// SQLite's bound variables and MariaDB's packet size.
	insertRowsPerStatement int
	// analyze, before a table's name, refreshes the planner's statistics
	// ("": nothing to do).
	analyze string
	// dropDatabaseSuffix ends DROP DATABASE: PostgreSQL's WITH (FORCE)
	// ends the sessions still connected to it.
	dropDatabaseSuffix string
	// deleteReturning reads SELECT VERSION() for DELETE … RETURNING; nil
	// where the store never uses it.
	deleteReturning func(version string) bool
	// ledgerColumns are the jobs ledger's (JobsBackend.Ledger): the uuid as
	// wide as failed_jobs.uuid, compared by bytes on MySQL as uuids are
	// everywhere else.
	ledgerColumns string
	// upsertCache ends the INSERT of a cache row (key, value, expiration)
	// with what replaces an existing key, as Laravel's upsert on key does.
	upsertCache string
	// Catalog queries, each binding one table as catalogArgs does:
	// columnsSQL reads each column's name, nullability and declared type;
	// indexesSQL each index's name and columns in order ('' for an
	// expression part); rowsSQL the planner's row estimate ("": count).
	columnsSQL, indexesSQL, rowsSQL string
	// columnTypes are the declared types (without a length) a column of
	// each kind may have (dialect.accepts).
	columnTypes map[kind][]string
}

// catalogArgs binds table t in a catalog query: PostgreSQL's to_regclass
// resolves the quoted name exactly as a query would, search_path included,
// and is NULL (not an error) when there is no such table or schema; MySQL
// takes the schema (NULL: the current database) and the name, SQLite's
// pragma functions the name and the schema (NULL: main, or temp).
func (d dialect) catalogArgs(t tableName) []any {
	var schema any
	if t.schema != "" {
		schema = t.schema
	}
	switch d.name {
	case "postgres":
		return []any{t.quoted(d)}
	case "mysql":
		return []any{schema, t.name}
	}
	return []any{t.name, schema}
}

// mysqlRestoreLock names a table's restore lock (dialect.restoreLock)
// within GET_LOCK's length limit.
const mysqlRestoreLock = "CONCAT('jobtriage restore ', SHA1(CONCAT(COALESCE(?, DATABASE()), '.', ?)))"

var mysqlTextTypes = []string{"char", "varchar", "tinytext", "text", "mediumtext", "longtext"}

// dialectFor returns the dialect of a driver name.
func dialectFor(driver string) (dialect, bool) {
	switch driver {
	case "postgres":
		return dialect{
			name:   "postgres",
			quote:  func(s string) string { return `"` + s + `"` },
			likeOp: "ILIKE",
			head:   func(col string, n int) string { return "left(" + col + ", " + itoa(n) + ")" },
			window: func(col, key string, n int) string {
				return "substr(" + col + ", nullif(strpos(" + col + ", " + sqlString(key) + "), 0), " + itoa(n) + ")"
			},
			// split_part with a negative field (PostgreSQL 14+) counts from
			// the end: two forward searches, where reverse() copied the whole
			// payload character by character.
			windowLast: func(col, key string, n int) string {
				k := sqlString(key)
				return "CASE WHEN strpos(" + col + ", " + k + ") > 0 THEN " + k + " || left(split_part(" + col + ", " + k + ", -1), " +
					itoa(n-len(key)) + ") END"
			},
			concat:       func(parts []string) string { return strings.Join(parts, " || ") },
			unitSep:      "chr(31)",
			topException: func(col string) string { return "split_part(" + col + ", ?, -1)" },
			asText:       func(col string) string { return "CAST(" + col + " AS text)" },
			lockRows:     " FOR UPDATE SKIP LOCKED",
			restoreLock:  `SELECT 1 FROM pg_advisory_xact_lock(hashtextextended('jobtriage restore ' || CAST(CAST(to_regclass(?) AS oid) AS text), 0))`,
			silentHolds: `SELECT COALESCE(c.relrowsecurity OR EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = c.oid AND NOT t.tgisinternal), false)
				FROM (SELECT CAST(to_regclass(?) AS oid) AS oid) r LEFT JOIN pg_class c ON c.oid = r.oid`,

			writeIsolation:    sql.LevelReadCommitted,
			detachedWrites:    true,
			concurrentBatches: true,
			readOnlyTx:        true,

			explicitIDsAdvanceSequence: true,
			bulkCopy:                   true,
			failedAtAsText:             true,
			bytesAreBinary:             true,
			insertRowsPerStatement:     seedRowsPerStatement,
			analyze:                    "VACUUM ANALYZE ",
			dropDatabaseSuffix:         " WITH (FORCE)",
			ledgerColumns:              `("uuid" varchar(255) NOT NULL PRIMARY KEY, "pushed_at" bigint NOT NULL)`,
			upsertCache:                ` ON CONFLICT ("key") DO UPDATE SET "value" = excluded."value", "expiration" = excluded."expiration"`,

			columnsSQL: `SELECT a.attname, NOT a.attnotnull, format_type(a.atttypid, a.atttypmod) FROM pg_catalog.pg_attribute a
				WHERE a.attrelid = to_regclass(?) AND a.attnum > 0 AND NOT a.attisdropped`,
			indexesSQL: `SELECT i.relname, COALESCE(a.attname, '') FROM pg_catalog.pg_index ix
				JOIN pg_catalog.pg_class i ON i.oid = ix.indexrelid
				CROSS JOIN LATERAL unnest(ix.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
				LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = ix.indrelid AND a.attnum = k.attnum
				WHERE ix.indrelid = to_regclass(?) ORDER BY i.relname, k.ord`,
			rowsSQL: `SELECT reltuples::bigint FROM pg_catalog.pg_class WHERE oid = to_regclass(?)`,
			columnTypes: map[kind][]string{kindInteger: {"smallint", "integer", "bigint"}, kindText: {"text", "character", "citext"},
				kindTime: {"timestamp"}, kindUUID: {"uuid", "text", "character", "citext"}},
		}, true
	case "mysql":
		return dialect{
			name:   "mysql",
			quote:  func(s string) string { return "`" + s + "`" },
			likeOp: "LIKE",
			head:   func(col string, n int) string { return "LEFT(" + col + ", " + itoa(n) + ")" },
			// The column's collation (utf8mb4_unicode_ci) would find the key
			// in any case, and match ignorable characters; _bin compares code
			// points and still counts characters.
			window: func(col, key string, n int) string {
				return "SUBSTRING(" + col + ", NULLIF(LOCATE(_utf8mb4" + sqlString(key) + " COLLATE utf8mb4_bin, " + col + "), 0), " + itoa(n) + ")"
			},
			// SUBSTRING_INDEX with a negative count is the text after the
			// key's last occurrence, found without REVERSE copying the
			// whole payload; it matches case-sensitively, as _bin does.
			windowLast: func(col, key string, n int) string {
				k := "_utf8mb4" + sqlString(key) + " COLLATE utf8mb4_bin"
				return "CASE WHEN LOCATE(" + k + ", " + col + ") > 0 THEN CONCAT(" + k + ", LEFT(SUBSTRING_INDEX(" + col + ", " + k + ", -1), " +
					itoa(n-len(key)) + ")) END"
			},
			concat:        func(parts []string) string { return "CONCAT(" + strings.Join(parts, ", ") + ")" },
			unitSep:       "CHAR(31 USING utf8mb4)",
			topException:  func(col string) string { return "SUBSTRING_INDEX(" + col + ", ?, -1)" },
			asText:        func(col string) string { return "CAST(" + col + " AS CHAR)" },
			lockRows:      " FOR UPDATE",
			restoreLock:   "SELECT GET_LOCK(" + mysqlRestoreLock + ", @@innodb_lock_wait_timeout)",
			restoreUnlock: "DO RELEASE_LOCK(" + mysqlRestoreLock + ")",

			writeIsolation:    sql.LevelReadCommitted,
			concurrentBatches: true,
			readOnlyTx:        true,

			insertRowsPerStatement: seedRowsPerStatement,
			analyze:                "ANALYZE TABLE ",
			deleteReturning:        mariadbHasDeleteReturning,
			ledgerColumns:          "(`uuid` varchar(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL PRIMARY KEY, `pushed_at` bigint NOT NULL)",
			upsertCache:            " ON DUPLICATE KEY UPDATE `value` = VALUES(`value`), `expiration` = VALUES(`expiration`)",

			columnsSQL: `SELECT column_name, is_nullable = 'YES', column_type FROM information_schema.columns
				WHERE table_schema = COALESCE(?, DATABASE()) AND table_name = ?`,
			indexesSQL: `SELECT index_name, COALESCE(column_name, '') FROM information_schema.statistics
				WHERE table_schema = COALESCE(?, DATABASE()) AND table_name = ? ORDER BY index_name, seq_in_index`,
			rowsSQL: `SELECT table_rows FROM information_schema.tables WHERE table_schema = COALESCE(?, DATABASE()) AND table_name = ?`,
			// MariaDB 10.7+'s native uuid type compares with uuid strings.
			columnTypes: map[kind][]string{kindInteger: {"tinyint", "smallint", "mediumint", "int", "integer", "bigint"},
				kindText: mysqlTextTypes, kindTime: {"timestamp", "datetime"}, kindUUID: append([]string{"uuid"}, mysqlTextTypes...)},
		}, true
	case "sqlite":
		return dialect{
			name:   "sqlite",
			quote:  func(s string) string { return `"` + s + `"` },
			likeOp: "LIKE",
			head:   func(col string, n int) string { return "substr(" + col + ", 1, " + itoa(n) + ")" },
			// No window: SQLite runs in-process, so a listing reads the whole
			// payload and payload.JobClass cuts the windows in Go, as for
			// whole rows (cheaper here than four searches in SQL).
			// Without the cast the driver turns a DATETIME column into a
			// time.Time and the stored text is lost.
			asText: func(col string) string { return "CAST(" + col + " AS TEXT)" },

			maxReadBatch:           sqliteReadBatch,
			insertRowsPerStatement: seedRowsPerStatementSQLite,
			ledgerColumns:          `("uuid" text NOT NULL PRIMARY KEY, "pushed_at" integer NOT NULL)`,
			upsertCache:            ` ON CONFLICT ("key") DO UPDATE SET "value" = excluded."value", "expiration" = excluded."expiration"`,

			columnsSQL: `SELECT name, "notnull" = 0, type FROM pragma_table_info(?, ?)`,
			// An attached database's triggers are not looked up: assumed.
			silentHolds: `SELECT ?2 IS NOT NULL OR EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?1)`,
			// pragma_index_info names no column (NULL) for an expression part.
			indexesSQL: `SELECT il.name, COALESCE(ii.name, '') FROM pragma_index_list(?1, ?2) il
				JOIN pragma_index_info(il.name, ?2) ii ORDER BY il.name, ii.seqno`,
		}, true
	}
	return dialect{}, false
}

// classWindows selects payload.ClassWindows of a payload column: the same
// windows, joined the same way, so that payload.JobClass reads the class a
// whole payload gives. Text functions, not JSON ones: a row that is not
// JSON must not fail the listing, and PostgreSQL's json operators fail on
// the \u0000 every serialized protected property carries ("unsupported
// Unicode escape sequence"), even when extracting another key.
func (d dialect) classWindows(col string) string {
	if d.window == nil {
		return col
	}
	parts := make([]string, 0, 2*len(payload.ClassKeys))
	for k, key := range payload.ClassKeys {
		window := d.window
		if payload.ClassKeyLast[k] {
			window = d.windowLast
		}
		parts = append(parts, d.unitSep, "coalesce("+window(col, key, payload.ClassWindowChars)+", '')")
	}
	return d.concat(parts)
}

// sqlString quotes a constant as a SQL string literal.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// likeEscaper escapes LIKE wildcards with '!' as the escape character, which
// means the same thing on all three databases (a backslash does not).
var likeEscaper = strings.NewReplacer("!", "!!", "%", "!%", "_", "!_")

func likeContains(s string) string { return "%" + likeEscaper.Replace(s) + "%" }
