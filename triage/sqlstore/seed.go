package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"
)

// Seeder writes generated rows in bulk into a Laravel schema: the demo
// database (jobtriage demo), the benchmark databases (bench/seed) and the
// tests that need many rows. It is the only way rows are written in bulk
// outside the use-cases, so that sqlstore stays the one package that holds
// SQL and imports database drivers. jobtriage never seeds an application's
// database.
type Seeder struct {
	db  *sqlx.DB
	d   dialect
	own bool // Close closes db
}

// Rows of one multi-row INSERT: dialect.insertRowsPerStatement.
const (
	seedRowsPerStatementSQLite = 100
	seedRowsPerStatement       = 200
)

// OpenSeeder connects to ep for seeding (a SQLite file is created when
// missing).
func OpenSeeder(ctx context.Context, ep Endpoint) (*Seeder, error) {
	d, ok := dialectFor(ep.Driver)
	if !ok {
		return nil, fmt.Errorf("sqlstore: unsupported driver %q (want postgres, mysql or sqlite)", ep.Driver)
	}
	db, err := OpenRaw(ctx, ep)
	if err != nil {
		return nil, err
	}
	return &Seeder{db: db, d: d, own: true}, nil
}

// Seeder seeds the store's database over its connection pool; closing the
// store closes it.
func (s *Store) Seeder() *Seeder { return &Seeder{db: s.db, d: s.d} }

// Driver is the seeder's dialect: postgres, mysql or sqlite.
func (s *Seeder) Driver() string { return s.d.name }

// Close closes the connection OpenSeeder made.
func (s *Seeder) Close() error {
	if !s.own {
		return nil
	}
	return s.db.Close()
}

// ResetLaravelSchema drops the Laravel queue tables and what RecordSeed
// recorded (when they exist) and creates the Laravel schema variant v.
func (s *Seeder) ResetLaravelSchema(ctx context.Context, v SchemaVariant) error {
	for _, t := range []string{"failed_jobs", "jobs", "job_batches", seedParamsTable} {
		if _, err := s.db.ExecContext(ctx, "DROP TABLE IF EXISTS "+s.d.quote(t)); err != nil {
			return err
		}
	}
	return s.CreateLaravelSchema(ctx, v)
}

// CreateLaravelSchema creates Laravel's jobs, failed_jobs and job_batches
// tables (variant v) in an empty database.
func (s *Seeder) CreateLaravelSchema(ctx context.Context, v SchemaVariant) error {
	return CreateLaravelSchema(ctx, s.db, s.d.name, v)
}

