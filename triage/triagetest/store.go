// Package triagetest holds an in-memory triage.Store, for tests of the
// layers above (cmd, tui) that need a store but not a database, and the
// store's side of a retry or forget batch for store tests.
//
// The fake keeps the contract the conformance suite holds sqlstore to, and
// store_test.go checks it against sqlstore on SQLite row for row, so a test
// that passes on the fake does not pass only because the fake is kinder.
// Where SQL is dialect-bound the fake behaves as SQLite does: Search and
// PayloadContains fold ASCII case only, listing scans return the whole
// payload, and failed_at is compared as Laravel's wall-clock text.
package triagetest

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jobtriage/jobtriage/triage"
)

// defaultBatch is the batch a scan or a prune uses when none is given.
const defaultBatch = 1000

// Row is a failed job to add; FailedAt is Laravel's "Y-m-d H:i:s" wall clock.
type Row struct {
	UUID       string
	Connection string
	Queue      string
	Payload    string
	Exception  string
	FailedAt   string
}

// Store is an in-memory triage.Store. It is safe for concurrent use.
type Store struct {
	mu     sync.Mutex
	schema triage.Schema
	loc    *time.Location
	rows   []row // ascending id
	nextID int64
	// jobs are the local moves batches committed, in order.
	jobs   []triage.Move
	closed bool
}

type row struct {
	id       int64
	r        Row
	failedAt time.Time
}

// New is an empty store addressing jobs by uuid (Laravel 8+) with a jobs
// table, failed_at in loc (UTC when nil).
func New(mode triage.IDMode, loc *time.Location) *Store {
	if loc == nil {
		loc = time.UTC
	}
	return &Store{loc: loc, nextID: 1, schema: triage.Schema{Dialect: "fake", FailedTable: "failed_jobs", JobsTable: "jobs",
		HasJobs: true, IDMode: mode}}
}

// Add inserts rows as Laravel's failer does and returns their ids.
func (s *Store) Add(rows ...Row) []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]int64, 0, len(rows))
	for _, r := range rows {
		if s.schema.IDMode == triage.IDModeInteger {
			r.UUID = ""
		}
		at, err := time.ParseInLocation(triage.FailedAtLayout, r.FailedAt, s.loc)
		if err != nil {
			panic(fmt.Sprintf("triagetest: failed_at %q: %v", r.FailedAt, err))
		}
		s.rows = append(s.rows, row{id: s.nextID, r: r, failedAt: at})
		ids = append(ids, s.nextID)
		s.nextID++
	}
	return ids
}

// Jobs are the moves retried into the (local) jobs table so far.
func (s *Store) Jobs() []triage.Move {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.jobs)
}

// Len is the number of failed jobs.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.rows)
}

func (s *Store) Schema() triage.Schema { return s.schema }

// Close implements triage.Store; a closed store refuses every call.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

func (s *Store) open(ctx context.Context) error {
	if s.closed {
		return fmt.Errorf("%w: triagetest store closed", triage.ErrUnreachable)
	}
	return ctx.Err()
}

