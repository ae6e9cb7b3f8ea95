package triage

import (
	"context"
	"errors"
	"sort"
	"strings"
	"time"

	"github.com/jobtriage/jobtriage/triage/payload"
	"github.com/jobtriage/jobtriage/triage/signature"
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
	// Location is the app timezone, in which failed_at is written.
	Location *time.Location
	// DatabaseConnections are the queue connection names that use Laravel's
	// database driver; retry writes only their jobs (default "database").
	DatabaseConnections []string
	// Jobs, when set, is the jobs table in another database than
	// failed_jobs (--jobs-dsn): retry pushes the jobs of database
	// connections there first and deletes here second.
	Jobs QueueBackend
	// Routes are the app's queue connections by name (failed_jobs.connection):
	// where each one's jobs go back to. nil outside an app profile, where
	// only DatabaseConnections are writable.
	Routes map[string]Route
	// MonitorConnections and DefaultConnection are the app's queue
	// connections as monitor sees them (empty outside an app profile).
	MonitorConnections []MonitorConnection
	DefaultConnection  string
	// Target names the app and the failed-jobs store for confirmations and
	// write summaries ("app shop (production) · postgres://…/shop table failed_jobs").
	Target string
	// TargetMark is printed before Target: the jobtriage context the
	// service was opened for ("context shop (Shop EU) [PRODUCTION]"),
	// already made safe for a terminal (the caller may colour it); "" for
	// none.
	TargetMark string
}

// appKeys is AppKey followed by PreviousKeys, without empties.
func (s *Service) appKeys() []string {
	var keys []string
	for _, k := range append([]string{s.AppKey}, s.PreviousKeys...) {
		if k != "" {
			keys = append(keys, k)
		}
	}
	return keys
}

// Query narrows a listing beyond the SQL filter: the job class and the
// error signature are derived from the payload and exception, so they are
// checked in Go after a SQL pre-filter.
type Query struct {
	Filter Filter
	// Class matches the job class case-insensitively: the full name, or any
	// part of it ("SendInvoice" finds App\Jobs\SendInvoice).
	Class string
	// Signature is a signature id printed by failed --group.
	Signature string
}

func (q Query) filter() Filter {
	f := q.Filter
	if q.Class != "" {
		f.PayloadContains = append(append([]string{}, f.PayloadContains...), payload.ClassNeedle(q.Class))
	}
	return f
}

