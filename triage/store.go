// Package triage is the domain of jobtriage: failed Laravel queue jobs, the
// storage interface the SQL layer implements, and the use-cases (list, group,
// show, retry, forget, prune, monitor) the CLI and the TUI share. Nothing
// here knows SQL, cobra or bubbletea.
package triage

import (
	"context"
	"errors"
	"iter"
	"strconv"
	"strings"
	"time"
)

// IDMode says how failed jobs are addressed, as Laravel's failed-job provider
// does: by payload uuid (driver database-uuids, the default since Laravel 8)
// or by integer row id (the legacy driver, or a table without a uuid column).
type IDMode int

const (
	IDModeInteger IDMode = iota // rows by failed_jobs.id
	// IDModeUUID addresses rows by failed_jobs.uuid, NULL-uuid ones by id.
	IDModeUUID
)

func (m IDMode) String() string {
	if m == IDModeUUID {
		return "uuid"
	}
	return "integer"
}

// Schema is what the store found when it checked the database on open.
type Schema struct {
	Dialect      string // "postgres", "mysql" or "sqlite"
	FailedTable  string
	JobsTable    string
	HasJobs      bool // the jobs table exists (needed by retry and monitor)
	HasBatches   bool // job_batches exists
	IDMode       IDMode
	UUIDNullable bool // an app upgraded from Laravel 7: rows may have uuid NULL
	// ConcurrentBatches: a second write batch may be open at once (not SQLite).
	ConcurrentBatches bool
}

// Ref names one failed job the way an operator typed it: a uuid, or an
// integer row id. Integer ids work in both id modes so that legacy rows with a
// NULL uuid stay reachable (never as "uuid IS NULL", which would match them all).
type Ref struct {
	UUID string
	ID   int64
}

func (r Ref) String() string {
	if r.UUID != "" {
		return r.UUID
	}
	return strconv.FormatInt(r.ID, 10)
}

// FailedRow is one failed_jobs row as the store streams it. In a listing scan
// (ScanParams.Full false) Payload holds at least the class windows of
// payload.ClassWindows (cut by SQL on PostgreSQL and MySQL; whole on SQLite
// and the file store, which payload.JobClass cuts the same way) and
// Exception only the top exception block's head.
type FailedRow struct {
	ID         int64
	UUID       string // "" when the column is absent or NULL
	Connection string
	Queue      string
	FailedAt   time.Time // wall-clock time in the app timezone
	Payload    []byte
	Exception  string
	// Problems are the columns the store could not read as Laravel writes
	// them (NULL, a failed_at that is no time): the row is still delivered
	// with what could be read, so one poison row never stops a listing or
	// a retry.
	Problems []RowProblem
}

// Heads: how much of the big columns a listing reads. Every path that
// derives a job's class or signature (SQL or Go) cuts at the same place, so
// a signature id is the same whichever command computed it. The payload is
// cut into key windows (payload.ClassWindowChars each), not a head: Redis's
// cjson reorders keys, and Horizon's put the class past any fixed head.
const (
	// PayloadHeadChars bounds a payload head (the jobs table's uuid lookups).
	PayloadHeadChars = 1024
	// ExceptionHeadChars: the top exception's class and message, not its trace.
	ExceptionHeadChars = 1024
	// NextSeparator joins chained exceptions in Throwable::__toString.
	NextSeparator = "\n\nNext "
)

// TopExceptionHead is the thrown (last) exception block after NextSeparator,
// at most ExceptionHeadChars, as the store's SQL cuts it.
func TopExceptionHead(exc string) string {
	if i := strings.LastIndex(exc, NextSeparator); i >= 0 {
		exc = exc[i+len(NextSeparator):]
	}
	n := 0
	for i := range exc {
		if n == ExceptionHeadChars {
			return exc[:i]
		}
		n++
	}
	return exc
}

