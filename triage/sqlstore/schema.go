package sqlstore

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/jobtriage/jobtriage/triage"
)

// columns returns the table's columns with their nullability; an empty map
// means the table does not exist.
func (s *Store) columns(ctx context.Context, table string) (map[string]bool, error) {
	rows, err := s.db.QueryContext(ctx, s.db.Rebind(s.d.columnsQuery), table)
	if err != nil {
		return nil, fmt.Errorf("reading the columns of %s: %w", table, err)
	}
	defer rows.Close()
	cols := map[string]bool{}
	for rows.Next() {
		var name string
		var nullable bool
		if err := rows.Scan(&name, &nullable); err != nil {
			return nil, err
		}
		cols[strings.ToLower(name)] = nullable
	}
	return cols, rows.Err()
}

// detectSchema checks that failed_jobs has the columns Laravel writes and
// finds the id mode, so that every later query can rely on them.
func (s *Store) detectSchema(ctx context.Context, cfg Config) error {
	sc := triage.Schema{
		Dialect:     s.d.name,
		FailedTable: cfg.FailedTable,
		JobsTable:   cfg.JobsTable,
	}
	if cfg.JobsOnly {
		jobs, err := s.columns(ctx, cfg.JobsTable)
		if err != nil {
			return err
		}
		sc.HasJobs = len(jobs) > 0
		s.schema = sc
		return s.requireJobs()
	}
	cols, err := s.columns(ctx, cfg.FailedTable)
	if err != nil {
		return err
	}
	if len(cols) == 0 {
		return fmt.Errorf("%w: table %q not found in %s; create it in the app with "+
			"`php artisan queue:failed-table && php artisan migrate` (Laravel 11+: make:queue-failed-table), "+
			"or name the table with --failed-table", triage.ErrMissingTable, cfg.FailedTable, s.ep.Redacted())
	}
	var missing []string
	for _, c := range []string{"id", "connection", "queue", "payload", "exception", "failed_at"} {
		if _, ok := cols[c]; !ok {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return fmt.Errorf("%w: table %q lacks the column(s) %s that Laravel's failed_jobs has",
			triage.ErrMissingTable, cfg.FailedTable, strings.Join(missing, ", "))
	}
	if nullable, ok := cols["uuid"]; ok {
		sc.IDMode = triage.IDModeUUID
		sc.UUIDNullable = nullable
	}
	jobs, err := s.columns(ctx, cfg.JobsTable)
	if err != nil {
		return err
	}
	sc.HasJobs = len(jobs) > 0
	batches, err := s.columns(ctx, cfg.BatchesTable)
	if err != nil {
		return err
	}
	sc.HasBatches = len(batches) > 0
	s.schema = sc
	return nil
}

// requireJobs is the error for commands that need the jobs table.
func (s *Store) requireJobs() error {
	if s.schema.HasJobs {
		return nil
	}
	return fmt.Errorf("%w: table %q not found in %s; create it in the app with "+
		"`php artisan queue:table && php artisan migrate` (Laravel 11+: make:queue-table), "+
		"or name the table with --jobs-table", triage.ErrMissingTable, s.schema.JobsTable, s.ep.Redacted())
}
