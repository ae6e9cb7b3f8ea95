package triage

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// WriteBatch is the rows one retry or forget transaction moves: enough to
// amortise round trips, few enough to hold locks briefly.
const WriteBatch = 2000

// selection turns ids or a query into the walk of a bulk write's batches
// of at most size rows, and reports the ids that matched nothing.
func (s *Service) selection(ctx context.Context, q Query, refs []Ref, all bool, now time.Time, dry bool, size int) (walk, []string, error) {
	// The keyset starts below 0: rows with ids ≤ 0 are failed jobs too.
	seq := batchSeq{p: BatchParams{Limit: size, Now: now, DryRun: dry, AfterID: FirstAfterID}}
	if len(refs) == 0 {
		if !all && q.Empty() {
			return walk{}, nil, fmt.Errorf("%w: name job ids, a filter, or all", ErrInvalidInput)
		}
		seq.p.Filter = q.filter()
		return newWalk(seq), nil, nil
	}
	found, err := s.Store.ResolveRefs(ctx, refs)
	if err != nil {
		return walk{}, nil, err
	}
	var ids []int64
	var missing []string
	seen := map[int64]bool{}
	for _, r := range refs {
		if id, ok := found[r]; !ok {
			missing = append(missing, r.String())
		} else if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	seq.byIDs = true
	for i := 0; i < len(ids); i += size {
		seq.chunks = append(seq.chunks, ids[i:min(i+size, len(ids))])
	}
	return newWalk(seq), missing, nil
}

// FirstAfterID starts an ascending keyset walk at the lowest bigint.
const FirstAfterID = int64(math.MinInt64)

// batchSeq yields the params of a bulk write's batches: the id chunks in
// order, or ascending keyset batches over the filter until one comes back
// short. It is a value: a copy taken before next is the sequence from there.
type batchSeq struct {
	chunks [][]int64
	byIDs  bool
	i      int
	p      BatchParams
	done   bool
}

// next is the params of the next batch; false when there is none.
func (q *batchSeq) next() (BatchParams, bool) {
	if q.byIDs {
		if q.i >= len(q.chunks) {
			return BatchParams{}, false
		}
		c := q.chunks[q.i]
		return BatchParams{IDs: c, Limit: len(c), Now: q.p.Now, DryRun: q.p.DryRun}, true
	}
	return q.p, !q.done
}

// advance moves past the batch next gave, whose rows were taken.
func (q *batchSeq) advance(rows []*FailedRow) {
	if q.byIDs {
		q.i++
		return
	}
	if len(rows) < q.p.Limit {
		q.done = true
		return
	}
	q.p.AfterID = rows[len(rows)-1].ID
}

// sweepPasses bounds the passes of a walk.
const sweepPasses = 3

// walk is a bulk write's batch sequence (a value, as batchSeq is), walked
// again (up to sweepPasses in all) when a batch of a pass was rolled back:
// with SKIP LOCKED a batch passes over rows another transaction holds, and
// if that one is rolled back, only another pass comes back for them.
type walk struct {
	first, seq batchSeq
	round      int
	// conflicts counts the batches rolled back and run again, shared by
	// the walk's copies; mark is the count when the pass began.
	conflicts *int
	mark      int
}

func newWalk(seq batchSeq) walk { return walk{first: seq, seq: seq, conflicts: new(int)} }

// next is the params of the next batch, in this pass or a new one.
func (w *walk) next() (BatchParams, bool) {
	for {
		if bp, ok := w.seq.next(); ok {
			return bp, true
		}
		if *w.conflicts == w.mark || w.round == sweepPasses-1 {
			return BatchParams{}, false
		}
		w.round++
		w.mark, w.seq = *w.conflicts, w.first
	}
}

// conflictAttempts bounds how often one batch runs again when the database
// chose it as a deadlock victim (InnoDB does among concurrent writers that
// share no row): it was rolled back whole, so running it again is safe.
const conflictAttempts = 8

// again reports whether a batch that failed with err runs again, after
// its attempt-th conflict (counted in w), waiting a little first.
func (w *walk) again(ctx context.Context, err error, attempt *int) (bool, error) {
	if !errors.Is(err, ErrConflict) {
		return false, err
	}
	*w.conflicts++
	if *attempt++; *attempt == conflictAttempts {
		return false, err
	}
	i := *attempt
	select {
	case <-ctx.Done():
		return false, ctx.Err()
	case <-time.After(time.Duration(10*i*i) * time.Millisecond):
		return true, nil
	}
}
