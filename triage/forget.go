package triage

import "context"

// ForgetParams selects failed jobs to delete.
type ForgetParams struct {
	Query
	Refs     []Ref
	All      bool
	DryRun   bool
	Progress func(done int)
	// OnBatch is RetryParams.OnBatch for ForgetResult.IDs.
	OnBatch func(ids []string) error
	// Archive receives each batch's rows whole before they are deleted
	// (BatchParams.Archive); not called on a dry run.
	Archive func(rows []RawRow) error
}

// ForgetResult says what a forget did.
type ForgetResult struct {
	DryRun   bool     `json:"dry_run"`
	Deleted  int      `json:"deleted"`
	IDs      []string `json:"ids"`
	NotFound []string `json:"not_found"`
}

// Forget deletes failed jobs by id or by filter, batch by batch.
func (s *Service) Forget(ctx context.Context, p ForgetParams) (ForgetResult, error) {
	res := ForgetResult{DryRun: p.DryRun}
	chunks, f, missing, err := s.selection(ctx, p.Query, p.Refs, p.All)
	if err != nil {
		return res, err
	}
	res.NotFound = missing
	byIDs := len(p.Refs) > 0
	plan := func(r *FailedRow) bool {
		j := p.Query.jobFor(r)
		if !byIDs && !p.Query.match(j) {
			return false
		}
		res.Deleted++
		res.IDs = append(res.IDs, j.ID)
		return true
	}
	conflicts := 0
	run := func(bp BatchParams) (BatchResult, error) {
		bp.NeedException = p.Signature != ""
		bp.Archive = p.Archive
		deleted, ids := res.Deleted, len(res.IDs) // ids are only appended to
		br, err := retryConflicts(ctx, &conflicts, func() (BatchResult, error) {
			res.Deleted, res.IDs = deleted, res.IDs[:ids]
			return s.Store.DeleteBatch(ctx, bp, plan)
		})
		if err != nil {
			res.Deleted, res.IDs = deleted, res.IDs[:ids]
			return br, err
		}
		if p.OnBatch != nil && len(res.IDs) > 0 {
			if err := p.OnBatch(res.IDs); err != nil {
				return br, err
			}
			res.IDs = nil
		}
		if p.Progress != nil {
			p.Progress(res.Deleted)
		}
		return br, nil
	}
	err = sweep(ctx, &conflicts, func() error {
		return eachBatch(ctx, newBatchSeq(chunks, f, byIDs, s.Now(), p.DryRun, WriteBatch), run, func() bool { return false })
	})
	return res, err
}
