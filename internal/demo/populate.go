package demo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/jobtriage/jobtriage/triage/sqlstore"
)

// Populate inserts opts.Failed failed_jobs and opts.Jobs jobs rows into an
// existing Laravel schema (Laravel's table names) through the seeder, a transaction per BatchSize
// rows, in constant memory.
func Populate(ctx context.Context, s *sqlstore.Seeder, opts Options) error {
	if s == nil {
		return errors.New("demo: no database")
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = defaultBatch
		if s.Driver() == "postgres" {
			opts.BatchSize = defaultCopyBatch
		}
	}
	g, err := NewGenerator(opts)
	if err != nil {
		return err
	}
	w := &writer{s: s, opts: g.Options(), total: opts.Failed + opts.Jobs}
	if err := w.failed(ctx, g); err != nil {
		return err
	}
	return w.jobs(ctx, g)
}

// Rows per transaction when BatchSize is unset: PostgreSQL's COPY streams
// more than multi-row INSERTs.
const (
	defaultBatch     = 2000
	defaultCopyBatch = 5000
)

type writer struct {
	s     *sqlstore.Seeder
	opts  Options
	done  int
	total int
}

var (
	failedCols = []string{"uuid", "connection", "queue", "payload", "exception", "failed_at"}
	jobCols    = []string{"queue", "attempts", "reserved_at", "available_at", "created_at", "payload"}
)

func (w *writer) failed(ctx context.Context, g *Generator) error {
	return w.batches(ctx, "failed_jobs", failedCols, func() ([]any, bool, error) {
		r, ok, err := g.NextFailed()
		if !ok || err != nil {
			return nil, ok, err
		}
		return []any{r.UUID, r.Connection, r.Queue, r.Payload, r.Exception, r.FailedAtText()}, true, nil
	})
}

func (w *writer) jobs(ctx context.Context, g *Generator) error {
	return w.batches(ctx, "jobs", jobCols, func() ([]any, bool, error) {
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

func (w *writer) batches(ctx context.Context, table string, cols []string, next func() ([]any, bool, error)) error {
	for {
		n, err := w.s.Insert(ctx, table, cols, w.opts.BatchSize, next)
		if err != nil {
			return fmt.Errorf("demo: inserting into %s: %w", table, err)
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

// Demo database sizes: enough to page and group, small enough to ship.
const (
	demoFailed = 400
	demoJobs   = 48
	demoSeed   = 20261130
)

// CreateDemoSQLite creates a SQLite file at path, never an existing one,
// with Laravel 8's schema, demoFailed failed jobs over the week before now
// and demoJobs queued jobs.
func CreateDemoSQLite(ctx context.Context, path string, now time.Time) error {
	if path == "" {
		return errors.New("demo: no path for the demo database")
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("demo: creating demo database: %w", err)
	}
	f.Close()
	ok := false
	defer func() {
		if !ok {
			os.Remove(path)
		}
	}()
	s, err := sqlstore.OpenSeeder(ctx, sqlstore.Endpoint{Driver: "sqlite", Path: path})
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	defer s.Close()
	if err := s.CreateLaravelSchema(ctx, sqlstore.SchemaLaravel8); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if err := Populate(ctx, s, Options{Failed: demoFailed, Jobs: demoJobs, Seed: demoSeed, Now: now}); err != nil {
		return err
	}
	ok = true
	return nil
}
