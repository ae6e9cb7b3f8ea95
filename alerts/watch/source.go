// Package watch is the alerting engine of `jobtriage monitor --watch`: the
// loop that reads new failures every interval, the per-key alert state
// (failure rates per app, queue, class and signature; queue size and age
// gauges), the digest of each tick, reminders and resolution, the one-
// notifier lock, reconnection after a lost database, an alert about its own
// blindness, and the state file that carries alerts across restarts.
//
// It never reads a clock or sleeps by itself (Now and Sleep are injected) and
// never touches SQL: a Source reads the database. Sending is asynchronous:
// every notifier has its own queue and goroutine, so a channel that never
// answers cannot delay a check nor another channel.
package watch

import (
	"context"
	"errors"
	"time"
)

// Failure is one failed job as the watcher counts it.
type Failure struct {
	// ID is the failed_jobs primary key: the watcher resumes after the
	// highest one it has seen.
	ID        int64
	At        time.Time
	Queue     string
	Class     string
	Signature string
	// Message is the exception's message, for alert bodies.
	Message string
}

// Gauge is one queue's size and oldest pending age at a tick.
type Gauge struct {
	// Queue is the queue's name as reported, "connection:queue" or "queue".
	Queue            string
	Size             int64
	OldestPendingAge time.Duration
}

// Lock is the held one-notifier lock.
type Lock interface {
	// Check reports whether the lock is still held.
	Check(ctx context.Context) error
	Release() error
}

// ErrLockHeld is what Source.Lock returns when another watcher holds the
// lock: not an error of this watcher, which stands by.
var ErrLockHeld = errors.New("another watcher holds the lock")

// Source is the database side of a watcher. Every method may fail because
// the database is gone; the watcher then retries with backoff.
type Source interface {
	// Lock takes the one-notifier lock, or returns ErrLockHeld.
	Lock(ctx context.Context) (Lock, error)
	// MaxID is the highest failure id now (0 when there is none).
	MaxID(ctx context.Context) (int64, error)
	// Window hands fn the failures at or after since with ids up to maxID,
	// in any order.
	Window(ctx context.Context, since time.Time, maxID int64, fn func(Failure)) error
	// After hands fn the failures with ids above afterID, ascending by id.
	// Rows handed out before an error count as seen.
	After(ctx context.Context, afterID int64, fn func(Failure)) error
	// Gauges reads every monitored queue's size and age.
	Gauges(ctx context.Context, now time.Time) ([]Gauge, error)
}
