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
	// Skipped are the rows failed_jobs refused to delete.
	Skipped []Skip `json:"skipped"`
}

// Forget deletes failed jobs: StartForget's run drained into one result.
func (s *Service) Forget(ctx context.Context, p ForgetParams) (ForgetResult, error) {
	run := s.StartForget(ctx, p)
	var ids []string
	var skips []Skip
	for run.Next(ctx) {
		ids = append(ids, run.Batch().IDs...)
		skips = append(skips, run.Batch().Skips...)
	}
	res := run.Result()
	res.IDs, res.Skipped = ids, skips
	return res, run.Err()
}

// ForgetBatch is what one batch deleted, and the jobs deleted so far.
type ForgetBatch struct {
	IDs     []string
	Skips   []Skip
	Deleted int
}

// ForgetRun is a forget its caller drives batch by batch: a RetryRun that
// deletes (its Next and Err), holding nothing between Next calls.
type ForgetRun struct{ *RetryRun }

// StartForget begins a forget; a selection that cannot start fails Next.
func (s *Service) StartForget(ctx context.Context, p ForgetParams) *ForgetRun {
	r := &RetryRun{s: s, p: RetryParams{Query: p.Query, Refs: p.Refs, All: p.All, DryRun: p.DryRun}, now: s.Now(),
		forget: true, archive: p.Archive, refused: map[int64]RejectedRow{}}
	r.walk, r.res.NotFound, r.err = s.selection(ctx, p.Query, p.Refs, p.All, r.now, p.DryRun, WriteBatch)
	return &ForgetRun{r}
}

// Batch reports the batch the last Next deleted.
func (f *ForgetRun) Batch() ForgetBatch {
	return ForgetBatch{IDs: f.last.IDs, Skips: f.last.Skips, Deleted: f.last.Retried}
}

// Result is what the committed batches did, ids and skips aside.
func (f *ForgetRun) Result() ForgetResult {
	return ForgetResult{DryRun: f.p.DryRun, Deleted: f.res.Retried, NotFound: f.res.NotFound}
}
