package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"iter"
	"time"

	"github.com/jobtriage/jobtriage/triage"
)

// pruneBatch is the ids one batch of a prune or flush covers, when
// PruneParams.BatchSize does not say.
const pruneBatch = 1000

// archiveAttempts bounds how often one archived batch runs again after
// the database rolled it back as a deadlock victim.
const archiveAttempts = 8

// Prune implements triage.Store: it walks failed_jobs in primary-key
// batches from the first id (rows with negative ids are pruned too) to the
// highest id there when it starts, read first.
//
// failed_jobs has no index on failed_at, so Laravel's prune scans the whole
// table for every chunk. This walks the primary key instead: each
// batch is a range delete over at most p.BatchSize ids with the failed_at
// condition inside it. The walk covers the whole table, as Laravel's
// selection does: failed_at does not follow the id order (a worker's clock
// behind or stepped, rows restored under new ids), so no run of batches
// without an old row says the rest has none.
//
// The highest id bounds the walk so that it ends however fast failures
// arrive while it runs: with p.All they are kept, as a flush of "every
// failed job" an operator looked at must; by age they are new (an old row
// restored meanwhile waits for the next run).
//
// With p.Archive each batch is selected whole and locked, handed to the
// archive (which makes it durable), and only then deleted, in one
// transaction. A crash before the commit leaves the batch in failed_jobs
// (and perhaps in the archive, whose writer keeps one copy of a batch a
// repeated run archives again).
func (s *Store) Prune(ctx context.Context, p triage.PruneParams) iter.Seq2[triage.PruneBatch, error] {
	return func(yield func(triage.PruneBatch, error) bool) {
		batch := p.BatchSize
		if batch <= 0 {
			batch = pruneBatch
		}
		var total int64
		fail := func(err error) { yield(triage.PruneBatch{Total: total}, err) }
		var upTo sql.NullInt64
		if err := s.db.QueryRowContext(ctx, "SELECT MAX(id) FROM "+s.failed).Scan(&upTo); err != nil {
			fail(s.queryError(err))
			return
		}
		if !upTo.Valid {
			return
		}
		var cond string // every row in the walk, with p.All
		var condArgs []any
		if !p.All {
			op := "<"
			if p.Inclusive {
				op = "<="
			}
			cond, condArgs = "failed_at "+op+" ?", []any{s.wall(p.Before)}
		}
		// Only where a row can be kept without an error is a range read
		// again after its delete, to name what stayed (pruneRange).
		var silent bool
		if s.d.silentHolds != "" && !p.DryRun && p.Archive == nil {
			if err := s.db.QueryRowContext(ctx, s.db.Rebind(s.d.silentHolds), s.d.catalogArgs(s.failedName)...).Scan(&silent); err != nil {
				fail(s.queryError(err))
				return
			}
		}
		cursor := triage.FirstAfterID
		for {
			if err := ctx.Err(); err != nil {
				fail(err)
				return
			}
			// The upper id of the next batch, by the primary key alone.
			var hi sql.NullInt64
			q := "SELECT MAX(id) FROM (SELECT id FROM " + s.failed + " WHERE id > ? AND id <= ? ORDER BY id LIMIT ?) b"
			if err := s.db.QueryRowContext(ctx, s.db.Rebind(q), cursor, upTo.Int64, batch).Scan(&hi); err != nil {
				fail(s.queryError(err))
				return
			}
			if !hi.Valid {
				return
			}
			start := time.Now()
			n, kept, err := s.pruneRange(ctx, p, cursor, hi.Int64, cond, condArgs, silent)
			if err != nil {
				fail(err)
				return
			}
			total += n
			if !yield(triage.PruneBatch{Deleted: n, Total: total, Took: time.Since(start), Kept: kept}, nil) {
				return
			}
			if hi.Int64 >= upTo.Int64 {
				return
			}
			cursor = hi.Int64
		}
	}
}

// pruneRange deletes the rows in (lo, hi] that cond selects (a dry run
// counts them; with p.Archive they are archived first) and returns how
// many it did, and the rows whose delete was refused, which stay: a range
// delete one row's trigger refuses is made again row by row (archiveRange).
// Where a row can be kept silently (a trigger or row security: silent),
// the range is read again after the delete: a row cond still selects in it
// was kept (an archived range is locked, and names it by its count).
func (s *Store) pruneRange(ctx context.Context, p triage.PruneParams, lo, hi int64, cond string, condArgs []any, silent bool) (int64, []triage.RejectedRow, error) {
	args := append([]any{lo, hi}, condArgs...)
	where := " WHERE id > ? AND id <= ?"
	if cond != "" {
		where += " AND " + cond
	}
	switch {
	case p.DryRun:
		var n int64
		if err := s.db.QueryRowContext(ctx, s.db.Rebind("SELECT COUNT(*) FROM "+s.failed+where), args...).Scan(&n); err != nil {
			return 0, nil, s.queryError(err)
		}
		return n, nil, nil
	case p.Archive != nil:
		for attempt := 1; ; attempt++ {
			n, kept, err := s.archiveRange(ctx, where, args, p.Archive)
			if err == nil || !errors.Is(err, triage.ErrConflict) || attempt == archiveAttempts {
				return n, kept, err
			}
		}
	}
	res, err := s.db.ExecContext(ctx, s.db.Rebind("DELETE FROM "+s.failed+where), args...)
	if rowData.match(err) {
		return s.archiveRange(ctx, where, args, nil)
	}
	if err != nil {
		return 0, nil, s.deniedError(err, s.schema.FailedTable, s.pruneGrants())
	}
	n, _ := res.RowsAffected()
	if !silent {
		return n, nil, nil
	}
	var ids []int64
	if err := s.db.SelectContext(ctx, &ids, s.db.Rebind("SELECT id FROM "+s.failed+where+" ORDER BY id"), args...); err != nil {
		return n, nil, s.queryError(err)
	}
	kept := make([]triage.RejectedRow, len(ids))
	for i, id := range ids {
		kept[i] = triage.RejectedRow{ID: id, Reason: errSilentHold.Error(), Delete: true}
	}
	return n, kept, nil
}

// pruneGrants is what prune and flush need (deniedError); archiving locks
// the rows first, which takes UPDATE.
func (s *Store) pruneGrants() string {
	return "prune and flush need SELECT and DELETE on " + s.schema.FailedTable + " (and UPDATE when they archive)"
}
