// Package triagetest holds an in-memory triage.Store, for tests of the
// layers above (cmd, tui) that need a store but not a database, and the
// store's side of a retry or forget batch for store tests.
//
// The fake keeps the contract the conformance suite holds sqlstore to, and
// store_test.go checks it against sqlstore on SQLite row for row, so a test
// that passes on the fake does not pass only because the fake is kinder.
// Where SQL is dialect-bound the fake behaves as SQLite does: Search and
// PayloadContains fold ASCII case only, listing scans return the whole
// payload, and failed_at is compared as Laravel's wall-clock text. Its
// reads are memstore's, which the file store serves too.
package triagetest

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"sync"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/memstore"
)

// defaultBatch is the rows a write batch takes when no Limit is given.
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
	t      memstore.Table // the failed jobs
	nextID int64
	// jobs are the local moves batches committed, in order.
	jobs   []triage.Move
	closed bool
}

// New is an empty store addressing jobs by uuid (Laravel 8+) with a jobs
// table, failed_at in loc (UTC when nil).
func New(mode triage.IDMode, loc *time.Location) *Store {
	if loc == nil {
		loc = time.UTC
	}
	return &Store{t: memstore.Table{Loc: loc}, nextID: 1, schema: triage.Schema{Dialect: "fake", FailedTable: "failed_jobs", JobsTable: "jobs",
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
		at, err := time.ParseInLocation(triage.FailedAtLayout, r.FailedAt, s.t.Loc)
		if err != nil {
			panic(fmt.Sprintf("triagetest: failed_at %q: %v", r.FailedAt, err))
		}
		s.t.Rows = append(s.t.Rows, memstore.Row{ID: s.nextID, UUID: r.UUID, Connection: r.Connection, Queue: r.Queue,
			Payload: r.Payload, Exception: r.Exception, FailedAt: at, Wall: at.Format(triage.FailedAtLayout)})
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
	return len(s.t.Rows)
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

// ScanFailed implements triage.Store on a copy of the rows, so that fn may
// call the store.
func (s *Store) ScanFailed(ctx context.Context, p triage.ScanParams, fn func(*triage.FailedRow) error) error {
	s.mu.Lock()
	t, err := s.t, s.open(ctx)
	t.Rows = slices.Clone(t.Rows)
	s.mu.Unlock()
	if err != nil {
		return err
	}
	return t.ScanFailed(ctx, p, fn)
}

// locked is read on the rows, under the lock, of a store still open.
func locked[T any](ctx context.Context, s *Store, read func(*memstore.Table) (T, error)) (T, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.open(ctx); err != nil {
		var zero T
		return zero, err
	}
	return read(&s.t)
}

func (s *Store) GetFailed(ctx context.Context, ref triage.Ref) (*triage.FailedRow, error) {
	return locked(ctx, s, func(t *memstore.Table) (*triage.FailedRow, error) {
		if ref.UUID != "" && s.schema.IDMode != triage.IDModeUUID {
			return nil, fmt.Errorf("%w: failed job %s (table %s has no uuid column; use the integer id)", triage.ErrNotFound, ref.UUID, s.schema.FailedTable)
		}
		return t.GetFailed(ctx, ref)
	})
}

func (s *Store) ResolveRefs(ctx context.Context, refs []triage.Ref) (map[triage.Ref]int64, error) {
	return locked(ctx, s, func(t *memstore.Table) (map[triage.Ref]int64, error) { return t.ResolveRefs(ctx, refs) })
}

func (s *Store) Count(ctx context.Context, f triage.Filter) (int64, error) {
	return locked(ctx, s, func(t *memstore.Table) (int64, error) { return t.Count(ctx, f) })
}

// batch is the next batch of a bulk write: ascending ids after AfterID,
// among IDs when given, matching the filter, at most Limit.
func (s *Store) batch(p triage.BatchParams) []memstore.Row {
	limit := p.Limit
	if limit <= 0 {
		limit = defaultBatch
	}
	var out []memstore.Row
	m := s.t.Matcher(p.Filter)
	for _, r := range s.t.Rows {
		if r.ID <= p.AfterID && p.AfterID != 0 || len(p.IDs) > 0 && !slices.Contains(p.IDs, r.ID) || !m.Match(&r) {
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
	s.t.Rows = slices.DeleteFunc(s.t.Rows, func(r memstore.Row) bool { return slices.Contains(ids, r.ID) })
}

func (s *Store) raw(rows []memstore.Row, ids []int64) []triage.RawRow {
	var out []triage.RawRow
	for _, r := range rows {
		if !slices.Contains(ids, r.ID) {
			continue
		}
		rr := triage.RawRow{ID: r.ID, Connection: &r.Connection, Queue: &r.Queue, Payload: &r.Payload, Exception: &r.Exception, FailedAt: &r.Wall}
		if r.UUID != "" {
			rr.UUID = &r.UUID
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
		fr := r.Failed(false)
		if !p.NeedException {
			fr.Exception = ""
		}
		b.rows = append(b.rows, fr)
	}
	return b, nil
}

type batch struct {
	s     *Store
	p     triage.BatchParams
	taken []memstore.Row
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
	cut := p.Before.In(s.t.Loc).Format(triage.FailedAtLayout)
	var ids []int64
	for _, r := range s.t.Rows {
		if p.All || r.Wall < cut || p.Inclusive && r.Wall == cut {
			ids = append(ids, r.ID)
		}
	}
	if p.DryRun || len(ids) == 0 {
		return int64(len(ids)), nil
	}
	if p.Archive != nil {
		if err := p.Archive.Write(s.raw(s.t.Rows, ids)); err != nil {
			return 0, err
		}
	}
	s.deleteIDs(ids)
	return int64(len(ids)), nil
}

var _ triage.Store = (*Store)(nil)
