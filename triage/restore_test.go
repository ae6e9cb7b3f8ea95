package triage_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/jobtriage/jobtriage/triage"
)

// restoreStore records what Restore hands it; it fails the first call
// with conflicts conflict errors.
type restoreStore struct {
	triage.Store
	batches   [][]triage.RawRow
	conflicts int
	present   map[string]bool
	fail      error
}

func (r *restoreStore) RestoreRows(_ context.Context, p triage.RestoreParams) (triage.RestoreResult, error) {
	if r.conflicts > 0 {
		r.conflicts--
		return triage.RestoreResult{}, fmt.Errorf("deadlock: %w", triage.ErrConflict)
	}
	if r.fail != nil {
		return triage.RestoreResult{}, r.fail
	}
	r.batches = append(r.batches, append([]triage.RawRow(nil), p.Rows...))
	var res triage.RestoreResult
	for _, row := range p.Rows {
		if row.UUID != nil && r.present[*row.UUID] {
			res.Present++
		} else {
			res.Restored++
		}
	}
	return res, nil
}

// rowsFeed is an archive of rows.
func rowsFeed(rows []triage.RawRow) triage.ArchiveReader { return &feed{rows: rows} }

type feed struct{ rows []triage.RawRow }

func (f *feed) Next() (triage.RawRow, error) {
	if len(f.rows) == 0 {
		return triage.RawRow{}, io.EOF
	}
	r := f.rows[0]
	f.rows = f.rows[1:]
	return r, nil
}

// badArchive fails to read.
type badArchive struct{}

func (badArchive) Next() (triage.RawRow, error) { return triage.RawRow{}, triage.ErrInvalidInput }

func TestRestoreDeduplicatesAndBatches(t *testing.T) {
	var rows []triage.RawRow
	for i := 0; i < triage.RestoreBatch+5; i++ {
		u := fmt.Sprintf("u-%d", i)
		rows = append(rows, triage.RawRow{ID: int64(i), UUID: &u})
	}
	// The same uuid twice (a batch archived by two runs) and two rows
	// without uuid (legacy rows: the store decides by id).
	rows = append(rows, rows[3], triage.RawRow{ID: -1}, triage.RawRow{ID: -1})
	st := &restoreStore{conflicts: 2, present: map[string]bool{"u-7": true}}
	svc := &triage.Service{Store: st}
	var progress []int64
	var sum triage.RestoreSummary
	var err error
	for sum, err = range svc.Restore(context.Background(), rowsFeed(rows), false) {
		if err != nil {
			t.Fatal(err)
		}
		progress = append(progress, sum.Read)
	}
	// Restored: all but the duplicate and u-7, which was present.
	want := triage.RestoreSummary{Read: int64(len(rows)), Restored: int64(len(rows)) - 2, Present: 1, Duplicates: 1}
	if sum != want {
		t.Errorf("summary %+v, want %+v", sum, want)
	}
	if len(st.batches) != 2 || len(st.batches[0]) != triage.RestoreBatch {
		t.Errorf("%d batches", len(st.batches))
	}
	// Reports as the rows are read, and the whole summary last.
	if progress[0] != 1 || progress[len(progress)-1] != int64(len(rows)) {
		t.Errorf("progress from %d to %d, want from 1 to %d", progress[0], progress[len(progress)-1], len(rows))
	}
}

func TestRestoreStopsOnErrors(t *testing.T) {
	u := "u"
	rows := []triage.RawRow{{ID: 1, UUID: &u}}
	boom := errors.New("boom")
	svc := &triage.Service{Store: &restoreStore{fail: boom}}
	if _, err := triage.Last(svc.Restore(context.Background(), rowsFeed(rows), false)); !errors.Is(err, boom) {
		t.Errorf("store error: %v", err)
	}
	if _, err := triage.Last((&triage.Service{Store: &restoreStore{}}).Restore(context.Background(), badArchive{}, false)); !errors.Is(err, triage.ErrInvalidInput) {
		t.Errorf("archive error: %v", err)
	}
	// Conflicts past the bound give up.
	svc = &triage.Service{Store: &restoreStore{conflicts: 100}}
	if _, err := triage.Last(svc.Restore(context.Background(), rowsFeed(rows), false)); !errors.Is(err, triage.ErrConflict) {
		t.Errorf("endless conflicts: %v", err)
	}
	// A store that cannot restore (the file driver).
	type readOnly struct{ triage.Store }
	if _, err := triage.Last((&triage.Service{Store: readOnly{}}).Restore(context.Background(), rowsFeed(rows), false)); !errors.Is(err, triage.ErrInvalidInput) {
		t.Errorf("read-only store: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := triage.Last((&triage.Service{Store: &restoreStore{}}).Restore(ctx, rowsFeed(rows), false)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
