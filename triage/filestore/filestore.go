// Package filestore reads the failed jobs of Laravel's file failed-job
// driver (queue.failed.driver = file, Laravel 10.10.1+) as a triage.Store.
//
// The driver keeps one pretty-printed JSON array, newest first, capped at
// queue.failed.limit entries, each
//
//	{id (the payload uuid), connection, queue, payload, exception,
//	 failed_at ('Y-m-d H:i:s' wall clock in the app timezone), failed_at_timestamp}
//
// Laravel rewrites the whole file under a cache lock that only PHP can
// take, so jobtriage never writes it: the store is read once by Open and
// every write method fails with ErrReadOnly.
//
// Entries have no row id. The store gives each one an integer id from its
// position, newest highest (see Store), so keyset scans, cursors and
// integer refs work as they do on failed_jobs.
package filestore

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"slices"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/memstore"
)

const (
	// Dialect is what Schema reports as triage.Schema.Dialect.
	Dialect = "file"
	// MaxFileBytes is the largest file Open reads. Laravel caps the file at
	// queue.failed.limit entries (default 100), but neither the limit nor
	// an entry's size is bounded, and the whole file is held in memory.
	MaxFileBytes = 64 << 20
)

// ErrReadOnly is wrapped by every write method: the file belongs to
// Laravel, which rewrites it whole under a lock jobtriage cannot take.
var ErrReadOnly = errors.New("the file failed-job driver is read by jobtriage read-only; " +
	"run `php artisan queue:retry` / `queue:forget` / `queue:flush` instead")

// Store is a snapshot of the file taken by Open; it never rereads it. It
// is safe for concurrent use: nothing changes after Open.
//
// Ids: the entry at array index i of N gets id N − i, so the newest entry
// has the highest id N and the oldest has 1, and ids ascend with failure
// order as failed_jobs ids do. Laravel prepends new failures, so an id
// stays valid while failures are only added; it shifts when Laravel drops
// the oldest entries at the cap or forgets one. Ids are meant for one
// snapshot (a listing and its cursors); uuids are the lasting names.
type Store struct {
	path    string
	missing bool
	// Table holds the entries oldest first and serves the reads; a uuid
	// names its newest entry, as Laravel's find(). Search folds case as
	// PostgreSQL and MySQL do.
	memstore.Table
}

// Open reads the file at path. loc is the app timezone (config
// app.timezone) in which failed_at is wall-clock time; nil means UTC.
//
// A missing file is an empty store whose Missing reports true: Laravel
// creates the file at the first failure. An empty file, or one holding only
// whitespace or NUL bytes, is an empty store, as Laravel reads it. Anything
// else that is not a JSON array of entries is an error naming the file and
// the byte offset; so is a file larger than MaxFileBytes. A read that
// overlapped a rewrite by Laravel is taken again (see readAttempts).
func Open(path string, loc *time.Location) (*Store, error) {
	if loc == nil {
		loc = time.UTC
	}
	s := &Store{path: path, Table: memstore.Table{Loc: loc, UnicodeFold: true, Where: path}}
	entries, err := readFile(path, loc)
	if errors.Is(err, os.ErrNotExist) {
		s.missing = true
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	slices.Reverse(entries)
	for i := range entries {
		entries[i].ID = int64(i + 1)
	}
	s.Rows = entries
	return s, nil
}

// Missing: the file did not exist (no failure yet, or a wrong path).
func (s *Store) Missing() bool { return s.missing }

// Schema describes the file as a failed_jobs table addressed by uuid, with
// no jobs table (retry and monitor need one); FailedTable is the path.
func (s *Store) Schema() triage.Schema {
	return triage.Schema{Dialect: Dialect, FailedTable: s.path, IDMode: triage.IDModeUUID}
}

// Inspect implements triage.Inspector: the file and the jobs it held when read.
func (s *Store) Inspect(context.Context) (triage.StoreFacts, error) {
	return triage.StoreFacts{File: s.path, FileJobs: len(s.Rows), FileMissing: s.missing}, nil
}

// Close releases nothing: Open closed the file.
func (s *Store) Close() error { return nil }

// readOnly is the error of every write method.
func (s *Store) readOnly(op string) error {
	return fmt.Errorf("%s %s: %w", op, s.path, ErrReadOnly)
}

// TakeBatch refuses: see ErrReadOnly.
func (s *Store) TakeBatch(_ context.Context, p triage.BatchParams) (triage.Batch, error) {
	if p.Retry {
		return nil, s.readOnly("retry from")
	}
	return nil, s.readOnly("forget in")
}

// Prune refuses: see ErrReadOnly.
func (s *Store) Prune(_ context.Context, p triage.PruneParams) iter.Seq2[triage.PruneBatch, error] {
	op := "prune"
	if p.All {
		op = "flush"
	}
	return func(yield func(triage.PruneBatch, error) bool) { yield(triage.PruneBatch{}, s.readOnly(op)) }
}

var _ triage.Store = (*Store)(nil)
