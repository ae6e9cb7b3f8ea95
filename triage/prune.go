package triage

import (
	"context"
	"fmt"
	"time"
)

// Prune deletes the failed jobs older than hours, as queue:prune-failed
// does (failed_at < now − hours, in the app timezone), in short batches.
func (s *Service) Prune(ctx context.Context, hours float64, dry bool, progress func(int64)) (int64, error) {
	return s.PruneArchived(ctx, hours, dry, nil, progress)
}

// PruneArchived is Prune handing each batch's rows to archive, which must
// make them durable, before the batch is deleted (nil: no archive).
func (s *Service) PruneArchived(ctx context.Context, hours float64, dry bool, archive func([]RawRow) error, progress func(int64)) (int64, error) {
	if hours <= 0 {
		return 0, fmt.Errorf("%w: --hours must be greater than 0, got %v", ErrInvalidInput, hours)
	}
	before := s.Now().Add(-time.Duration(hours * float64(time.Hour)))
	return s.Store.DeleteBefore(ctx, PruneParams{Before: before, DryRun: dry, Progress: progress, Archive: archive})
}
