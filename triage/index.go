package triage

import (
	"context"
	"errors"
	"slices"
	"time"
)

// TableIdentity names one failed-jobs table on one server, for a local
// cache that must never be shared between databases, with the table's own
// identity where the server exposes one (PostgreSQL's oid, MySQL's table id
// or creation time, SQLite's file and root page), which changes when the
// table is dropped and created again under the same name.
type TableIdentity struct {
	Dialect  string
	Host     string
	Port     string
	Database string // the database name, or the SQLite file's path
	Schema   string
	Table    string
	Object   string // "" when the server exposes none
}

// Key is everything but Object: the table, whichever incarnation of it.
func (t TableIdentity) Key() string {
	return t.Dialect + "\x00" + t.Host + "\x00" + t.Port + "\x00" + t.Database + "\x00" + t.Schema + "\x00" + t.Table
}

// IndexSource is what a store (sqlstore) offers a local signature index:
// its identity, the rows above an id, and the live ids (an index-only
// scan), so rows deleted or retried by anyone drop out of the index.
type IndexSource interface {
	IndexIdentity(ctx context.Context) (TableIdentity, error)
	// ScanAbove streams the rows with id > afterID, ascending, as a listing
	// reads them (payload class windows, top exception head).
	ScanAbove(ctx context.Context, afterID int64, fn func(*FailedRow) error) error
	// LiveIDs streams the ids ≤ upTo that exist, ascending.
	LiveIDs(ctx context.Context, upTo int64, fn func(id int64) error) error
	// MaxFailedID is the highest id (0: empty), which sizes the index.
	MaxFailedID(ctx context.Context) (int64, error)
}

// RangeScanner is an IndexSource that can read ranges of ids on connections
// of their own, so a long pass reads several at once: one statement runs on
// one server process, whose work per row is most of a pass.
type RangeScanner interface {
	// ScanRange streams the rows with afterID < id ≤ upTo, ascending, as
	// ScanAbove does. Calls for disjoint ranges may run concurrently.
	ScanRange(ctx context.Context, afterID, upTo int64, fn func(*FailedRow) error) error
	// RangeScans is how many ScanRange calls may usefully run at once.
	RangeScans() int
}

// IndexedSignature is what an index keeps per signature: what a grouping
// shows, and its newest row, whose message is the example.
type IndexedSignature struct {
	ID             string
	Class          string
	ExceptionClass string
	Message        string // normalised
	ExampleRowID   int64
	ExampleID      string // the row's uuid, or its integer id
	Example        string // the row's raw message
}

// IndexedRow is one live row as a signature index holds it.
type IndexedRow struct {
	RowID      int64
	Queue      string
	Connection string
	FailedAt   time.Time // wall-clock time in the app timezone; zero when unreadable
	Sig        *IndexedSignature
	// NullQueue and NullConnection: NULL, which no SQL filter matches.
	NullQueue, NullConnection bool
}

// SignatureIndex answers groupings from a local index of each row's
// signature (triage/sigindex) instead of a pass over the table.
type SignatureIndex interface {
	// Refresh brings the index up to date and returns its live rows, or
	// ErrIndexUnusable (wrapped) when this table cannot be indexed.
	Refresh(ctx context.Context, loc *time.Location) (IndexView, error)
}

// IndexView is a refreshed index's live rows, which Each hands out newest first.
type IndexView interface {
	Each(fn func(IndexedRow) error) error
}

// ErrIndexUnusable: the index cannot serve this table (no identity, too
// big); a pass over the table gives the answer instead.
var ErrIndexUnusable = errors.New("signature index unusable")

// indexable reports whether a query can be answered from the index: every
// filter it has is on a field the index keeps. Search and tags look inside
// the texts, which it does not keep, and so does Class (a scan pre-filters
// the payload for payload.ClassNeedle, which a payload not written by
// json_encode lacks). Since is left to the store, which bounds the scan by
// id (sqlstore.SinceSlack) and so reads only recent rows anyway.
func (q Query) indexable() bool {
	f := q.Filter
	return q.Class == "" && len(q.Tags) == 0 && f.Search == "" && len(f.PayloadContains) == 0 && f.MinID == 0 && f.MaxID == 0 && f.Since.IsZero()
}

// matchIndexed is the query's filter on an indexed row, as SQL and Query.match
// decide it (failed_at as wall-clock text).
func (q Query) matchIndexed(r IndexedRow, loc *time.Location) bool {
	f := q.Filter
	if len(f.Queues) > 0 && (r.NullQueue || !slices.Contains(f.Queues, r.Queue)) {
		return false
	}
	if len(f.Connections) > 0 && (r.NullConnection || !slices.Contains(f.Connections, r.Connection)) {
		return false
	}
	if !f.Until.IsZero() {
		// SQL compares to the second; a NULL or unreadable failed_at fails.
		if r.FailedAt.IsZero() || wallKey(r.FailedAt) > wallKey(f.Until.In(loc).Truncate(time.Second)) {
			return false
		}
	}
	return q.match(Job{Class: r.Sig.Class, Signature: r.Sig.ID})
}

