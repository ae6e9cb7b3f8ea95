package triagetest

import (
	"context"

	"github.com/jobtriage/jobtriage/triage"
)

// BatchResult is what one batch of MoveBatch or DeleteBatch did: the rows
// it took, the last id among them, and the ids it moved or deleted.
type BatchResult struct {
	Locked int
	LastID int64
	Done   []int64
}

// MoveBatch is the store's side of one retry batch, for store tests: it
// takes a batch from s, asks plan what to do with each row, pushes the
// moves that are not Local with push (nil: every move is local) and
// commits the decision. On an error nothing is reported.
func MoveBatch(ctx context.Context, s triage.Store, p triage.BatchParams, plan func(*triage.FailedRow) (triage.Move, bool),
	push func(context.Context, []triage.Move) error) (BatchResult, error) {
	p.Retry = true
	b, err := s.TakeBatch(ctx, p)
	if err != nil {
		return BatchResult{}, err
	}
	res := taken(b)
	var d triage.Decision
	var remote []triage.Move
	for _, r := range b.Rows() {
		m, ok := plan(r)
		if !ok {
			continue
		}
		m.RowID = r.ID
		d.Delete = append(d.Delete, r.ID)
		if push == nil || m.Local {
			m.Local = true
			d.Local = append(d.Local, m)
		} else {
			remote = append(remote, m)
		}
	}
	if err := b.Decide(ctx, d); err != nil {
		return BatchResult{}, err
	}
	if len(remote) > 0 && !p.DryRun {
		if err := push(ctx, remote); err != nil {
			b.Rollback()
			return BatchResult{}, err
		}
	}
	if err := b.Commit(ctx); err != nil {
		return BatchResult{}, err
	}
	res.Done = d.Delete
	return res, nil
}

// DeleteBatch is the store's side of one forget batch: the rows plan
// accepts go to archive (when not nil, and not dry) and are deleted.
func DeleteBatch(ctx context.Context, s triage.Store, p triage.BatchParams, plan func(*triage.FailedRow) bool, archive triage.Archiver) (BatchResult, error) {
	b, err := s.TakeBatch(ctx, p)
	if err != nil {
		return BatchResult{}, err
	}
	res := taken(b)
	var d triage.Decision
	for _, r := range b.Rows() {
		if plan(r) {
			d.Delete = append(d.Delete, r.ID)
		}
	}
	if archive != nil && !p.DryRun && len(d.Delete) > 0 {
		raw, err := b.Raw(ctx, d.Delete)
		if err == nil {
			err = archive.Write(raw)
		}
		if err != nil {
			b.Rollback()
			return BatchResult{}, err
		}
	}
	if err := b.Decide(ctx, d); err != nil {
		return BatchResult{}, err
	}
	if err := b.Commit(ctx); err != nil {
		return BatchResult{}, err
	}
	res.Done = d.Delete
	return res, nil
}

func taken(b triage.Batch) BatchResult {
	rows := b.Rows()
	res := BatchResult{Locked: len(rows)}
	if len(rows) > 0 {
		res.LastID = rows[len(rows)-1].ID
	}
	return res
}