// Filter selects failed jobs; zero values do not restrict. Time bounds are
// inclusive, against failed_at's wall-clock text.
type Filter struct {
	Queues      []string
	Connections []string
	// Search matches a substring of the payload or the exception text.
	Search string
	// PayloadContains are substrings the raw payload must all contain (the
	// service's class and tag filters, pushed into SQL).
	PayloadContains []string
	Since, Until    time.Time
	// MinID and MaxID bound the integer id, inclusive; 0 is unbounded.
	MinID, MaxID int64
}

// ScanParams drives a keyset scan of failed_jobs, newest (highest id) first.
type ScanParams struct {
	Filter Filter
	// BeforeID continues a scan: only rows with id < BeforeID (negative
	// ids too); 0 starts at the newest. AfterID: only rows with id > AfterID.
	BeforeID, AfterID int64
	Full              bool // whole payload and exception texts, not heads
	BatchSize         int  // rows per round trip; 0 picks a default
	Limit             int  // 0 is unlimited
	Ascending         bool // oldest first

}

// Store is the storage the use-cases need (sqlstore, filestore).
type Store interface {
	Schema() Schema
	// ScanFailed streams matching rows to fn in keyset batches, in constant
	// memory; an error from fn stops the scan and is returned.
	ScanFailed(ctx context.Context, p ScanParams, fn func(*FailedRow) error) error
	// GetFailed returns one complete row, or an error wrapping ErrNotFound.
	GetFailed(ctx context.Context, ref Ref) (*FailedRow, error)
	// ResolveRefs maps refs to row ids; refs that match nothing are absent.
	ResolveRefs(ctx context.Context, refs []Ref) (map[Ref]int64, error)
	// Count counts the rows a SQL filter matches.
	Count(ctx context.Context, f Filter) (int64, error)

	// TakeBatch takes the next batch of a bulk write (ascending id after
	// p.AfterID, or p.IDs) and returns it open: its rows locked, or deleted
	// in a transaction not yet committed, so nothing of it is gone until
	// Commit returns nil. Rows locked by someone else are skipped; a dry
	// run locks nothing.
	TakeBatch(ctx context.Context, p BatchParams) (Batch, error)
	// Prune deletes (dry: counts) the rows p selects in short batches,
	// yielding each; an error comes with the totals and ends it.
	Prune(ctx context.Context, p PruneParams) iter.Seq2[PruneBatch, error]

	Close() error
}

// BatchParams selects one batch of a bulk write: by ids or a SQL filter.
type BatchParams struct {
	Filter  Filter
	IDs     []int64
	AfterID int64
	Limit   int
	Now     time.Time
	DryRun  bool
	// NeedException asks for the exception heads (else Exception is empty).
	NeedException bool
	// Retry says the accepted rows go to a queue (Decision.Local, or
	// pushed by the service): a store may then take the batch by deleting
	// it at once and put back at Commit what the decision leaves
	// (MariaDB's DELETE … RETURNING), and Batch.Raw is not offered.
	Retry bool
}

// Batch is a batch TakeBatch took. Exactly one of Commit (after Decide) and
// Rollback ends it (Rollback after Commit is a no-op); Commit may run on
// another goroutine while the next batch is taken (Schema.ConcurrentBatches).
type Batch interface {
	// Rows are the batch's rows in ascending id: whole payloads, and
	// exception heads when BatchParams.NeedException asked for them.
	Rows() []*FailedRow
	// Raw reads these rows whole and as stored, for an archive.
	Raw(ctx context.Context, ids []int64) ([]RawRow, error)
	// Decide fixes what the batch does, before anything of it is pushed
	// elsewhere: the local moves go into this database's jobs table and the
	// Delete rows leave failed_jobs together at Commit; a store that took
	// the rows by deleting them puts the others back now, so the next batch
	// never waits for them. On an error the batch is rolled back whole.
	Decide(ctx context.Context, d Decision) error
	// Commit applies the decision (dry: nothing); an error rolls all back.
	Commit(ctx context.Context) error
	Rollback()
}

