// Package memstore holds failed jobs in memory and reads them as the SQL
// store reads failed_jobs: the filters, keyset scans, listing heads and
// lookups of triage.Store, written once for the two stores kept in memory,
// filestore (a snapshot of the file driver) and triagetest's fake. It
// holds no lock: a store that changes its rows guards them itself.
package memstore

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jobtriage/jobtriage/triage"
)

// Row is one failed job.
type Row struct {
	ID                                          int64
	UUID, Connection, Queue, Payload, Exception string
	FailedAt                                    time.Time // zero when unknown
	// Wall is failed_at as Y-m-d H:i:s in the app timezone, compared as text
	// by Since and Until the way SQL compares the failed_at column; "" when
	// unknown, which no time bound matches (as SQL NULL matches none).
	Wall string
}

// Table is failed jobs in ascending id.
type Table struct {
	Rows []Row
	Loc  *time.Location // the app timezone of Wall
	// UnicodeFold: Search and PayloadContains fold non-ASCII letters by
	// Unicode lower-casing too, as PostgreSQL's ILIKE and MySQL's _ci
	// collations do; without it only ASCII letters fold, as SQLite's LIKE.
	UnicodeFold bool
	// Where names the table in a lookup's miss ("" names nothing).
	Where string
}

// Failed is a fresh FailedRow of r: whole texts, or with full false the
// listing's: the whole payload, as SQLite's (payload.JobClass cuts the
// class from it wherever its keys sit), and the top exception's head.
func (r *Row) Failed(full bool) *triage.FailedRow {
	exc := r.Exception
	if !full {
		exc = triage.TopExceptionHead(exc)
	}
	return &triage.FailedRow{ID: r.ID, UUID: r.UUID, Connection: r.Connection, Queue: r.Queue,
		FailedAt: r.FailedAt, Payload: []byte(r.Payload), Exception: exc}
}

// ScanFailed is triage.Store's: newest (highest id) first below
// BeforeID (0: from the newest), or oldest first above AfterID with
// Ascending, at most Limit rows, as the SQL store's keyset. BatchSize is
// ignored. ctx is looked at before each row is handed to fn, and each
// row is fn's own: changing it does not change the table.
func (t *Table) ScanFailed(ctx context.Context, p triage.ScanParams, fn func(*triage.FailedRow) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m := t.Matcher(p.Filter)
	lo, hi := 0, len(t.Rows) // the rows the keyset leaves, [lo, hi)
	if p.Ascending {
		lo = sort.Search(hi, func(i int) bool { return t.Rows[i].ID > p.AfterID })
	} else if p.BeforeID != 0 {
		hi = t.search(p.BeforeID)
	}
	rows := slices.Backward(t.Rows[lo:hi])
	if p.Ascending {
		rows = slices.All(t.Rows[lo:hi])
	}
	seen := 0
	for i := range rows {
		r := &t.Rows[lo+i]
		if !m.Match(r) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(r.Failed(p.Full)); err != nil {
			return err
		}
		if seen++; p.Limit > 0 && seen >= p.Limit {
			return nil
		}
	}
	return nil
}

// search is the index of the first row with an id of at least id.
func (t *Table) search(id int64) int {
	return sort.Search(len(t.Rows), func(i int) bool { return t.Rows[i].ID >= id })
}

// Count is triage.Store's.
func (t *Table) Count(ctx context.Context, f triage.Filter) (int64, error) {
	m := t.Matcher(f)
	var n int64
	for i := range t.Rows {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if m.Match(&t.Rows[i]) {
			n++
		}
	}
	return n, nil
}

// Find is the index of the row ref names, by uuid (the newest row with
// it, as Laravel's find() over the file) or by id, or -1.
func (t *Table) Find(ref triage.Ref) int {
	if ref.UUID != "" {
		for i := len(t.Rows) - 1; i >= 0; i-- {
			if t.Rows[i].UUID == ref.UUID {
				return i
			}
		}
		return -1
	}
	if i := t.search(ref.ID); ref.ID > 0 && i < len(t.Rows) && t.Rows[i].ID == ref.ID {
		return i
	}
	return -1
}

// GetFailed is triage.Store's.
func (t *Table) GetFailed(ctx context.Context, ref triage.Ref) (*triage.FailedRow, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if ref.UUID == "" && ref.ID <= 0 {
		return nil, fmt.Errorf("%w: empty failed job id", triage.ErrNotFound)
	}
	if i := t.Find(ref); i >= 0 {
		return t.Rows[i].Failed(true), nil
	}
	where := ""
	if t.Where != "" {
		where = " in " + t.Where
	}
	return nil, fmt.Errorf("%w: no failed job with id %s%s", triage.ErrNotFound, ref, where)
}

// ResolveRefs is triage.Store's: misses are left out.
func (t *Table) ResolveRefs(ctx context.Context, refs []triage.Ref) (map[triage.Ref]int64, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := map[triage.Ref]int64{}
	for _, r := range refs {
		if i := t.Find(r); i >= 0 {
			out[r] = t.Rows[i].ID
		}
	}
	return out, nil
}

// Matcher is a Filter prepared for one pass, as the SQL store's WHERE.
type Matcher struct {
	f            triage.Filter
	search       needle
	contains     []needle
	since, until string // wall-clock bounds, "" when unset
}

// Matcher prepares f.
func (t *Table) Matcher(f triage.Filter) Matcher {
	m := Matcher{f: f, search: t.needle(f.Search)}
	for _, p := range f.PayloadContains {
		m.contains = append(m.contains, t.needle(p))
	}
	if !f.Since.IsZero() {
		m.since = f.Since.In(t.Loc).Format(triage.FailedAtLayout)
	}
	if !f.Until.IsZero() {
		m.until = f.Until.In(t.Loc).Format(triage.FailedAtLayout)
	}
	return m
}

// Match reports whether the filter selects r.
func (m *Matcher) Match(r *Row) bool {
	switch {
	case m.f.MinID != 0 && r.ID < m.f.MinID, m.f.MaxID != 0 && r.ID > m.f.MaxID:
		return false
	case len(m.f.Queues) > 0 && !slices.Contains(m.f.Queues, r.Queue),
		len(m.f.Connections) > 0 && !slices.Contains(m.f.Connections, r.Connection):
		return false
	case m.since != "" && (r.Wall == "" || r.Wall < m.since), m.until != "" && (r.Wall == "" || r.Wall > m.until):
		return false
	}
	for _, c := range m.contains {
		if !c.in(r.Payload) {
			return false
		}
	}
	return m.search.in(r.Payload) || m.search.in(r.Exception)
}

// needle is a case-insensitive substring, matched as the SQL store's LIKE
// matches it (see Table.UnicodeFold). Wildcards are literal.
type needle struct {
	lower string // "" matches everything
	ascii bool   // fold ASCII letters only
}

func (t *Table) needle(s string) needle {
	if t.UnicodeFold && strings.ContainsFunc(s, func(r rune) bool { return r >= utf8.RuneSelf }) {
		return needle{lower: strings.ToLower(s)}
	}
	return needle{lower: asciiLower(s), ascii: true}
}

func (n needle) in(hay string) bool {
	switch {
	case n.lower == "":
		return true
	case n.ascii:
		hay = asciiLower(hay)
	default:
		hay = strings.ToLower(hay)
	}
	return strings.Contains(hay, n.lower)
}

// asciiLower lower-cases ASCII letters, byte by byte: other bytes, valid
// UTF-8 or not, stay as they are.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
