package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/jobtriage/jobtriage/triage"
)

// indexes reads the indexes of table (as configured: "failed_jobs" or
// "schema.failed_jobs"), each with its columns in order ("" for an
// expression part). A table that does not exist has none.
func (s *Store) indexes(ctx context.Context, table string) (names []string, cols map[string][]string, err error) {
	t, err := parseTableName(table)
	if err != nil {
		return nil, nil, err
	}
	rows, err := s.db.QueryContext(ctx, s.db.Rebind(s.d.indexesSQL), s.d.catalogArgs(t)...)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the indexes of %s on %s: %s", t, s.ep.Redacted(), scrub(err, s.ep))
	}
	defer rows.Close()
	cols = map[string][]string{}
	for rows.Next() {
		var name, col string
		if err := rows.Scan(&name, &col); err != nil {
			return nil, nil, s.queryError(err)
		}
		if _, seen := cols[name]; !seen {
			names = append(names, name)
		}
		cols[name] = append(cols[name], col)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, s.queryError(err)
	}
	return names, cols, nil
}

// Inspect implements triage.Inspector: the server, the tables the store
// found on open, failed_jobs' row count, the indexes worth adding, and what
// the server's clock zone means on this dialect.
func (s *Store) Inspect(ctx context.Context) (triage.StoreFacts, error) {
	f := &triage.DatabaseFacts{Endpoint: s.ep.Redacted(), Schema: s.schema}
	product, version := s.d.name, ""
	var err error
	switch s.d.name {
	case "postgres":
		f.ClockSetting = "TimeZone"
		f.ClockAdvice = "failed_at (timestamp without time zone) stores the text as given; ad-hoc SQL comparing it with now() or CURRENT_TIMESTAMP is off by the difference"
		err = s.db.QueryRowContext(ctx, `SELECT current_setting('server_version'), current_setting('TimeZone')`).
			Scan(&version, &f.Clock)
	case "mysql":
		f.ClockSetting = "time_zone"
		f.ClockAdvice = "failed_at is a TIMESTAMP column, which MySQL stores converted from the session time_zone (pin it with 'timezone' on the database connection, as Laravel then sets it too); ad-hoc SQL comparing failed_at with NOW() is off by the difference"
		var system string
		err = s.db.QueryRowContext(ctx, `SELECT VERSION(), @@session.time_zone, @@global.system_time_zone`).
			Scan(&version, &f.Clock, &system)
		if strings.EqualFold(f.Clock, "SYSTEM") {
			// SYSTEM means the server process's zone, which MySQL names by
			// its abbreviation ("UTC", "CET").
			f.Clock, f.ClockSetting = system, "time_zone=SYSTEM, system_time_zone"
		}
	case "sqlite":
		// SQLite has no session zone: its clock functions are UTC.
		product, f.Clock, f.ClockSetting = "SQLite", "UTC", "SQLite's datetime('now') and CURRENT_TIMESTAMP"
		f.ClockAdvice = "ad-hoc SQL comparing failed_at with datetime('now') is off by the difference"
		err = s.db.QueryRowContext(ctx, `SELECT sqlite_version()`).Scan(&version)
	}
	if err != nil {
		return triage.StoreFacts{}, s.queryError(err)
	}
	f.Server = product + " " + version
	// An error because ctx ended is no fact about the database.
	if f.Rows, f.RowsExact, f.RowsKnown, f.RowsErr = s.rowEstimate(ctx, s.schema.FailedTable); f.RowsErr != nil && ctx.Err() != nil {
		return triage.StoreFacts{}, ctx.Err()
	}
	if f.Indexes, f.IndexesErr = s.missingIndexes(ctx); f.IndexesErr != nil && ctx.Err() != nil {
		return triage.StoreFacts{}, ctx.Err()
	}
	return triage.StoreFacts{Database: f}, nil
}

// rowEstimate returns the number of rows of table, cheaply: the planner's
// estimate on PostgreSQL (pg_class.reltuples; ok false before the first
// ANALYZE) and MySQL (InnoDB's table_rows, which can be off by half), and
// an exact count on SQLite, whose count(*) walks the smallest index's
// pages without reading rows. exact says which.
func (s *Store) rowEstimate(ctx context.Context, table string) (n int64, exact, ok bool, err error) {
	t, err := parseTableName(table)
	if err != nil {
		return 0, false, false, err
	}
	var v sql.NullInt64
	q, args := s.d.rowsSQL, s.d.catalogArgs(t)
	if exact = q == ""; exact {
		q, args = "SELECT count(*) FROM "+t.quoted(s.d), nil
	}
	err = s.db.QueryRowContext(ctx, s.db.Rebind(q), args...).Scan(&v)
	switch {
	case err == sql.ErrNoRows:
		return 0, exact, false, nil
	case err != nil:
		return 0, exact, false, s.queryError(err)
	case !v.Valid || v.Int64 < 0:
		// PostgreSQL 14+ reports -1 for a table never analysed.
		return 0, exact, false, nil
	}
	return v.Int64, exact, true, nil
}

