package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"iter"
	"time"

	"github.com/jobtriage/jobtriage/triage"
)

const (
	// pruneBatch is the ids one batch of a prune or flush covers, when
	// PruneParams.BatchSize does not say.
	pruneBatch = 1000
	// archiveAttempts bounds how often one archived batch runs again after
	// the database rolled it back as a deadlock victim.
	archiveAttempts = 8
	// defaultStopAfterClean is how many batches in a row without a row to
	// prune end a prune by age.
	defaultStopAfterClean = 3
)

// Prune implements triage.Store: it walks failed_jobs in primary-key
// batches from the first id (negative ids included).
//
// failed_jobs has no index on failed_at, so Laravel's prune scans the whole
// table for every chunk. Ids grow with failure time, so this walks the
// primary key upwards instead: each batch is a range delete over at most
// p.BatchSize ids, and the walk stops after StopAfterClean batches in a
// row in which nothing was old enough (a row behind newer ones, out of
// failure order by a clock step, is still caught inside those batches).
//
// With p.All it deletes the rows that are there when it starts: the
// highest id, read first, bounds every batch, so failures that arrive
// while it runs are kept, as a flush of the jobs an operator looked at must.
//
// With p.Archive each batch is selected whole and locked, handed to the
// archive (which makes it durable), and only then deleted, in one
// transaction. A crash before the commit leaves the batch in failed_jobs
// (and perhaps in the archive, whose writer keeps one copy of a batch a
// repeated run archives again).
func (s *Store) Prune(ctx context.Context, p triage.PruneParams) iter.Seq2[triage.PruneBatch, error] {
	return func(yield func(triage.PruneBatch, error) bool) {
		batch, stopAfter := p.BatchSize, p.StopAfterClean
		if batch <= 0 {
			batch = pruneBatch
		}
		if stopAfter <= 0 {
			stopAfter = defaultStopAfterClean
		}
		var total int64
		fail := func(err error) { yield(triage.PruneBatch{Total: total}, err) }
		var cond string
		var condArgs []any
		var upTo int64
		if p.All {
			var snapshot sql.NullInt64
			if err := s.db.QueryRowContext(ctx, "SELECT MAX(id) FROM "+s.failed).Scan(&snapshot); err != nil {
				fail(s.queryError(err))
				return
			}
			if !snapshot.Valid {
				return
			}
			cond, condArgs, upTo = "id <= ?", []any{snapshot.Int64}, snapshot.Int64
		} else {
			op := "<"
			if p.Inclusive {
				op = "<="
			}
			cond, condArgs = "failed_at "+op+" ?", []any{s.wall(p.Before)}
		}
		cursor := triage.FirstAfterID
		clean := 0
		for {
			if err := ctx.Err(); err != nil {
				fail(err)
				return
			}
			// The upper id of the next batch, by the primary key alone.
			var hi sql.NullInt64
			q := "SELECT MAX(id) FROM (SELECT id FROM " + s.failed + " WHERE id > ? ORDER BY id LIMIT ?) b"
			if err := s.db.QueryRowContext(ctx, s.db.Rebind(q), cursor, batch).Scan(&hi); err != nil {
				fail(s.queryError(err))
				return
			}
			if !hi.Valid {
				return
			}
			start := time.Now()
			n, err := s.pruneRange(ctx, p, cursor, hi.Int64, cond, condArgs)
			if err != nil {
				fail(err)
				return
			}
			total += n
			if !yield(triage.PruneBatch{Deleted: n, Total: total, Took: time.Since(start)}, nil) {
				return
			}
			switch {
			case p.All:
				if hi.Int64 >= upTo {
					return
				}
			case n == 0:
				clean++
				if clean >= stopAfter {
					return
				}
			default:
				clean = 0
			}
			cursor = hi.Int64
		}
	}
}

// pruneRange deletes the rows in (lo, hi] that cond selects (a dry run
// counts them; with p.Archive they are archived first) and returns how
// many it did.
func (s *Store) pruneRange(ctx context.Context, p triage.PruneParams, lo, hi int64, cond string, condArgs []any) (int64, error) {
	args := append([]any{lo, hi}, condArgs...)
	where := " WHERE id > ? AND id <= ? AND " + cond
	switch {
	case p.DryRun:
		var n int64
		if err := s.db.QueryRowContext(ctx, s.db.Rebind("SELECT COUNT(*) FROM "+s.failed+where), args...).Scan(&n); err != nil {
			return 0, s.queryError(err)
		}
		return n, nil
	case p.Archive != nil:
		for attempt := 1; ; attempt++ {
			n, err := s.archiveRange(ctx, where, args, p.Archive)
			if err == nil || !errors.Is(err, triage.ErrConflict) || attempt == archiveAttempts {
				return n, err
			}
		}
	}
	res, err := s.db.ExecContext(ctx, s.db.Rebind("DELETE FROM "+s.failed+where), args...)
	if err != nil {
		return 0, s.deniedError(err, s.schema.FailedTable, s.pruneGrants())
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// pruneGrants is what prune and flush need (deniedError); archiving locks
// the rows first, which takes UPDATE.
func (s *Store) pruneGrants() string {
	return "prune and flush need SELECT and DELETE on " + s.schema.FailedTable + " (and UPDATE when they archive)"
}
