package triage

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jobtriage/jobtriage/triage/signature"
)

// Signature is one error signature: failures of one job class with one top
// exception class and message, once normalised.
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

	// Recent counts the failures of the last trend window (from now − window
	// on, ahead of now too), Previous the window before.
	Recent   int `json:"recent"`
	Previous int `json:"previous"`
	// Spark splits the two windows into SparkBuckets equal slices, oldest
	// first: the first half sums to Previous, the second to Recent.
	Spark []int `json:"spark"`
	New   bool  `json:"new"` // first seen at or after the grouping's NewSince
}

// Change is Recent − Previous: how much more (or, negative, less) the
// signature failed in the last window than in the one before.
func (s Signature) Change() int { return s.Recent - s.Previous }

// Trend windows: the default, the longest (two reach back twice as far),
// and the sparkline slices over the two, half in each.
const (
	DefaultTrendWindow = time.Hour
	MaxTrendWindow     = 30 * 24 * time.Hour
	SparkBuckets       = 8
)

// SortKey orders signatures.
type SortKey int

const (
	SortCount SortKey = iota // most failures first (the default)
	SortLast                 // the most recent failure first
	SortFirst                // the newest signature first: what just started failing
	SortTrend                // the biggest rise from the previous window first
	sortKeys
)

var sortKeyNames = [...]string{"count", "last", "first", "trend"}

func (k SortKey) String() string {
	if k < 0 || k >= sortKeys {
		return fmt.Sprintf("SortKey(%d)", int(k))
	}
	return sortKeyNames[k]
}

// ParseSortKey reads a sort key's name (count, last, first, trend).
func ParseSortKey(s string) (SortKey, error) {
	for k, name := range sortKeyNames {
		if strings.EqualFold(strings.TrimSpace(s), name) {
			return SortKey(k), nil
		}
	}
	return SortCount, fmt.Errorf("%w: sort %q: want one of %s", ErrInvalidInput, s, strings.Join(sortKeyNames[:], ", "))
}

// SortSignatures orders sigs by k, in place, every key ending in the same
// tie-breaks (count, last seen, id): the order is total.
func SortSignatures(sigs []Signature, k SortKey) {
	sort.Slice(sigs, func(i, j int) bool { return signatureLess(&sigs[i], &sigs[j], k) })
}

func signatureLess(a, b *Signature, k SortKey) bool {
	switch k {
	case SortLast:
		if !a.LastSeen.Equal(b.LastSeen) {
			return a.LastSeen.After(b.LastSeen)
		}
	case SortFirst:
		if !a.FirstSeen.Equal(b.FirstSeen) {
			return a.FirstSeen.After(b.FirstSeen)
		}
	case SortTrend:
		if a.Change() != b.Change() {
			return a.Change() > b.Change()
		}
		if a.Recent != b.Recent {
			return a.Recent > b.Recent
		}
	}
	if a.Count != b.Count {
		return a.Count > b.Count
	}
	if !a.LastSeen.Equal(b.LastSeen) {
		return a.LastSeen.After(b.LastSeen)
	}
	return a.ID < b.ID
}

// GroupOptions: Now ends the last window of Window (0: DefaultTrendWindow);
// signatures first seen from NewSince (zero: its start) are New.
type GroupOptions struct {
	Now      time.Time
	Window   time.Duration
	NewSince time.Time
}

// Grouper folds failed jobs into signatures, whichever path reads the rows
// (a table scan, an index): rows may come in any order, and the newest row
// of a signature (the highest id; the first added among equals) gives its
// example message and id.
type Grouper struct {
	opts  GroupOptions
	start time.Time // the previous window's start: Now − 2 × Window
	byID  map[string]*sigState
}

type sigState struct {
	sig         Signature
	newestRow   int64
	queues      map[string]struct{}
	connections map[string]struct{}
}

// NewGrouper starts a grouping; o.Window must be within 0..MaxTrendWindow.
func NewGrouper(o GroupOptions) (*Grouper, error) {
	o.Window = cmp.Or(o.Window, DefaultTrendWindow)
	if o.Window < 0 || o.Window > MaxTrendWindow {
		return nil, fmt.Errorf("%w: trend window %s: want more than 0 and at most %s", ErrInvalidInput, o.Window, MaxTrendWindow)
	}
	if o.NewSince.IsZero() {
		o.NewSince = o.Now.Add(-o.Window)
	}
	return &Grouper{opts: o, start: o.Now.Add(-2 * o.Window), byID: map[string]*sigState{}}, nil
}

// bucket is the sparkline slice a failure time falls in, -1 before the
// previous window; times after Now (a worker's clock ahead) in the last.
func (g *Grouper) bucket(t time.Time) int {
	if t.IsZero() || t.Before(g.start) {
		return -1
	}
	per := SparkBuckets / 2
	off := t.Sub(g.start)
	w := 0
	if off >= g.opts.Window {
		w, off = 1, off-g.opts.Window
	}
	if off >= g.opts.Window {
		return SparkBuckets - 1
	}
	// off < Window ≤ MaxTrendWindow, so off·per stays far from overflow.
	return w*per + int(int64(off)*int64(per)/int64(g.opts.Window))
}