// IndexAdvice is the domain's: doctor prints it as the store gives it.
type IndexAdvice = triage.IndexAdvice

// missingIndexes checks the indexes jobtriage and Laravel benefit from
// (queue-spec §9, §10.12) and returns those that are missing, with the
// statement to add each. It never creates one: changing an application's
// schema is the application's migration's job.
//
//   - failed_jobs(failed_at): queue:prune-failed deletes 1000 rows per
//     statement by failed_at, and flush --hours and --since filter on it;
//     without an index each statement scans the whole table.
//   - jobs(queue): every worker pop filters on queue; Laravel's migration
//     creates jobs_queue_index, so its absence means it was dropped.
func (s *Store) missingIndexes(ctx context.Context) ([]IndexAdvice, error) {
	type want struct {
		table, column, why string
	}
	wants := []want{{s.schema.FailedTable, "failed_at",
		"php artisan queue:prune-failed, queue:flush --hours and jobtriage prune/flush/--since filter on failed_at; without an index every statement scans the whole table"}}
	if s.schema.HasJobs {
		wants = append(wants, want{s.schema.JobsTable, "queue",
			"every worker pop filters the jobs table on queue (Laravel's migration creates this index)"})
	}
	var out []IndexAdvice
	for _, w := range wants {
		if w.table == "" {
			continue
		}
		names, cols, err := s.indexes(ctx, w.table)
		if err != nil {
			return nil, err
		}
		// Only an index that starts with the column serves a range scan or
		// an equality filter on it. One that holds it further on (Laravel
		// 11+'s migration adds (connection, queue, failed_at)) serves it
		// only with equality on every column before it: it is named, with
		// what it leaves out, so that it is not taken for the index advised.
		var partial []string
		covered := false
		for _, n := range names {
			c := cols[n]
			covered = covered || strings.EqualFold(c[0], w.column)
			if i := slices.IndexFunc(c, func(col string) bool { return strings.EqualFold(col, w.column) }); i > 0 {
				partial = append(partial, n+" ("+strings.Join(c, ", ")+")")
			}
		}
		if covered {
			continue
		}
		stmt, err := s.CreateIndexSQL(w.table, w.column)
		if err != nil {
			return nil, err
		}
		why := w.why
		if len(partial) > 0 {
			why = strings.Join(partial, ", ") + " holds it, but serves " + w.column +
				" only after equality on the columns before it, not across their values; " + why
		}
		out = append(out, IndexAdvice{Table: w.table, Columns: []string{w.column}, Why: why, SQL: stmt})
	}
	return out, nil
}

// CreateIndexSQL is the statement that adds a plain index on table's
// column, named as Laravel's $table->index() names it
// ({prefix}{table}_{column}_index, dots and dashes as underscores). It
// locks as little as each dialect allows: CONCURRENTLY on PostgreSQL
// (which cannot run inside a transaction), an in-place, non-locking ALTER
// on MySQL/MariaDB.
func (s *Store) CreateIndexSQL(table, column string) (string, error) {
	t, err := parseTableName(table)
	if err != nil {
		return "", err
	}
	if !identRE.MatchString(column) {
		return "", fmt.Errorf("invalid column name %q", column)
	}
	name := strings.ToLower(strings.NewReplacer(".", "_", "-", "_").Replace(t.String() + "_" + column + "_index"))
	if len(name) > maxIdentifierLen {
		// PostgreSQL truncates to 63 bytes and MySQL refuses over 64.
		name = name[:maxIdentifierLen]
	}
	idx, on, col := s.d.quote(name), t.quoted(s.d), " ("+s.d.quote(column)+")"
	switch {
	case s.d.name == "postgres":
		// The index lives in the table's schema; its name is not qualified.
		return "CREATE INDEX CONCURRENTLY " + idx + " ON " + on + col + ";", nil
	case s.d.name == "mysql":
		return "ALTER TABLE " + on + " ADD INDEX " + idx + col + ", ALGORITHM=INPLACE, LOCK=NONE;", nil
	case t.schema != "":
		// SQLite puts the schema on the index name, not the table.
		return "CREATE INDEX " + s.d.quote(t.schema) + "." + idx + " ON " + s.d.quote(t.name) + col + ";", nil
	}
	return "CREATE INDEX " + idx + " ON " + on + col + ";", nil
}

// maxIdentifierLen is PostgreSQL's identifier limit (NAMEDATALEN-1), the
// stricter of the three.
const maxIdentifierLen = 63
