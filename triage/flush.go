package triage

import (
	"context"
	"fmt"
	"iter"
	"time"
)

// Flush deletes every failed job there when it starts, or with hours > 0
// those that failed at or before now − hours (queue:flush --hours, <=), in
// short batches, handing each batch's rows to archive first when it is not
// nil. It yields each batch's report (Store.Prune).
func (s *Service) Flush(ctx context.Context, hours float64, archive Archiver) iter.Seq2[PruneBatch, error] {
	if hours < 0 {
		return pruneFailed(fmt.Errorf("%w: --hours must not be negative, got %v", ErrInvalidInput, hours))
	}
	if hours == 0 {
		return s.Store.Prune(ctx, PruneParams{All: true, BatchSize: flushBatch, Archive: archive})
	}
	before := s.Now().Add(-time.Duration(hours * float64(time.Hour)))
	return s.Store.Prune(ctx, PruneParams{Before: before, Inclusive: true, Archive: archive})
}

// flushBatch is the rows one statement of a flush deletes.
const flushBatch = 1000