// Insert writes up to max rows that next yields into table's columns in
// one transaction — COPY on PostgreSQL, multi-row INSERTs on MySQL and
// SQLite — and returns how many it wrote (0 when next yielded none: the
// transaction is rolled back). Memory stays constant in max.
func (s *Seeder) Insert(ctx context.Context, table string, cols []string, max int, next func() ([]any, bool, error)) (n int, err error) {
	for _, c := range append([]string{table}, cols...) {
		if !identRE.MatchString(c) {
			return 0, fmt.Errorf("sqlstore: invalid identifier %q", c)
		}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer func() {
		if err != nil || n == 0 {
			_ = tx.Rollback()
		}
	}()
	if s.d.bulkCopy {
		err = copyIn(ctx, tx, s.d.quote(table), cols, func(put func(...any) error) error {
			n, err = pullRows(max, next, func(vals []any) error { return put(vals...) })
			return err
		})
	} else {
		n, err = s.seedInserts(ctx, tx, table, cols, max, next)
	}
	if err != nil || n == 0 {
		return 0, err
	}
	return n, tx.Commit()
}

func (s *Seeder) seedInserts(ctx context.Context, tx *sql.Tx, table string, cols []string, max int, next func() ([]any, bool, error)) (int, error) {
	quoted := make([]string, len(cols))
	for i, c := range cols {
		quoted[i] = s.d.quote(c)
	}
	head := "INSERT INTO " + s.d.quote(table) + " (" + strings.Join(quoted, ", ") + ") VALUES "
	tuple := "(" + marks(len(cols)) + ")"
	per := s.d.insertRowsPerStatement
	args := make([]any, 0, per*len(cols))
	rows := 0
	flush := func() error {
		if rows == 0 {
			return nil
		}
		_, err := tx.ExecContext(ctx, head+tuples(tuple, rows), args...)
		args, rows = args[:0], 0
		return err
	}
	n, err := pullRows(max, next, func(vals []any) error {
		args = append(args, vals...)
		if rows++; rows == per {
			return flush()
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	if err := flush(); err != nil {
		return 0, err
	}
	return n, nil
}

// pullRows hands put each row next gives, at most max, and returns how
// many it handed.
func pullRows(max int, next func() ([]any, bool, error), put func([]any) error) (int, error) {
	n := 0
	for n < max {
		vals, ok, err := next()
		if err != nil {
			return 0, err
		}
		if !ok {
			break
		}
		if err := put(vals); err != nil {
			return 0, err
		}
		n++
	}
	return n, nil
}

// seedParamsTable records the parameters a seeded database was made with.
const seedParamsTable = "jobtriage_bench_seed"

// SeededWith reports the failed_jobs row count and the parameters
// RecordSeed stored; ok is false when either cannot be read (a new or
// unfinished database).
func (s *Seeder) SeededWith(ctx context.Context) (rows int64, params string, ok bool) {
	if err := s.db.GetContext(ctx, &rows, "SELECT count(*) FROM failed_jobs"); err != nil {
		return 0, "", false
	}
	if err := s.db.GetContext(ctx, &params, "SELECT params FROM "+seedParamsTable); err != nil {
		return rows, "", false
	}
	return rows, params, true
}

// RecordSeed refreshes the planner's statistics of failed_jobs and stores
// params for SeededWith (after the rows: a seed cut short has none);
// ResetLaravelSchema drops them.
func (s *Seeder) RecordSeed(ctx context.Context, params string) error {
	if s.d.analyze != "" {
		_, _ = s.db.ExecContext(ctx, s.d.analyze+"failed_jobs")
	}
	if _, err := s.db.ExecContext(ctx, "DROP TABLE IF EXISTS "+seedParamsTable); err != nil {
		return err
	}
	if _, err := s.db.ExecContext(ctx, "CREATE TABLE "+seedParamsTable+" (params varchar(500) NOT NULL)"); err != nil {
		return err
	}
	_, err := s.db.ExecContext(ctx, s.db.Rebind("INSERT INTO "+seedParamsTable+" (params) VALUES (?)"), params)
	return err
}

// EnsureDatabase creates the database name on the server admin reaches
// (PostgreSQL or MySQL/MariaDB) when it does not exist, and returns admin
// with Database set to it.
func EnsureDatabase(ctx context.Context, admin Endpoint, name string) (Endpoint, error) {
	if !identRE.MatchString(name) {
		return admin, fmt.Errorf("sqlstore: invalid database name %q", name)
	}
	ep := admin
	ep.Database = name
	create := "CREATE DATABASE " + name
	switch admin.Driver {
	case "postgres":
	case "mysql":
		// Without a database: the admin DSN's may not exist yet either.
		admin.Database = ""
		create = "CREATE DATABASE IF NOT EXISTS " + name + " CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"
	default:
		return ep, errors.New("sqlstore: EnsureDatabase needs a postgres or mysql server")
	}
	db, err := OpenRaw(ctx, admin)
	if err != nil {
		return ep, err
	}
	defer db.Close()
	var exists bool
	if admin.Driver == "postgres" { // which has no CREATE DATABASE IF NOT EXISTS
		err = db.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists)
	}
	if err == nil && !exists {
		_, err = db.ExecContext(ctx, create)
	}
	if err != nil {
		return ep, fmt.Errorf("%s: %w", admin.Driver, err)
	}
	return ep, nil
}

// DropDatabase drops the database name on the seeder's server (tests
// clean up what EnsureDatabase made).
func (s *Seeder) DropDatabase(ctx context.Context, name string) error {
	if !identRE.MatchString(name) {
		return fmt.Errorf("sqlstore: invalid database name %q", name)
	}
	_, err := s.db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+s.d.dropDatabaseSuffix)
	return err
}
