package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/jobtriage/jobtriage/triage"
)

// SinceSlack is how far out of id order a failure may be and still be found
// by a --since filter. failed_jobs has no index on failed_at, so a filter
// on it alone reads the whole table. Ids grow with failure time (each row
// is inserted when its job fails), so the scan can start at the first id
// that failed SinceSlack before the bound; only a row written by a worker
// whose clock was off by more than that is missed.
const SinceSlack = 24 * time.Hour

// withSinceBound narrows a Since filter to the ids that can match, by a
// binary search over the primary key (a few dozen index lookups). A write
// passes its transaction: SQLite's pool has one connection, which the
// transaction holds, so a query on the pool would wait forever.
func (s *Store) withSinceBound(ctx context.Context, q querier, f triage.Filter) (triage.Filter, error) {
	if f.Since.IsZero() {
		return f, nil
	}
	target := s.wall(f.Since.Add(-SinceSlack))
	var lo, hi sql.NullInt64
	if err := q.QueryRowContext(ctx, "SELECT MIN(id), MAX(id) FROM "+s.failed).Scan(&lo, &hi); err != nil {
		return f, s.queryError(err)
	}
	if !lo.Valid {
		return f, nil
	}
	// Find the last id whose failed_at is before target; start after it.
	at := s.db.Rebind("SELECT id, " + s.failedAtColumn() + " FROM " + s.failed + " WHERE id >= ? ORDER BY id LIMIT 1")
	bound := int64(0)
	l, h := lo.Int64, hi.Int64
	for l <= h {
		mid := l + (h-l)/2
		var id int64
		var raw rawValue
		if err := q.QueryRowContext(ctx, at, mid).Scan(&id, &raw); err != nil {
			if err == sql.ErrNoRows {
				break
			}
			return f, s.queryError(err)
		}
		// A failed_at that cannot be read (a poison row) says nothing: it
		// is taken as inside the window, which only lowers the bound, so
		// the scan reads more rows and misses none.
		if t, err := s.wallClock(raw.v); raw.v != nil && err == nil && s.wall(t) < target {
			bound = id
			l = id + 1
		} else {
			h = mid - 1
		}
	}
	if bound > 0 && bound+1 > f.MinID {
		f.MinID = bound + 1
	}
	return f, nil
}
