// Package triage is the domain of jobtriage: failed Laravel queue jobs, the
// storage interface the SQL layer implements, and the use-cases (list, group,
// show, retry, forget, prune, monitor) that the CLI and the TUI share.
//
// Nothing here knows SQL, cobra or bubbletea.
package triage

import (
	"context"
	"errors"
	"strconv"
	"time"
)

// IDMode says how failed jobs are addressed, as Laravel's failed-job provider
// does: by payload uuid (driver database-uuids, the default since Laravel 8)
// or by integer row id (the legacy driver, or a table without a uuid column).
type IDMode int

const (
	// IDModeInteger addresses rows by failed_jobs.id.
	IDModeInteger IDMode = iota
	// IDModeUUID addresses rows by failed_jobs.uuid. Legacy rows whose uuid is
	// NULL are still addressed by their integer id.
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
// (ScanParams.Full false) Payload holds only the head of the payload (enough
// for the job class) and Exception only the top exception block's head; in a
// full scan both are complete.
type FailedRow struct {
	ID         int64
	UUID       string // "" when the column is absent or NULL
	Connection string
	Queue      string
	FailedAt   time.Time // wall-clock time in the app timezone
	Payload    []byte
	Exception  string
}

// Filter selects failed jobs. Zero values mean "no restriction". Time bounds
// are inclusive and compared as Laravel writes failed_at: wall-clock text in
// the app timezone.
type Filter struct {
	Queues      []string
	Connections []string
	// Search matches a substring of the payload or the exception text.
	Search string
	// PayloadContains are substrings the raw payload must contain (all of
	// them); the service uses it to push class filters into SQL.
	PayloadContains []string
	Since, Until    time.Time
	// MinID and MaxID bound the integer id, inclusive; 0 is unbounded.
	MinID, MaxID int64
}

// ScanParams drives a keyset scan of failed_jobs, newest (highest id) first.
type ScanParams struct {
	Filter Filter
	// BeforeID continues a scan: only rows with id < BeforeID. 0 starts at the newest.
	BeforeID int64
	// AfterID continues an ascending scan: only rows with id > AfterID.
	AfterID int64
	// Full asks for whole payload and exception texts instead of heads.
	Full bool
	// BatchSize is the number of rows fetched per round trip; 0 picks a default.
	BatchSize int
	// Limit stops the scan after this many rows; 0 is unlimited.
	Limit int
	// Ascending scans oldest first (retry and prune move the oldest first).
	Ascending bool
}

// Store is the storage the use-cases need. sqlstore implements it for
// PostgreSQL, MySQL/MariaDB and SQLite.
type Store interface {
	Schema() Schema
	// ScanFailed streams matching rows to fn in keyset batches, so memory stays
	// constant in the table size. Returning an error from fn stops the scan
	// and returns that error.
	ScanFailed(ctx context.Context, p ScanParams, fn func(*FailedRow) error) error
	// GetFailed returns one complete row, or an error wrapping ErrNotFound.
	GetFailed(ctx context.Context, ref Ref) (*FailedRow, error)
	Close() error
}

// Errors the store and the service return; cmd maps them to exit codes.
var (
	ErrNotFound      = errors.New("not found")
	ErrMissingTable  = errors.New("missing table")
	ErrUnreachable   = errors.New("database unreachable")
	ErrInvalidCursor = errors.New("invalid cursor")
)
