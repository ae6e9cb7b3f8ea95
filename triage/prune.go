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
	return s.Store.Prune(ctx, PruneParams{Before: s.hoursAgo(hours), DryRun: dry, Archive: archive})
}

// Flush deletes every failed job there when it starts, or with hours > 0 those
// failed at or before now − hours (queue:flush --hours).
func (s *Service) Flush(ctx context.Context, hours float64, archive Archiver) iter.Seq2[PruneBatch, error] {
	if hours < 0 {
		return pruneFailed(fmt.Errorf("%w: --hours must not be negative, got %v", ErrInvalidInput, hours))
	}
	if hours == 0 {
		return s.Store.Prune(ctx, PruneParams{All: true, BatchSize: flushBatch, Archive: archive})
	}
	return s.Store.Prune(ctx, PruneParams{Before: s.hoursAgo(hours), Inclusive: true, Archive: archive})
}

// KeptSkips reports the rows a prune or flush batch kept (PruneBatch.Kept)
// as skipped jobs.
func KeptSkips(kept []RejectedRow) []Skip {
	out := make([]Skip, len(kept))
	for i, k := range kept {
		out[i] = Skip{ID: fmt.Sprint(k.ID), Code: SkipDeleteRefused,
			Reason: fmt.Sprintf("row %d: failed_jobs refused to delete it (%s)", k.ID, k.Reason)}
	}
	return out
}

// flushBatch is the rows one statement of a flush deletes.
const flushBatch = 1000

func (s *Service) hoursAgo(hours float64) time.Time {
	return s.Now().Add(-time.Duration(hours * float64(time.Hour)))
}

// pruneFailed is a prune that ends before its first batch.
func pruneFailed(err error) iter.Seq2[PruneBatch, error] {
	return func(yield func(PruneBatch, error) bool) { yield(PruneBatch{}, err) }
}
