package triage

import (
	"context"
	"fmt"
	"time"
)

// Flush deletes every failed job, or with hours > 0 those that failed at or
// before now − hours (queue:flush --hours, <=), in short batches.
func (s *Service) Flush(ctx context.Context, hours float64, progress func(int64)) (int64, error) {
	return s.FlushArchived(ctx, hours, nil, progress)
}

// FlushArchived is Flush handing each batch's rows to archive before the
// batch is deleted (nil: no archive).
func (s *Service) FlushArchived(ctx context.Context, hours float64, archive func([]RawRow) error, progress func(int64)) (int64, error) {
	if hours < 0 {
		return 0, fmt.Errorf("%w: --hours must not be negative, got %v", ErrInvalidInput, hours)
	}
	if hours == 0 {
		if archive != nil {
			return s.Store.DeleteBefore(ctx, PruneParams{All: true, BatchSize: flushBatch, Progress: progress, Archive: archive})
		}
		return s.Store.DeleteAll(ctx, flushBatch, progress)
	}
	before := s.Now().Add(-time.Duration(hours * float64(time.Hour)))
	return s.Store.DeleteBefore(ctx, PruneParams{Before: before, Inclusive: true, Progress: progress, Archive: archive})
}

// flushBatch is the rows one statement of a flush deletes.
const flushBatch = 1000