// empty reports whether the query selects everything.
func (q Query) empty() bool {
	f := q.Filter
	return q.Class == "" && q.Signature == "" && len(f.Queues) == 0 && len(f.Connections) == 0 &&
		f.Search == "" && len(f.PayloadContains) == 0 && f.Since.IsZero() && f.Until.IsZero() && f.MinID == 0 && f.MaxID == 0
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

// Page is one page of failed jobs, newest first.
type Page struct {
	Jobs []Job
	// Next continues the listing; "" when this page is the last.
	Next string
}

// errPageFull stops a scan once a page has one row more than it shows.
var errPageFull = errors.New("page full")

// List returns one page of failed jobs, newest first.
func (s *Service) List(ctx context.Context, p ListParams) (Page, error) {
	if p.Limit <= 0 {
		p.Limit = 50
	}
	cur, err := ParseCursor(p.Cursor)
	if err != nil {
		return Page{}, err
	}
	var page Page
	batch := p.Limit + 1
	if p.Class != "" || p.Signature != "" {
		batch = 500 // matches are sparse; fetch more per round trip
	}
	var lastShown int64
	err = s.Store.ScanFailed(ctx, ScanParams{Filter: p.filter(), BeforeID: cur.BeforeID, BatchSize: batch},
		func(r *FailedRow) error {
			j := JobFromRow(r)
			if !p.match(j) {
				return nil
			}
			if len(page.Jobs) == p.Limit {
				page.Next = Cursor{BeforeID: lastShown}.String()
				return errPageFull
			}
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
	return s.Store.ScanFailed(ctx, ScanParams{Filter: q.filter(), Full: full, BatchSize: 1000},
		func(r *FailedRow) error {
			var j Job
			if full {
				// Heads are what JobFromRow expects; a whole exception's top
				// block is cut here the way the store cuts it in SQL.
				head := *r
				head.Exception = TopExceptionHead(r.Exception)
				j = JobFromRow(&head)
			} else {
				j = JobFromRow(r)
			}
			if !q.match(j) {
				return nil
			}
			return fn(j, r)
		})
}

// Signature is one error signature: failures of one job class with one top
// exception class and the same message once ids, numbers and values are
// normalised away.
type Signature struct {
	ID             string    `json:"signature"`
	Class          string    `json:"class"`
	ExceptionClass string    `json:"exception_class"`
	Message        string    `json:"message"` // normalised
	Example        string    `json:"example"` // the newest raw message
	Count          int       `json:"count"`
	FirstSeen      time.Time `json:"first_seen"`
	LastSeen       time.Time `json:"last_seen"`
	Queues         []string  `json:"queues"`
	Connections    []string  `json:"connections"`
	NewestID       string    `json:"newest_id"`
}

// GroupProgress reports a scan in flight: the signatures so far and how far
// through the table (by id) the scan has come.
type GroupProgress struct {
	Scanned    int
	Fraction   float64 // 0..1 of the id range covered
	Signatures []Signature
	Done       bool
}

// GroupParams asks for the error signatures of the matching jobs.
type GroupParams struct {
	Query
	// Progress, when set, receives a snapshot every ProgressEvery rows
	// (default 5000) and at the end, so a UI can show counts streaming in.
	Progress      func(GroupProgress)
	ProgressEvery int
}

// Group folds every matching failed job into signatures, sorted by count
// (then by last seen). Memory grows with the number of distinct signatures,
// not with the table.
func (s *Service) Group(ctx context.Context, p GroupParams) ([]Signature, error) {
	acc := newSignatureAccumulator()
	every := p.ProgressEvery
	if every <= 0 {
		every = 5000
	}
	var minID, maxID int64
	scanned := 0
	// Failures repeat: the same message normalised once per pass, not once
	// per row.
	cache := signature.NewCache(50000)
	err := s.Store.ScanFailed(ctx, ScanParams{Filter: p.filter(), BatchSize: 2000}, func(r *FailedRow) error {
		if maxID == 0 {
			maxID = r.ID
		}
		minID = r.ID
		j := jobFromRow(r, cache.Normalize)
		if !p.match(j) {
			return nil
		}
		acc.add(j, cache.Normalize)
		scanned++
		if p.Progress != nil && scanned%every == 0 {
			frac := 0.0
			if maxID > 0 {
				frac = float64(maxID-minID) / float64(maxID)
			}
			p.Progress(GroupProgress{Scanned: scanned, Fraction: frac, Signatures: acc.sorted()})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := acc.sorted()
	if p.Progress != nil {
		p.Progress(GroupProgress{Scanned: scanned, Fraction: 1, Signatures: out, Done: true})
	}
	return out, nil
}

type signatureAccumulator struct {
	byID map[string]*sigState
}

type sigState struct {
	sig         Signature
	queues      map[string]struct{}
	connections map[string]struct{}
}

func newSignatureAccumulator() *signatureAccumulator {
	return &signatureAccumulator{byID: map[string]*sigState{}}
}

// add takes rows newest first, so the first row of a signature is its newest.
func (a *signatureAccumulator) add(j Job, normalize func(string) string) {
	st, ok := a.byID[j.Signature]
	if !ok {
		st = &sigState{
			sig: Signature{ID: j.Signature, Class: j.Class, ExceptionClass: j.ExceptionClass,
				Message: normalize(j.ExceptionMessage), Example: j.ExceptionMessage,
				FirstSeen: j.FailedAt, LastSeen: j.FailedAt, NewestID: j.ID},
			queues: map[string]struct{}{}, connections: map[string]struct{}{},
		}
		a.byID[j.Signature] = st
	}
	st.sig.Count++
	// A row whose failed_at could not be read (zero) counts, but says
	// nothing about when the signature was seen.
	if !j.FailedAt.IsZero() {
		if st.sig.FirstSeen.IsZero() || j.FailedAt.Before(st.sig.FirstSeen) {
			st.sig.FirstSeen = j.FailedAt
		}
		if j.FailedAt.After(st.sig.LastSeen) {
			st.sig.LastSeen = j.FailedAt
		}
	}
	st.queues[j.Queue] = struct{}{}
	st.connections[j.Connection] = struct{}{}
}

func keys(m map[string]struct{}) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (a *signatureAccumulator) sorted() []Signature {
	out := make([]Signature, 0, len(a.byID))
	for _, st := range a.byID {
		sig := st.sig
		sig.Queues = keys(st.queues)
		sig.Connections = keys(st.connections)
		out = append(out, sig)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		if !out[i].LastSeen.Equal(out[j].LastSeen) {
			return out[i].LastSeen.After(out[j].LastSeen)
		}
		return out[i].ID < out[j].ID
	})
	return out
}
