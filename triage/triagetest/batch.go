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
	var remote []triage.Move
	return decide(ctx, s, p, func(r *triage.FailedRow, d *triage.Decision) {
		m, ok := plan(r)
		if !ok {
			return
		}
		m.RowID = r.ID
		d.Delete = append(d.Delete, r.ID)
		if push == nil || m.Local {
			m.Local = true
			d.Local = append(d.Local, m)
		} else {
			remote = append(remote, m)
		}
	}, nil, func() error {
		if len(remote) > 0 && !p.DryRun {
			return push(ctx, remote)
		}
		return nil
	})
}

// DeleteBatch is the store's side of one forget batch: the rows plan
// accepts go to archive (when not nil, and not dry) and are deleted.
func DeleteBatch(ctx context.Context, s triage.Store, p triage.BatchParams, plan func(*triage.FailedRow) bool, archive triage.Archiver) (BatchResult, error) {
	return decide(ctx, s, p, func(r *triage.FailedRow, d *triage.Decision) {
		if plan(r) {
			d.Delete = append(d.Delete, r.ID)
		}
	}, archive, nil)
}

// decide takes a batch, plans each row into the decision, hands the rows
// it deletes to archive after Decide (read before it), runs pushed after it, and commits.
func decide(ctx context.Context, s triage.Store, p triage.BatchParams, plan func(*triage.FailedRow, *triage.Decision),
	archive triage.Archiver, pushed func() error) (BatchResult, error) {
	b, err := s.TakeBatch(ctx, p)
	if err != nil {
		return BatchResult{}, err
	}
	rows := b.Rows()
	res := BatchResult{Locked: len(rows)}
	if len(rows) > 0 {
		res.LastID = rows[len(rows)-1].ID
	}
	var d triage.Decision
	for _, r := range rows {
		plan(r, &d)
	}
	var raw []triage.RawRow
	if archive != nil && !p.DryRun && len(d.Delete) > 0 {
		if raw, err = b.Raw(ctx, d.Delete); err != nil {
			b.Rollback()
			return BatchResult{}, err
		}
	}
	if err := b.Decide(ctx, d); err != nil {
		return BatchResult{}, err
	}
	if raw != nil {
		if err := archive.Write(raw); err != nil {
			b.Rollback()
			return BatchResult{}, err
		}
	}
	if pushed != nil {
		if err := pushed(); err != nil {
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
