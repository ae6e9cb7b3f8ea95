package triage

import (
	"context"
	"fmt"
	"iter"
	"time"
)

// Prune deletes (or, dry, counts) the failed jobs older than hours, as
// queue:prune-failed does (failed_at < now − hours, in the app timezone),
// in short batches, handing each batch's rows to archive first when it is
// not nil. It yields each batch's report (Store.Prune).
func (s *Service) Prune(ctx context.Context, hours float64, dry bool, archive Archiver) iter.Seq2[PruneBatch, error] {
	if hours <= 0 {
		return pruneFailed(fmt.Errorf("%w: --hours must be greater than 0, got %v", ErrInvalidInput, hours))
	}
	before := s.Now().Add(-time.Duration(hours * float64(time.Hour)))
	return s.Store.Prune(ctx, PruneParams{Before: before, DryRun: dry, Archive: archive})
}

// pruneFailed is a prune that ends before its first batch.
func pruneFailed(err error) iter.Seq2[PruneBatch, error] {
	return func(yield func(PruneBatch, error) bool) { yield(PruneBatch{}, err) }
}
