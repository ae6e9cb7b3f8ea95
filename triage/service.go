package triage

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/jobtriage/jobtriage/triage/payload"
	"github.com/jobtriage/jobtriage/triage/redact"
)

// Service holds the use-cases the CLI and the TUI share.
type Service struct {
	Store Store
	// Now is injected so that tests and cut-offs never read the wall clock.
	Now func() time.Time
	// AppKey (Laravel's APP_KEY) lets show decrypt encrypted commands;
	// PreviousKeys (APP_PREVIOUS_KEYS, 11+) are tried after it.
	AppKey       string
	PreviousKeys []string
	Location     *time.Location // the app timezone, of failed_at
	Router       Router         // where each queue connection's jobs go back to
	// MonitorConnections and DefaultConnection are the app's queue
	// connections as monitor sees them (empty outside an app profile).
	MonitorConnections []MonitorConnection
	DefaultConnection  string
	// Pauses is the app's cache store with the queue pause keys (monitor,
	// retry's warning); nil when there is none jobtriage can read.
	Pauses CacheStore
	// Redact, when set, masks the values of its keys in what the read
	// use-cases return for people (triage/redaction.go).
	Redact *redact.Keys
	// Target names the app and the failed-jobs store for confirmations and
	// write summaries ("app shop (production) · postgres://…/shop table failed_jobs").
	Target string
	// TargetMark, before Target, is the context the service was opened for
	// ("context shop (Shop EU) [PRODUCTION]"), terminal-safe.
	TargetMark string
	// Index, when set, answers groupings from a local signature index
	// (triage/sigindex) instead of a pass over the table.
	Index SignatureIndex
}

// appKeys is AppKey followed by PreviousKeys, without empties.
func (s *Service) appKeys() []string {
	return slices.DeleteFunc(append([]string{s.AppKey}, s.PreviousKeys...), func(k string) bool { return k == "" })
}

// Query narrows a listing beyond the SQL filter: class, signature and tags are
// derived from the row, so checked in Go.
type Query struct {
	Filter Filter
	// Class matches the job class case-insensitively: the full name, or any
	// part of it ("SendInvoice" finds App\Jobs\SendInvoice).
	Class string
	// Signature is a signature id printed by failed --group.
	Signature string
	// Tags are Horizon tags the job must all carry, exactly
	// (payload.HasTags), read from the whole payload (wholeRows).
	Tags []string
}

func (q Query) filter() Filter {
	f := q.Filter
	if q.Class == "" && len(q.Tags) == 0 {
		return f
	}
	f.PayloadContains = append([]string{}, f.PayloadContains...)
	if q.Class != "" {
		f.PayloadContains = append(f.PayloadContains, payload.ClassNeedle(q.Class))
	}
	for _, t := range q.Tags {
		f.PayloadContains = append(f.PayloadContains, payload.TagNeedles(t)...)
	}
	return f
}

// Empty reports whether the query selects everything.
func (q Query) Empty() bool {
	f := q.Filter
	return q.Class == "" && q.Signature == "" && len(q.Tags) == 0 && len(f.Queues) == 0 && len(f.Connections) == 0 &&
		f.Search == "" && len(f.PayloadContains) == 0 && f.Since.IsZero() && f.Until.IsZero() && f.MinID == 0 && f.MaxID == 0
}

// jobFor is the row as match needs it: with a signature only when asked.
func (q Query) jobFor(r *FailedRow) Job {
	if q.Signature == "" {
		return jobWithoutSignature(r)
	}
	return JobFromRow(r)
}

// wholeRows reports whether a listing scan must read whole rows: the tags
// are in the payload, past the class windows a listing reads.
func (q Query) wholeRows() bool { return len(q.Tags) > 0 }

// listingRow is a row as a listing's job is derived from it: a whole row has
// its exception cut to the top block's head, as the store's SQL cuts it.
func listingRow(r *FailedRow, whole bool) *FailedRow {
	if !whole {
		return r
	}
	head := *r
	head.Exception = TopExceptionHead(r.Exception)
	return &head
}

// tagged reports whether a row's whole payload carries the query's tags.
func (q Query) tagged(r *FailedRow) bool {
	return payload.HasTags(r.Payload, q.Tags)
}

func (q Query) match(j Job) bool {
	if q.Class != "" && !strings.Contains(strings.ToLower(j.Class), strings.ToLower(q.Class)) {
		return false
	}
	if q.Signature != "" && j.Signature != q.Signature {
		return false
	}
	return true
}

// ListParams asks for one page of a listing.
type ListParams struct {
	Query
	Cursor string // from a previous Page.Next
	Limit  int
}

// Page is one page of failed jobs, newest first; Next is "" on the last.
type Page struct {
	Jobs []Job
	Next string
}

// errPageFull stops a scan once a page has one row more than it shows.
var errPageFull = errors.New("page full")

// List returns one page of failed jobs, newest first.
func (s *Service) List(ctx context.Context, p ListParams) (Page, error) {
	p.Limit = cmp.Or(max(p.Limit, 0), 50)
	cur, err := ParseCursor(p.Cursor)
	if err != nil {
		return Page{}, err
	}
	if page, ok, err := s.listFromIndex(ctx, p, cur); ok || err != nil {
		return page, err
	}
	var page Page
	batch := p.Limit + 1
	if p.Class != "" || p.Signature != "" || len(p.Tags) > 0 {
		batch = 500 // matches are sparse; fetch more per round trip
	}
	var lastShown int64
	whole := p.wholeRows()
	err = s.Store.ScanFailed(ctx, ScanParams{Filter: cur.below(p.filter()), BeforeID: cur.BeforeID, BatchSize: batch, Full: whole},
		func(r *FailedRow) error {
			if !p.tagged(r) {
				return nil
			}
			j := JobFromRow(listingRow(r, whole))
			if !p.match(j) {
				return nil
			}
			if len(page.Jobs) == p.Limit {
				page.Next = CursorBefore(lastShown).String()
				return errPageFull
			}
			s.redactJob(&j)
			page.Jobs = append(page.Jobs, j)
			lastShown = r.ID
			return nil
		})
	if err != nil && !errors.Is(err, errPageFull) {
		return Page{}, err
	}
	return page, nil
}

// Each streams every matching job, newest first, in constant memory: the
// NDJSON export. With full set, fn also gets the whole row.
func (s *Service) Each(ctx context.Context, q Query, full bool, fn func(Job, *FailedRow) error) error {
	whole := full || q.wholeRows()
	return s.Store.ScanFailed(ctx, ScanParams{Filter: q.filter(), Full: whole, BatchSize: 1000},
		func(r *FailedRow) error {
			if !q.tagged(r) {
				return nil
			}
			j := JobFromRow(listingRow(r, whole))
			if !q.match(j) {
				return nil
			}
			s.redactJob(&j)
			if full {
				r = s.redactRow(r)
			}
			return fn(j, r)
		})
}