// foldContains is SQLite's LIKE '%sub%': ASCII letters match either case.
func foldContains(s, sub string) bool {
	return strings.Contains(asciiLower(s), asciiLower(sub))
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func (s *Store) matches(r row, f triage.Filter) bool {
	if len(f.Queues) > 0 && !slices.Contains(f.Queues, r.r.Queue) {
		return false
	}
	if len(f.Connections) > 0 && !slices.Contains(f.Connections, r.r.Connection) {
		return false
	}
	if f.Search != "" && !foldContains(r.r.Payload, f.Search) && !foldContains(r.r.Exception, f.Search) {
		return false
	}
	for _, p := range f.PayloadContains {
		if !foldContains(r.r.Payload, p) {
			return false
		}
	}
	// failed_at is compared as wall-clock text, to the second.
	wall := r.failedAt.Format(triage.FailedAtLayout)
	if !f.Since.IsZero() && wall < f.Since.In(s.loc).Format(triage.FailedAtLayout) {
		return false
	}
	if !f.Until.IsZero() && wall > f.Until.In(s.loc).Format(triage.FailedAtLayout) {
		return false
	}
	if f.MinID != 0 && r.id < f.MinID {
		return false
	}
	if f.MaxID != 0 && r.id > f.MaxID {
		return false
	}
	return true
}

func (s *Store) failedRow(r row, full bool) *triage.FailedRow {
	exc := r.r.Exception
	if !full {
		exc = triage.TopExceptionHead(exc)
	}
	return &triage.FailedRow{ID: r.id, UUID: r.r.UUID, Connection: r.r.Connection, Queue: r.r.Queue,
		FailedAt: r.failedAt, Payload: []byte(r.r.Payload), Exception: exc}
}

// ScanFailed implements triage.Store: newest first (or oldest with
// Ascending), after BeforeID / AfterID, at most Limit rows.
func (s *Store) ScanFailed(ctx context.Context, p triage.ScanParams, fn func(*triage.FailedRow) error) error {
	s.mu.Lock()
	if err := s.open(ctx); err != nil {
		s.mu.Unlock()
		return err
	}
	var out []*triage.FailedRow
	for _, r := range s.rows {
		if p.BeforeID != 0 && r.id >= p.BeforeID || p.AfterID != 0 && r.id <= p.AfterID || !s.matches(r, p.Filter) {
			continue
		}
		out = append(out, s.failedRow(r, p.Full))
	}
	s.mu.Unlock()
	if !p.Ascending {
		slices.Reverse(out)
	}
	if p.Limit > 0 && len(out) > p.Limit {
		out = out[:p.Limit]
	}
	for _, r := range out {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

// find is the row ref names: by uuid in uuid mode, else by a positive id.
func (s *Store) find(ref triage.Ref) (row, bool) {
	for _, r := range s.rows {
		if ref.UUID != "" && s.schema.IDMode == triage.IDModeUUID && r.r.UUID == ref.UUID || ref.UUID == "" && ref.ID > 0 && r.id == ref.ID {
			return r, true
		}
	}
	return row{}, false
}

func (s *Store) GetFailed(ctx context.Context, ref triage.Ref) (*triage.FailedRow, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.open(ctx); err != nil {
		return nil, err
	}
	switch r, ok := s.find(ref); {
	case ref.UUID != "" && s.schema.IDMode != triage.IDModeUUID:
		return nil, fmt.Errorf("%w: failed job %s (table %s has no uuid column; use the integer id)", triage.ErrNotFound, ref.UUID, s.schema.FailedTable)
	case ref.UUID == "" && ref.ID <= 0:
		return nil, fmt.Errorf("%w: empty failed job id", triage.ErrNotFound)
	case ok:
		return s.failedRow(r, true), nil
	}
	return nil, fmt.Errorf("%w: no failed job with id %s", triage.ErrNotFound, ref)
}

func (s *Store) ResolveRefs(ctx context.Context, refs []triage.Ref) (map[triage.Ref]int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.open(ctx); err != nil {
		return nil, err
	}
	out := map[triage.Ref]int64{}
	for _, ref := range refs {
		if r, ok := s.find(ref); ok {
			out[ref] = r.id
		}
	}
	return out, nil
}

func (s *Store) Count(ctx context.Context, f triage.Filter) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.open(ctx); err != nil {
		return 0, err
	}
	var n int64
	for _, r := range s.rows {
		if s.matches(r, f) {
			n++
		}
	}
	return n, nil
}

// batch is the next batch of a bulk write: ascending ids after AfterID,
// among IDs when given, matching the filter, at most Limit.
func (s *Store) batch(p triage.BatchParams) []row {
	limit := p.Limit
	if limit <= 0 {
		limit = defaultBatch
	}
	var out []row
	for _, r := range s.rows {
		if r.id <= p.AfterID && p.AfterID != 0 || len(p.IDs) > 0 && !slices.Contains(p.IDs, r.id) || !s.matches(r, p.Filter) {
			continue
		}
		out = append(out, r)
		if len(out) == limit {
			break
		}
	}
	return out
}

func (s *Store) deleteIDs(ids []int64) {
	s.rows = slices.DeleteFunc(s.rows, func(r row) bool { return slices.Contains(ids, r.id) })
}

func (s *Store) raw(rows []row, ids []int64) []triage.RawRow {
	var out []triage.RawRow
	for _, r := range rows {
		if !slices.Contains(ids, r.id) {
			continue
		}
		c, q, p, e, at := r.r.Connection, r.r.Queue, r.r.Payload, r.r.Exception, r.failedAt.Format(triage.FailedAtLayout)
		rr := triage.RawRow{ID: r.id, Connection: &c, Queue: &q, Payload: &p, Exception: &e, FailedAt: &at}
		if r.r.UUID != "" {
			u := r.r.UUID
			rr.UUID = &u
		}
		out = append(out, rr)
	}
	return out
}

// TakeBatch implements triage.Store without locks: a batch taken while one is
// open sees the same rows.
func (s *Store) TakeBatch(ctx context.Context, p triage.BatchParams) (triage.Batch, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.open(ctx); err != nil {
		return nil, err
	}
	b := &batch{s: s, p: p, taken: s.batch(p)}
	for _, r := range b.taken {
		fr := s.failedRow(r, true)
		fr.Exception = ""
		if p.NeedException {
			fr.Exception = triage.TopExceptionHead(r.r.Exception)
		}
		b.rows = append(b.rows, fr)
	}
	return b, nil
}

type batch struct {
	s     *Store
	p     triage.BatchParams
	taken []row
	rows  []*triage.FailedRow
	d     triage.Decision
}

func (b *batch) Decide(_ context.Context, d triage.Decision) error {
	b.d = d
	return nil
}

func (b *batch) Rows() []*triage.FailedRow { return b.rows }

// QueuedUUIDs implements triage.QueuedReader: the uuids in Jobs.
func (b *batch) QueuedUUIDs(context.Context, []triage.Move) (map[string]bool, error) {
	out := map[string]bool{}
	for _, j := range b.s.Jobs() {
		out[j.UUID] = j.UUID != ""
	}
	return out, nil
}

func (b *batch) Raw(_ context.Context, ids []int64) ([]triage.RawRow, error) {
	return b.s.raw(b.taken, ids), nil
}

// Commit deletes the rows and records the local moves in Jobs, all at once.
func (b *batch) Commit(ctx context.Context) error {
	s := b.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.open(ctx); err != nil {
		return err
	}
	if b.p.DryRun {
		return nil
	}
	s.deleteIDs(b.d.Delete)
	s.jobs = append(s.jobs, b.d.Local...)
	return nil
}

func (b *batch) Rollback() {}

// Prune implements triage.Store: it deletes (or, dry, counts) every row p
// selects, in one batch.
func (s *Store) Prune(ctx context.Context, p triage.PruneParams) iter.Seq2[triage.PruneBatch, error] {
	return func(yield func(triage.PruneBatch, error) bool) {
		n, err := s.prune(ctx, p)
		if err != nil || n > 0 {
			yield(triage.PruneBatch{Deleted: n, Total: n}, err)
		}
	}
}

func (s *Store) prune(ctx context.Context, p triage.PruneParams) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.open(ctx); err != nil {
		return 0, err
	}
	cut := p.Before.In(s.loc).Format(triage.FailedAtLayout)
	var ids []int64
	for _, r := range s.rows {
		wall := r.failedAt.Format(triage.FailedAtLayout)
		if p.All || wall < cut || p.Inclusive && wall == cut {
			ids = append(ids, r.id)
		}
	}
	if p.DryRun || len(ids) == 0 {
		return int64(len(ids)), nil
	}
	if p.Archive != nil {
		if err := p.Archive.Write(s.raw(s.rows, ids)); err != nil {
			return 0, err
		}
	}
	s.deleteIDs(ids)
	return int64(len(ids)), nil
}

var _ triage.Store = (*Store)(nil)
