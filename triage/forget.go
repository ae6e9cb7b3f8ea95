package triage

import "context"

// ForgetParams selects failed jobs to delete, as RetryParams selects; an
// Archive (not on a dry run) gets each batch's rows as PruneParams' does.
type ForgetParams struct {
	Query
	Refs    []Ref
	All     bool
	DryRun  bool
	Archive Archiver
}

// ForgetResult says what a forget did.
type ForgetResult struct {
	DryRun   bool     `json:"dry_run"`
	Deleted  int      `json:"deleted"`
	IDs      []string `json:"ids"`
	NotFound []string `json:"not_found"`
}

// Forget deletes failed jobs by id or by filter, batch by batch: it drains
// StartForget's run into one result.
func (s *Service) Forget(ctx context.Context, p ForgetParams) (ForgetResult, error) {
	run := s.StartForget(ctx, p)
	var ids []string
	for run.Next(ctx) {
		ids = append(ids, run.Batch().IDs...)
	}
	res := run.Result()
	res.IDs = ids
	return res, run.Err()
}

// ForgetBatch is what one batch of a forget deleted (dry: would delete),
// and the jobs deleted so far.
type ForgetBatch struct {
	IDs     []string
	Deleted int
}

// ForgetRun is a forget its caller drives batch by batch, as RetryRun is;
// it holds nothing between Next calls.
type ForgetRun struct {
	s    *Service
	p    ForgetParams
	res  ForgetResult
	walk walk
	last ForgetBatch
	err  error
	done bool
}

// StartForget begins a forget; a selection that cannot start makes the
// first Next return false, with the reason in Err.
func (s *Service) StartForget(ctx context.Context, p ForgetParams) *ForgetRun {
	r := &ForgetRun{s: s, p: p, res: ForgetResult{DryRun: p.DryRun}}
	r.walk, r.res.NotFound, r.err = s.selection(ctx, p.Query, p.Refs, p.All, s.Now(), p.DryRun, WriteBatch)
	return r
}

// Next deletes the next batch; false when the run is over.
func (r *ForgetRun) Next(ctx context.Context) bool {
	if r.err != nil || r.done {
		return false
	}
	if err := ctx.Err(); err != nil {
		r.err = err
		return false
	}
	bp, ok := r.walk.next()
	if !ok {
		r.done = true
		return false
	}
	bp.NeedException = r.p.Signature != ""
	for attempts := 0; ; {
		err := r.batch(ctx, bp)
		if err == nil {
			return true
		}
		if again, err := r.walk.again(ctx, err, &attempts); !again {
			r.err = err
			return false
		}
	}
}

// Batch reports the batch the last Next deleted.
func (r *ForgetRun) Batch() ForgetBatch { return r.last }

// Err is what ended the run early.
func (r *ForgetRun) Err() error { return r.err }

// Result is what the committed batches did, ids aside.
func (r *ForgetRun) Result() ForgetResult { return r.res }

func (r *ForgetRun) batch(ctx context.Context, bp BatchParams) error {
	b, err := r.s.Store.TakeBatch(ctx, bp)
	if err != nil {
		return err
	}
	rows := b.Rows()
	var d Decision
	var ids []string
	for _, row := range rows {
		j := r.p.Query.jobFor(row)
		if len(r.p.Refs) == 0 && (!r.p.Query.match(j) || !r.p.Query.tagged(row)) {
			continue
		}
		d.Delete = append(d.Delete, row.ID)
		ids = append(ids, j.ID)
	}
	// The archive is written before Decide: what it holds is what the
	// batch then deletes.
	if r.p.Archive != nil && !r.p.DryRun && len(d.Delete) > 0 {
		raw, err := b.Raw(ctx, d.Delete)
		if err == nil {
			err = r.p.Archive.Write(raw)
		}
		if err != nil {
			b.Rollback()
			return err
		}
	}
	if err := b.Decide(ctx, d); err != nil {
		return err
	}
	if err := b.Commit(ctx); err != nil {
		return err
	}
	r.walk.seq.advance(rows)
	r.res.Deleted += len(d.Delete)
	r.last = ForgetBatch{IDs: ids, Deleted: r.res.Deleted}
	return nil
}