// Add folds one job in; normalize gives the normalised exception message,
// called only when the job is its signature's newest so far.
func (g *Grouper) Add(j Job, normalize func(string) string) {
	st, ok := g.byID[j.Signature]
	if !ok {
		st = &sigState{
			sig: Signature{ID: j.Signature, Class: j.Class, ExceptionClass: j.ExceptionClass,
				Message: normalize(j.ExceptionMessage), Example: j.ExceptionMessage, NewestID: j.ID,
				Spark: make([]int, SparkBuckets)},
			newestRow: j.RowID,
			queues:    map[string]struct{}{}, connections: map[string]struct{}{},
		}
		g.byID[j.Signature] = st
	} else if j.RowID > st.newestRow {
		st.newestRow, st.sig.Example, st.sig.NewestID = j.RowID, j.ExceptionMessage, j.ID
		st.sig.Message = normalize(j.ExceptionMessage)
	}
	st.sig.Count++
	// An unreadable failed_at (zero) counts, but is no sighting.
	if !j.FailedAt.IsZero() {
		if st.sig.FirstSeen.IsZero() || j.FailedAt.Before(st.sig.FirstSeen) {
			st.sig.FirstSeen = j.FailedAt
		}
		if st.sig.LastSeen.IsZero() || j.FailedAt.After(st.sig.LastSeen) {
			st.sig.LastSeen = j.FailedAt
		}
	}
	if b := g.bucket(j.FailedAt); b >= 0 {
		st.sig.Spark[b]++
		if b >= SparkBuckets/2 {
			st.sig.Recent++
		} else {
			st.sig.Previous++
		}
	}
	st.queues[j.Queue] = struct{}{}
	st.connections[j.Connection] = struct{}{}
}

// Signatures returns the signatures so far in order k (onlyNew: New ones).
func (g *Grouper) Signatures(k SortKey, onlyNew bool) []Signature {
	out := make([]Signature, 0, len(g.byID))
	for _, st := range g.byID {
		sig := st.sig
		sig.New = !sig.FirstSeen.IsZero() && !sig.FirstSeen.Before(g.opts.NewSince)
		if onlyNew && !sig.New {
			continue
		}
		sig.Queues = slices.Sorted(maps.Keys(st.queues))
		sig.Connections = slices.Sorted(maps.Keys(st.connections))
		sig.Spark = append([]int(nil), st.sig.Spark...)
		out = append(out, sig)
	}
	SortSignatures(out, k)
	return out
}

// GroupProgress is a scan in flight: signatures so far, and how far it came.
type GroupProgress struct {
	Scanned    int
	Fraction   float64 // 0..1 of the id range covered
	Signatures []Signature
	Done       bool
}

// GroupParams asks for the error signatures of the matching jobs.
type GroupParams struct {
	Query
	// ProgressEvery, when positive, has GroupSnapshots yield a snapshot
	// every ProgressEvery matching rows before the final one.
	ProgressEvery int
	// Window and NewSince are GroupOptions'; with OnlyNew only New signatures
	// (among the rows selected) are returned, in Sort order.
	Window   time.Duration
	NewSince time.Time
	OnlyNew  bool
	Sort     SortKey
}

// Group is GroupSnapshots' final list of signatures.
func (s *Service) Group(ctx context.Context, p GroupParams) ([]Signature, error) {
	g, err := Last(s.GroupSnapshots(ctx, p))
	return g.Signatures, err
}

// errStopped ends a scan whose reader stopped reading its snapshots.
var errStopped = errors.New("stopped")

// GroupSnapshots folds every matching failed job into signatures, in memory
// that grows with the signatures, not the table, and yields what it has as
// it goes (GroupParams.ProgressEvery), the last snapshot with Done; an
// error is yielded alone and ends it.
func (s *Service) GroupSnapshots(ctx context.Context, p GroupParams) iter.Seq2[GroupProgress, error] {
	return func(yield func(GroupProgress, error) bool) {
		fail := func(err error) { yield(GroupProgress{}, err) }
		if s.Now == nil {
			fail(fmt.Errorf("%w: grouping needs the service clock", ErrInvalidInput))
			return
		}
		if p.Sort < 0 || p.Sort >= sortKeys {
			fail(fmt.Errorf("%w: sort key %d", ErrInvalidInput, int(p.Sort)))
			return
		}
		g, err := NewGrouper(GroupOptions{Now: s.Now(), Window: p.Window, NewSince: p.NewSince})
		if err != nil {
			fail(err)
			return
		}
		var minID, maxID int64
		scanned := 0
		// The signature index, when it can answer, feeds the same grouper.
		fix, handled, err := s.groupFromIndex(ctx, p.Query, func(j Job) {
			g.Add(j, signature.Normalize)
			scanned++
		})
		if err != nil {
			fail(err)
			return
		}
		if !handled {
			// Failures repeat: one normalisation per message, not per row.
			cache := signature.NewCache(50000)
			whole := p.wholeRows()
			err = s.Store.ScanFailed(ctx, ScanParams{Filter: p.filter(), BatchSize: 2000, Full: whole}, func(r *FailedRow) error {
				if maxID == 0 {
					maxID = r.ID
				}
				minID = r.ID
				if !p.tagged(r) {
					return nil
				}
				j := JobFromRowWith(listingRow(r, whole), cache.Normalize)
				if !p.match(j) {
					return nil
				}
				g.Add(j, cache.Normalize)
				scanned++
				if p.ProgressEvery > 0 && scanned%p.ProgressEvery == 0 {
					frac := 0.0
					if maxID > 0 {
						frac = float64(maxID-minID) / float64(maxID)
					}
					if !yield(GroupProgress{Scanned: scanned, Fraction: frac, Signatures: s.redactSignatures(g.Signatures(p.Sort, p.OnlyNew))}, nil) {
						return errStopped
					}
				}
				return nil
			})
		}
		if errors.Is(err, errStopped) {
			return
		}
		out := g.Signatures(p.Sort, p.OnlyNew)
		if err == nil && handled {
			err = fix(out)
		}
		if err != nil {
			fail(err)
			return
		}
		yield(GroupProgress{Scanned: scanned, Fraction: 1, Signatures: s.redactSignatures(out), Done: true}, nil)
	}
}
