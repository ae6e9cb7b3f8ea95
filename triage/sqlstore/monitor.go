package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"time"

	"github.com/gofrs/flock"

	"github.com/jobtriage/jobtriage/triage"
)

var _ triage.MonitorStore = (*Store)(nil)

// QueueStats counts the jobs table per queue in one statement, by
// DatabaseQueue's own conditions: pending is what pop would take now
// (reserved_at IS NULL AND available_at <= now), stuck what it would take
// back (reserved_at <= now − retry_after).
func (s *Store) QueueStats(ctx context.Context, p triage.QueueStatsParams) ([]triage.QueueStats, error) {
	if err := s.requireJobs(); err != nil {
		return nil, err
	}
	if p.RetryAfter < 0 {
		return nil, fmt.Errorf("%w: retry_after %s must not be negative", triage.ErrInvalidInput, p.RetryAfter)
	}
	now := p.Now.Unix()
	expired := p.Now.Add(-p.RetryAfter).Unix()
	q := `SELECT queue, COUNT(*),
		SUM(CASE WHEN reserved_at IS NULL AND available_at <= ? THEN 1 ELSE 0 END),
		SUM(CASE WHEN reserved_at IS NULL AND available_at > ? THEN 1 ELSE 0 END),
		SUM(CASE WHEN reserved_at IS NOT NULL THEN 1 ELSE 0 END),
		SUM(CASE WHEN reserved_at IS NOT NULL AND reserved_at <= ? THEN 1 ELSE 0 END),
		MIN(CASE WHEN reserved_at IS NULL AND available_at <= ? THEN available_at END)
		FROM ` + s.jobs
	args := []any{now, now, expired, now}
	if len(p.Queues) > 0 {
		q += " WHERE queue IN (" + marks(len(p.Queues)) + ")"
		args = append(args, anys(p.Queues)...)
	}
	q += " GROUP BY queue ORDER BY queue"
	var out []triage.QueueStats
	err := s.eachRow(ctx, s.db, s.db.Rebind(q), args, func(rows *sql.Rows) error {
		var (
			st     triage.QueueStats
			oldest sql.NullInt64
		)
		if err := rows.Scan(&st.Queue, &st.Size, &st.Pending, &st.Delayed, &st.Reserved, &st.Stuck, &oldest); err != nil {
			return fmt.Errorf("reading jobs counts: %w", err)
		}
		if oldest.Valid {
			st.OldestPendingAt = time.Unix(oldest.Int64, 0)
		}
		out = append(out, st)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ScanRecentFailed reads a time window without touching failed_at in SQL
// (no index): descending primary-key batches, filtered in Go, until a whole
// batch lies before the window. Its cost follows the rows in the window.
func (s *Store) ScanRecentFailed(ctx context.Context, p triage.RecentParams, fn func(*triage.FailedRow) error) error {
	batch := cmp.Or(max(p.BatchSize, 0), defaultBatch)
	var sel string
	var selArgs []any
	if p.Heads {
		sel, selArgs = s.selectList(false)
	} else {
		// The scanner expects payload and exception columns: empty ones.
		sel = s.keyColumns() + "failed_at, '' AS payload, '' AS exception"
	}
	q := s.db.Rebind("SELECT " + sel + " FROM " + s.failed + " WHERE id < ? ORDER BY id DESC LIMIT ?")
	cursor := maxID
	if p.MaxID > 0 && p.MaxID < maxID {
		cursor = p.MaxID + 1
	}
	for {
		inWindow := 0
		args := append(append([]any{}, selArgs...), cursor, batch)
		got, last, err := s.scanBatch(ctx, q, args, false, func(r *triage.FailedRow) error {
			if r.FailedAt.Before(p.Since) {
				return nil
			}
			inWindow++
			return fn(r)
		})
		if err != nil {
			return err
		}
		if got < batch || inWindow == 0 {
			return nil
		}
		cursor = last
	}
}

// MaxFailedID reads the primary key's maximum: one index probe.
func (s *Store) MaxFailedID(ctx context.Context) (int64, error) {
	var id sql.NullInt64
	if err := s.db.QueryRowContext(ctx, "SELECT MAX(id) FROM "+s.failed).Scan(&id); err != nil {
		return 0, s.queryError(err)
	}
	return id.Int64, nil
}

// TryWatchLock takes the one-watcher lock: a session-level advisory lock on
// PostgreSQL, GET_LOCK on MySQL/MariaDB (both held by a dedicated connection,
// released by the server if the process dies), and a file lock beside the
// database file on SQLite.
func (s *Store) TryWatchLock(ctx context.Context) (triage.WatchLock, error) {
	// Named after the database and the failed-jobs table, so watchers of two
	// apps sharing a server never exclude each other.
	name := "jobtriage:watch:" + s.ep.Database + ":" + s.schema.FailedTable
	h := fnv.New64a()
	h.Write([]byte(name))
	switch s.d.name {
	case "sqlite":
		return s.fileLock()
	case "postgres":
		return s.sessionLock(ctx, "SELECT pg_try_advisory_lock($1)", "SELECT pg_advisory_unlock($1)", int64(h.Sum64()))
	case "mysql":
		// GET_LOCK names are limited to 64 characters.
		if len(name) > 64 {
			name = fmt.Sprintf("jobtriage:watch:%016x", h.Sum64())
		}
		return s.sessionLock(ctx, "SELECT COALESCE(GET_LOCK(?, 0), 0) = 1", "SELECT RELEASE_LOCK(?)", name)
	}
	return nil, fmt.Errorf("no watch lock for dialect %s", s.d.name)
}

// sessionLock holds a server lock on its own connection: the lock lives as
// long as that session.
func (s *Store) sessionLock(ctx context.Context, acquire, release string, arg any) (triage.WatchLock, error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, s.queryError(err)
	}
	var ok bool
	if err := conn.QueryRowContext(ctx, acquire, arg).Scan(&ok); err != nil {
		conn.Close()
		return nil, s.queryError(err)
	}
	if !ok {
		conn.Close()
		return nil, triage.ErrLockHeld
	}
	return &sessionLock{conn: conn, release: release, arg: arg, s: s}, nil
}

type sessionLock struct {
	conn    *sql.Conn
	release string
	arg     any
	s       *Store
}

// Check pings the lock's own session: if it is gone, so is the lock.
func (l *sessionLock) Check(ctx context.Context) error {
	if err := l.conn.PingContext(ctx); err != nil {
		return fmt.Errorf("the watch lock's database session was lost: %w", l.s.queryError(err))
	}
	return nil
}

func (l *sessionLock) Release() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := l.conn.ExecContext(ctx, l.release, l.arg)
	cerr := l.conn.Close()
	if err != nil {
		return l.s.queryError(err)
	}
	return cerr
}

// watchLockSuffix names the SQLite watch lock file beside the database, so
// it is obviously jobtriage's.
const watchLockSuffix = ".jobtriage-watch.lock"

// fileLock locks "<database>.jobtriage-watch.lock" beside the SQLite file;
// Release removes it.
func (s *Store) fileLock() (triage.WatchLock, error) {
	fl := flock.New(s.ep.Path + watchLockSuffix)
	ok, err := fl.TryLock()
	if err != nil {
		return nil, fmt.Errorf("watch lock %s: %w", fl.Path(), err)
	}
	if !ok {
		return nil, triage.ErrLockHeld
	}
	// A watcher that opened the file just before its holder removed it
	// locks a file no longer at the path: that lock excludes no one.
	if !lockedAtPath(fl) {
		fl.Unlock()
		return nil, triage.ErrLockHeld
	}
	return fileLock{fl}, nil
}

// lockedAtPath reports whether the path still names the locked file.
func lockedAtPath(fl *flock.Flock) bool {
	held, err := fl.Stat()
	if err != nil {
		return false
	}
	cur, err := os.Stat(fl.Path())
	return err == nil && os.SameFile(held, cur)
}

type fileLock struct{ fl *flock.Flock }

func (l fileLock) Check(context.Context) error {
	if !l.fl.Locked() || !lockedAtPath(l.fl) {
		return errors.New("the watch lock file was unlocked or removed")
	}
	return nil
}

// Release removes the file while still holding it, then unlocks, so no
// lock file is left beside the database.
func (l fileLock) Release() error {
	if lockedAtPath(l.fl) {
		os.Remove(l.fl.Path())
	}
	return l.fl.Unlock()
}
