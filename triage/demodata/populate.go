package demodata

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/jobtriage/jobtriage/triage/sqlstore"
)

var tableNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// Populate inserts opts.Failed failed_jobs rows and opts.Jobs jobs rows into
// an existing Laravel schema. Rows go in one transaction per BatchSize rows:
// COPY on PostgreSQL, multi-row INSERTs on MySQL/MariaDB and SQLite. Memory
// stays constant in the row count.
func Populate(ctx context.Context, db *sqlx.DB, driver string, opts Options) error {
	if db == nil {
		return errors.New("demodata: no database")
	}
	switch driver {
	case "postgres", "mysql", "sqlite":
	default:
		return fmt.Errorf("demodata: unsupported driver %q (want postgres, mysql or sqlite)", driver)
	}
	if opts.FailedTable == "" {
		opts.FailedTable = "failed_jobs"
	}
	if opts.JobsTable == "" {
		opts.JobsTable = "jobs"
	}
	for _, t := range []string{opts.FailedTable, opts.JobsTable} {
		if !tableNameRE.MatchString(t) {
			return fmt.Errorf("demodata: invalid table name %q", t)
		}
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 2000
		if driver == "postgres" {
			opts.BatchSize = 5000
		}
	}
	g, err := NewGenerator(opts)
	if err != nil {
		return err
	}
	w := &writer{db: db, driver: driver, opts: g.Options(), total: opts.Failed + opts.Jobs}
	if err := w.failed(ctx, g); err != nil {
		return err
	}
	return w.jobs(ctx, g)
}

type writer struct {
	db     *sqlx.DB
	driver string
	opts   Options
	done   int
	total  int
}

var (
	failedCols = []string{"uuid", "connection", "queue", "payload", "exception", "failed_at"}
	jobCols    = []string{"queue", "attempts", "reserved_at", "available_at", "created_at", "payload"}
)

// rowsPerStatement keeps multi-row INSERTs under each driver's placeholder
// and packet limits (SQLite 32766 variables, MariaDB 16 MiB packets).
func (w *writer) rowsPerStatement() int {
	if w.driver == "sqlite" {
		return 100
	}
	return 200
}

func (w *writer) failed(ctx context.Context, g *Generator) error {
	return w.batches(ctx, w.opts.FailedTable, failedCols, func() ([]any, bool, error) {
		r, ok, err := g.NextFailed()
		if !ok || err != nil {
			return nil, ok, err
		}
		return []any{r.UUID, r.Connection, r.Queue, r.Payload, r.Exception, r.FailedAtText()}, true, nil
	})
}

func (w *writer) jobs(ctx context.Context, g *Generator) error {
	return w.batches(ctx, w.opts.JobsTable, jobCols, func() ([]any, bool, error) {
		j, ok, err := g.NextJob()
		if !ok || err != nil {
			return nil, ok, err
		}
		var reserved any
		if j.ReservedAt != nil {
			reserved = *j.ReservedAt
		}
		return []any{j.Queue, j.Attempts, reserved, j.AvailableAt, j.CreatedAt, j.Payload}, true, nil
	})
}

// batches drains next into table, one transaction per BatchSize rows.
func (w *writer) batches(ctx context.Context, table string, cols []string, next func() ([]any, bool, error)) error {
	for {
		n, err := w.oneTx(ctx, table, cols, next)
		if err != nil {
			return fmt.Errorf("demodata: inserting into %s: %w", table, err)
		}
		if n == 0 {
			return nil
		}
		w.done += n
		if w.opts.Progress != nil {
			w.opts.Progress(w.done, w.total)
		}
	}
}

func (w *writer) oneTx(ctx context.Context, table string, cols []string, next func() ([]any, bool, error)) (n int, err error) {
	tx, err := w.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if w.driver == "postgres" {
		n, err = w.copyIn(ctx, tx, table, cols, next)
	} else {
		n, err = w.insertChunks(ctx, tx, table, cols, next)
	}
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, tx.Rollback()
	}
	return n, tx.Commit()
}

