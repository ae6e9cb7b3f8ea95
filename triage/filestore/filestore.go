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
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jobtriage/jobtriage/triage"
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
	loc     *time.Location
	missing bool
	entries []entry // file order: newest first
	// byUUID: the first (newest) entry of each id, as Laravel's find().
	byUUID map[string]int
}

// entry is one array element, kept with whatever fields it has.
type entry struct {
	uuid, connection, queue string
	payload, exception      string
	failedAt                time.Time // zero when neither time field is readable
	// wall is failed_at as Y-m-d H:i:s in the app timezone, compared as text
	// by Since and Until the way SQL compares the failed_at column; "" when
	// unknown, which no time bound matches (as SQL NULL matches none).
	wall string
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
	s := &Store{path: path, loc: loc, byUUID: map[string]int{}}
	entries, err := readFile(path, loc)
	if errors.Is(err, os.ErrNotExist) {
		s.missing = true
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	s.entries = entries
	for i := len(entries) - 1; i >= 0; i-- {
		if u := entries[i].uuid; u != "" {
			s.byUUID[u] = i
		}
	}
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
	return triage.StoreFacts{File: s.path, FileJobs: len(s.entries), FileMissing: s.missing}, nil
}

// Close releases nothing: Open closed the file.
func (s *Store) Close() error { return nil }

// idAt is the synthesized id of the entry at index i (see Store).
func (s *Store) idAt(i int) int64 { return int64(len(s.entries) - i) }

// indexOf is the index of the entry with id, or -1.
func (s *Store) indexOf(id int64) int {
	if id < 1 || id > int64(len(s.entries)) {
		return -1
	}
	return len(s.entries) - int(id)
}

// ctxCheckEvery is how many entries a scan reads between looks at ctx.
const ctxCheckEvery = 256

// ScanFailed calls fn for each matching entry, newest (highest id) first,
// or oldest first with p.Ascending, honouring BeforeID, AfterID and Limit
// as the SQL store does. BatchSize is ignored: the snapshot is in memory.
// Without p.Full the rows carry heads cut as the SQL store cuts them. Each
// row is fn's own: changing it does not change the store.
func (s *Store) ScanFailed(ctx context.Context, p triage.ScanParams, fn func(*triage.FailedRow) error) error {
	m := s.matcher(p.Filter)
	// Visit ids hi down to lo, or lo up to hi when ascending, as the SQL
	// store's keyset: descending honours BeforeID, ascending AfterID.
	lo, hi := int64(1), int64(len(s.entries))
	if !p.Ascending && p.BeforeID > 0 && p.BeforeID-1 < hi {
		hi = p.BeforeID - 1
	}
	if p.Ascending && p.AfterID > 0 {
		if p.AfterID >= hi {
			return nil
		}
		lo = p.AfterID + 1
	}
	id, step, end := hi, int64(-1), lo-1
	if p.Ascending {
		id, step, end = lo, 1, hi+1
	}
	seen := 0
	for k := 0; id != end; id, k = id+step, k+1 {
		if k%ctxCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		i := s.indexOf(id)
		if !m.match(&s.entries[i], id) {
			continue
		}
		if err := fn(s.row(i, p.Full)); err != nil {
			return err
		}
		if seen++; p.Limit > 0 && seen >= p.Limit {
			return nil
		}
	}
	return nil
}

// row builds a fresh FailedRow for the entry at index i.
func (s *Store) row(i int, full bool) *triage.FailedRow {
	e := &s.entries[i]
	r := &triage.FailedRow{
		ID:         s.idAt(i),
		UUID:       e.uuid,
		Connection: e.connection,
		Queue:      e.queue,
		FailedAt:   e.failedAt,
	}
	// A listing gets the whole payload, as SQLite's does: the job class is
	// cut from it by payload.JobClass the same way for listings and whole
	// rows, wherever its keys sit (cjson reorders them).
	r.Payload = []byte(e.payload)
	if full {
		r.Exception = e.exception
	} else {
		r.Exception = triage.TopExceptionHead(e.exception)
	}
	return r
}

// GetFailed returns a whole entry by uuid (the newest) or synthesized id.
func (s *Store) GetFailed(ctx context.Context, ref triage.Ref) (*triage.FailedRow, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if ref.UUID == "" && ref.ID <= 0 {
		return nil, fmt.Errorf("%w: empty failed job id", triage.ErrNotFound)
	}
	i := s.find(ref)
	if i < 0 {
		return nil, fmt.Errorf("%w: no failed job with id %s in %s", triage.ErrNotFound, ref, s.path)
	}
	return s.row(i, true), nil
}

// find is the index of the entry ref names (by uuid, the newest), or -1.
func (s *Store) find(ref triage.Ref) int {
	if ref.UUID == "" {
		return s.indexOf(ref.ID)
	}
	if i, ok := s.byUUID[ref.UUID]; ok {
		return i
	}
	return -1
}

// ResolveRefs maps uuids and synthesized ids to ids, leaving out misses.
func (s *Store) ResolveRefs(ctx context.Context, refs []triage.Ref) (map[triage.Ref]int64, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := map[triage.Ref]int64{}
	for _, r := range refs {
		if i := s.find(r); i >= 0 {
			out[r] = s.idAt(i)
		}
	}
	return out, nil
}

func (s *Store) Count(ctx context.Context, f triage.Filter) (int64, error) {
	m := s.matcher(f)
	var n int64
	for i := range s.entries {
		if i%ctxCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
		}
		if m.match(&s.entries[i], s.idAt(i)) {
			n++
		}
	}
	return n, nil
}

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