// Decision is what the service made of a taken batch.
type Decision struct {
	// Delete are the rows that leave failed_jobs (moved or forgotten), in
	// ascending id; moves elsewhere were pushed while the batch held them.
	Delete []int64
	// Local are the moves into this database's jobs table, by RowID.
	Local []Move
}

// Move says where a retried job goes: the queue and the payload bytes to
// insert (the original bytes, except keys that must change).
type Move struct {
	UUID       string // the payload uuid, for idempotent pushes to another backend
	Queue      string
	Payload    []byte
	Connection string // the queue connection the job goes back to
	// Local moves go into this database's jobs table in the batch's own
	// transaction (Decision.Local); the service pushes the others first.
	Local bool
	// RowID is the failed_jobs row the move comes from, so that a backend
	// that refuses one move can be told which row to leave behind.
	RowID int64
	// RedisChecked: Payload came from RetryPayload with forRedis, which
	// promises what a Redis backend would otherwise check (a JSON object,
	// an integer "attempts", an "id" neither null nor empty, each once).
	RedisChecked bool
}

// PushKey is what makes a push of a job the same push again: its uuid and
// its failed_jobs row. A run repeated after a crash between the push and
// the delete repeats both and must not push twice; a job that failed again
// comes back in a new row and must be pushed again. A move without a row
// (RowID 0) is keyed by its uuid alone.
func (m Move) PushKey() string {
	if m.RowID == 0 {
		return m.UUID
	}
	return m.UUID + "#" + strconv.FormatInt(m.RowID, 10)
}

// PruneParams deletes rows with failed_at before Before (Laravel's prune,
// <), or at or before it with Inclusive (Laravel's flush --hours, <=).
type PruneParams struct {
	Before    time.Time
	Inclusive bool
	BatchSize int
	DryRun    bool
	// Archive, when set, is handed each batch's rows whole and as stored,
	// locked, before they are deleted in the same transaction; its error
	// rolls the batch back and ends the run. A dry run archives nothing.
	Archive Archiver
	// All deletes every row present at the start (flush without --hours).
	All bool
}

// PruneBatch reports one batch of a prune or flush: the rows it deleted
// (dry: would delete), those deleted so far, how long it ran, and the rows
// whose delete failed_jobs refused (a trigger, row security), which stay.
type PruneBatch struct {
	Deleted, Total int64
	Took           time.Duration
	Kept           []RejectedRow
}

// PruneTotal reads a prune to its end: the rows deleted (before an error).
func PruneTotal(batches iter.Seq2[PruneBatch, error]) (int64, error) {
	b, err := Last(batches)
	return b.Total, err
}

// Last reads a run that reports as it goes to its end, and returns its last
// report (with the error that ended it, if one did).
func Last[T any](run iter.Seq2[T, error]) (T, error) {
	var last T
	for v, err := range run {
		if last = v; err != nil {
			return last, err
		}
	}
	return last, nil
}

// RawRow is a failed_jobs row exactly as the database holds it, for an
// archive: nil is NULL, text columns keep their bytes, and FailedAt is the
// database's own text for the value (what it parses back on insert).
type RawRow struct {
	ID int64
	// UUID is nil when the value is NULL or the table has no uuid column.
	UUID                                  *string
	Connection, Queue, Payload, Exception *string
	FailedAt                              *string
}

// RestoreParams re-inserts archived rows into failed_jobs.
type RestoreParams struct {
	Rows   []RawRow
	DryRun bool
}

// RestoreResult counts what RestoreRows did (or, dry, would do) with a batch.
type RestoreResult struct {
	// Restored rows were inserted; Renumbered of them under a new id
	// because their own was taken by another row.
	Restored, Renumbered int
	// Present rows were there already (same uuid, or same id and payload).
	Present int
}

// Restorer is a store that can put archived rows back (sqlstore).
type Restorer interface {
	// RestoreRows inserts the rows not present, in one transaction, with their
	// own id when it is free, else a new one.
	RestoreRows(ctx context.Context, p RestoreParams) (RestoreResult, error)
}