func (w *writer) copyIn(ctx context.Context, tx *sql.Tx, table string, cols []string, next func() ([]any, bool, error)) (int, error) {
	stmt, err := tx.PrepareContext(ctx, copyFrom(table, cols...))
	if err != nil {
		return 0, err
	}
	defer stmt.Close()
	n := 0
	for n < w.opts.BatchSize {
		vals, ok, err := next()
		if err != nil {
			return 0, err
		}
		if !ok {
			break
		}
		if _, err := stmt.ExecContext(ctx, vals...); err != nil {
			return 0, err
		}
		n++
	}
	if _, err := stmt.ExecContext(ctx); err != nil {
		return 0, err
	}
	return n, nil
}

func (w *writer) insertChunks(ctx context.Context, tx *sql.Tx, table string, cols []string, next func() ([]any, bool, error)) (int, error) {
	q := quoteIdent(w.driver, table)
	var quoted []string
	for _, c := range cols {
		quoted = append(quoted, quoteIdent(w.driver, c))
	}
	head := "INSERT INTO " + q + " (" + strings.Join(quoted, ", ") + ") VALUES "
	tuple := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
	per := w.rowsPerStatement()
	n := 0
	args := make([]any, 0, per*len(cols))
	flush := func(rows int) error {
		if rows == 0 {
			return nil
		}
		stmt := head + strings.TrimSuffix(strings.Repeat(tuple+", ", rows), ", ")
		_, err := tx.ExecContext(ctx, stmt, args...)
		args = args[:0]
		return err
	}
	rows := 0
	for n < w.opts.BatchSize {
		vals, ok, err := next()
		if err != nil {
			return 0, err
		}
		if !ok {
			break
		}
		args = append(args, vals...)
		rows++
		n++
		if rows == per {
			if err := flush(rows); err != nil {
				return 0, err
			}
			rows = 0
		}
	}
	if err := flush(rows); err != nil {
		return 0, err
	}
	return n, nil
}

func quoteIdent(driver, name string) string {
	if driver == "mysql" {
		return "`" + name + "`"
	}
	return `"` + name + `"`
}

// Demo database sizes: enough to page and group, small enough to ship.
const (
	demoFailed = 400
	demoJobs   = 48
	demoSeed   = 20261130
)

// CreateDemoSQLite creates a new SQLite file at path with Laravel 8's schema,
// a few hundred failed jobs over the week before now and a few dozen queued
// jobs. It refuses to touch an existing file.
func CreateDemoSQLite(ctx context.Context, path string, now time.Time) error {
	if path == "" {
		return errors.New("demodata: no path for the demo database")
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("demodata: creating demo database: %w", err)
	}
	f.Close()
	ok := false
	defer func() {
		if !ok {
			os.Remove(path)
		}
	}()
	db, err := sqlstore.OpenRaw(ctx, sqlstore.Endpoint{Driver: "sqlite", Path: path})
	if err != nil {
		return fmt.Errorf("demodata: %w", err)
	}
	defer db.Close()
	if err := sqlstore.CreateLaravelSchema(ctx, db, "sqlite", sqlstore.SchemaLaravel8); err != nil {
		return fmt.Errorf("demodata: %w", err)
	}
	if err := Populate(ctx, db, "sqlite", Options{Failed: demoFailed, Jobs: demoJobs, Seed: demoSeed, Now: now}); err != nil {
		return err
	}
	ok = true
	return nil
}

// copyFrom is the COPY ... FROM STDIN statement lib/pq prepares for a bulk
// write: the table and columns quoted as identifiers (what the deprecated
// pq.CopyIn built).
func copyFrom(table string, cols ...string) string {
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = pq.QuoteIdentifier(c)
	}
	return "COPY " + pq.QuoteIdentifier(table) + " (" + strings.Join(q, ", ") + ") FROM STDIN"
}
