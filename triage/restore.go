package triage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
)

// RestoreBatch is the rows one restore transaction inserts.
const RestoreBatch = 1000

// RestoreSummary is what a restore did (or, dry, would do).
type RestoreSummary struct {
	DryRun bool  `json:"dry_run"`
	Read   int64 `json:"read"` // the archive's records
	// Restored rows were inserted; Renumbered of them under a new id
	// because another row held theirs; Present rows were there already.
	Restored   int64 `json:"restored"`
	Renumbered int64 `json:"renumbered"`
	Present    int64 `json:"present"`
	// Duplicates are records whose uuid an earlier record carried (a
	// batch archived twice by a prune run again): restored once.
	Duplicates int64 `json:"duplicates"`
}

// Restore reads rows to the end and inserts the rows not in failed_jobs
// yet, RestoreBatch at a time, idempotently. It yields the summary so far
// after each row it reads and, last, the whole summary; an error is
// yielded with the summary so far and ends the run.
func (s *Service) Restore(ctx context.Context, rows ArchiveReader, dry bool) iter.Seq2[RestoreSummary, error] {
	return func(yield func(RestoreSummary, error) bool) {
		sum := RestoreSummary{DryRun: dry}
		r, ok := s.Store.(Restorer)
		if !ok {
			yield(sum, fmt.Errorf("%w: this failed-job store is read-only; restore needs a database failed-job driver", ErrInvalidInput))
			return
		}
		seen := map[string]bool{} // uuids read so far
		batch := make([]RawRow, 0, RestoreBatch)
		flush := func() error {
			if len(batch) == 0 {
				return nil
			}
			var res RestoreResult
			var err error
			// A deadlock or a concurrent restore rolled the batch back whole:
			// running it again skips what is there now.
			for tries := 0; tries == 0 || errors.Is(err, ErrConflict) && tries <= conflictAttempts; tries++ {
				res, err = r.RestoreRows(ctx, RestoreParams{Rows: batch, DryRun: dry})
			}
			if err != nil {
				return err
			}
			sum.Restored += int64(res.Restored)
			sum.Renumbered += int64(res.Renumbered)
			sum.Present += int64(res.Present)
			batch = batch[:0]
			return nil
		}
		for {
			if err := ctx.Err(); err != nil {
				yield(sum, err)
				return
			}
			row, err := rows.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				yield(sum, err)
				return
			}
			sum.Read++
			if row.UUID != nil {
				if seen[*row.UUID] {
					sum.Duplicates++
					continue
				}
				seen[*row.UUID] = true
			}
			batch = append(batch, row)
			if len(batch) == RestoreBatch {
				if err := flush(); err != nil {
					yield(sum, err)
					return
				}
			}
			if !yield(sum, nil) {
				return
			}
		}
		if err := flush(); err != nil {
			yield(sum, err)
			return
		}
		yield(sum, nil)
	}
}