// Errors the store and the service return; cmd maps them to exit codes.
var (
	ErrNotFound      = errors.New("not found")
	ErrMissingTable  = errors.New("missing table")
	ErrUnreachable   = errors.New("database unreachable")
	ErrInvalidCursor = errors.New("invalid cursor")
	ErrInvalidInput  = errors.New("invalid input")
	// ErrConflict: the database rolled a transaction back (deadlock victim,
	// lock timeout); running it again is safe.
	ErrConflict = errors.New("transaction conflict")
	// ErrSchema: a table's shape jobtriage cannot work with (a missing column,
	// a uuid key, …), named with what was expected.
	ErrSchema = errors.New("unusable schema")
	// ErrLockHeld: another watcher holds the lock.
	ErrLockHeld = errors.New("lock held by another watcher")
)

// QueueStatsParams asks for the jobs table's counts per queue. Cut-offs are
// computed from Now and bound, so the database clock never matters.
type QueueStatsParams struct {
	// Queues restricts the stats to these queue names; empty means every
	// queue that has rows. Asked-for queues without rows are absent.
	Queues []string
	Now    time.Time
	// RetryAfter is the queue connection's retry_after: a job reserved at
	// or before Now − RetryAfter is stuck (Laravel pops it again).
	RetryAfter time.Duration
}

// QueueStats are one queue's rows in the jobs table, with Laravel's
// meanings: Size counts every row (queue:monitor's measure), Pending rows are
// ready now, Delayed rows become available later, Reserved rows are held by
// a worker, and Stuck is the part of Reserved whose reservation expired.
type QueueStats struct {
	Connection                              string // "" when no profile names it
	Queue                                   string
	Size, Pending, Delayed, Reserved, Stuck int64
	// OldestPendingAt is the smallest available_at among pending rows (as
	// Laravel 12.19's monitor reports it); zero when nothing is pending.
	OldestPendingAt time.Time
	// OldestPendingUnknown says why OldestPendingAt is zero although jobs
	// are pending (a Redis payload records no time before Laravel 12.11).
	OldestPendingUnknown string
}

// RecentParams asks for the failures of a time window, newest first.
type RecentParams struct {
	Since time.Time // inclusive
	// MaxID, when positive, ignores higher ids (a watcher's high-water mark).
	MaxID int64
	// Heads adds the payload and exception heads (job class, signature);
	// without it only id, uuid, connection, queue and failed_at are read.
	Heads     bool
	BatchSize int
}

// MonitorStore is what monitor and watch need beyond Store. failed_at has no
// index: windows are read by id, newest down.
type MonitorStore interface {
	// QueueStats counts the jobs table per queue, ordered by queue name.
	QueueStats(ctx context.Context, p QueueStatsParams) ([]QueueStats, error)
	// ScanRecentFailed streams the rows with failed_at ≥ p.Since, newest
	// first, in descending keyset batches; it stops after the first batch
	// in which no row is inside the window (ids grow with failure time; a
	// whole batch of slack absorbs clock skew between workers).
	ScanRecentFailed(ctx context.Context, p RecentParams, fn func(*FailedRow) error) error
	// MaxFailedID is the highest failed_jobs id, 0 when the table is empty.
	MaxFailedID(ctx context.Context) (int64, error)
	// TryWatchLock takes the one-watcher-per-database lock, or ErrLockHeld.
	TryWatchLock(ctx context.Context) (WatchLock, error)
}

// WatchLock is a held watcher lock.
type WatchLock interface {
	// Check reports whether the lock is still held (a lost session loses it).
	Check(ctx context.Context) error
	Release() error
}

// Archiver makes rows durable before a delete removes them: forget, prune
// and flush with --archive hand it each batch's rows, whole and as stored,
// while the batch's rows are still locked; an error rolls the batch back.
// Write must return only once the rows are durable. archive.Writer is one.
type Archiver interface {
	Write(rows []RawRow) error
}

// ArchiveReader reads an archive back for a restore: Next returns the next
// row, or io.EOF after the last. archive.Reader is one.
type ArchiveReader interface {
	Next() (RawRow, error)
}