// wallKey orders wall-clock times as their text does, whatever the zone.
func wallKey(t time.Time) int64 {
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC).UnixNano()
}

// indexView is the refreshed index for q; ok is false when it cannot answer.
func (s *Service) indexView(ctx context.Context, q Query) (view IndexView, loc *time.Location, ok bool, err error) {
	if s.Index == nil || !q.indexable() {
		return nil, nil, false, nil
	}
	if loc = s.Location; loc == nil {
		loc = time.UTC
	}
	view, err = s.Index.Refresh(ctx, loc)
	if errors.Is(err, ErrIndexUnusable) {
		return nil, nil, false, nil
	}
	return view, loc, true, err
}

// groupFromIndex folds the live rows the index holds into the grouping,
// in one pass: the same Jobs a scan would add, newest first. A signature's
// example is the newest matching row's message; each signature's first row
// carries the example the index kept, and fix replaces it in the result
// where that is not the newest matching row (the kept one was deleted, or
// filtered out), reading that row. handled is false when the index cannot
// answer and the caller must scan.
func (s *Service) groupFromIndex(ctx context.Context, q Query, add func(Job)) (fix func([]Signature) error, handled bool, err error) {
	view, loc, handled, err := s.indexView(ctx, q)
	if !handled || err != nil {
		return nil, handled, err
	}
	newest := map[*IndexedSignature]int64{}
	err = view.Each(func(r IndexedRow) error {
		if !q.matchIndexed(r, loc) {
			return nil
		}
		j := Job{RowID: r.RowID, Connection: r.Connection, Queue: r.Queue, FailedAt: r.FailedAt,
			Class: r.Sig.Class, ExceptionClass: r.Sig.ExceptionClass, Signature: r.Sig.ID}
		if _, seen := newest[r.Sig]; !seen {
			newest[r.Sig] = r.RowID
			j.ID, j.ExceptionMessage = r.Sig.ExampleID, r.Sig.Example
		}
		add(j)
		return nil
	})
	if err != nil {
		return nil, true, err
	}
	stale := map[string]int64{}
	for sig, id := range newest {
		if id != sig.ExampleRowID {
			stale[sig.ID] = id
		}
	}
	return func(sigs []Signature) error {
		for i := range sigs {
			id, ok := stale[sigs[i].ID]
			if !ok {
				continue
			}
			r, err := s.Store.GetFailed(ctx, Ref{ID: id})
			if errors.Is(err, ErrNotFound) {
				continue // deleted since: keep what the index has
			}
			if err != nil {
				return err
			}
			j := JobFromRow(listingRow(r, true))
			sigs[i].Example, sigs[i].NewestID = j.ExceptionMessage, j.ID
		}
		return nil
	}, true, nil
}

// errEnoughIDs stops a walk over the index once a page's ids are found.
var errEnoughIDs = errors.New("enough ids")

// listFromIndex serves a page of one signature's jobs (failed --signature)
// from the index: the index names the page's rows, newest first, and only
// they are read, instead of every row of the table. ok is false when the
// index cannot answer and the caller must scan.
func (s *Service) listFromIndex(ctx context.Context, p ListParams, cur Cursor) (page Page, ok bool, err error) {
	if p.Signature == "" {
		return page, false, nil
	}
	view, loc, ok, err := s.indexView(ctx, p.Query)
	if !ok || err != nil {
		return page, ok, err
	}
	var ids []int64
	err = view.Each(func(r IndexedRow) error {
		if cur.Bounded() && r.RowID >= cur.BeforeID {
			return nil
		}
		if !p.matchIndexed(r, loc) {
			return nil
		}
		ids = append(ids, r.RowID)
		if len(ids) > p.Limit {
			return errEnoughIDs
		}
		return nil
	})
	if err != nil && !errors.Is(err, errEnoughIDs) {
		return page, true, err
	}
	var lastShown int64
	for _, id := range ids {
		r, err := s.Store.GetFailed(ctx, Ref{ID: id})
		if errors.Is(err, ErrNotFound) {
			continue // deleted since the refresh
		}
		if err != nil {
			return page, true, err
		}
		if len(page.Jobs) == p.Limit {
			page.Next = CursorBefore(lastShown).String()
			break
		}
		j := JobFromRow(listingRow(r, true)) // cut as a listing's SQL cuts it
		s.redactJob(&j)
		page.Jobs = append(page.Jobs, j)
		lastShown = id
	}
	return page, true, nil
}