// matcher is a Filter prepared for one pass, as the SQL store's WHERE.
type matcher struct {
	f            triage.Filter
	search       needle
	contains     []needle
	since, until string // wall-clock bounds, "" when unset
}

func (s *Store) matcher(f triage.Filter) *matcher {
	m := &matcher{f: f, search: newNeedle(f.Search)}
	for _, p := range f.PayloadContains {
		m.contains = append(m.contains, newNeedle(p))
	}
	if !f.Since.IsZero() {
		m.since = f.Since.In(s.loc).Format(triage.FailedAtLayout)
	}
	if !f.Until.IsZero() {
		m.until = f.Until.In(s.loc).Format(triage.FailedAtLayout)
	}
	return m
}

func (m *matcher) match(e *entry, id int64) bool {
	switch {
	case m.f.MinID != 0 && id < m.f.MinID, m.f.MaxID != 0 && id > m.f.MaxID:
		return false
	case len(m.f.Queues) > 0 && !slices.Contains(m.f.Queues, e.queue),
		len(m.f.Connections) > 0 && !slices.Contains(m.f.Connections, e.connection):
		return false
	case m.since != "" && (e.wall == "" || e.wall < m.since), m.until != "" && (e.wall == "" || e.wall > m.until):
		return false
	}
	for _, c := range m.contains {
		if !c.in(e.payload) {
			return false
		}
	}
	return m.search.in(e.payload) || m.search.in(e.exception)
}

// needle is a case-insensitive substring, matched as the SQL store's LIKE
// matches it on every dialect: ASCII letters regardless of case, and
// other letters by Unicode lower-casing (PostgreSQL ILIKE, MySQL's _ci
// collations). Wildcards are literal.
type needle struct {
	lower string // "" matches everything
	ascii bool
}

func newNeedle(s string) needle {
	nonASCII := strings.ContainsFunc(s, func(r rune) bool { return r >= utf8.RuneSelf })
	return needle{lower: strings.ToLower(s), ascii: !nonASCII}
}

func (n needle) in(hay string) bool {
	switch {
	case n.lower == "":
		return true
	case n.ascii:
		hay = strings.Map(asciiLower, hay)
	default:
		hay = strings.ToLower(hay)
	}
	return strings.Contains(hay, n.lower)
}

func asciiLower(r rune) rune {
	if 'A' <= r && r <= 'Z' {
		return r + 'a' - 'A'
	}
	return r
}
