package sqltest

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sigindex"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
)

// indexCheckNow is the clock of the groupings IndexAgrees compares.
// (the day most fixtures fail on, so that trend windows hold some).
var indexCheckNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// maxCheckedPages bounds the pages of one signature IndexAgrees compares.
const maxCheckedPages = 4

// IndexAgrees groups the store's table with and without the signature
// index in dir, for the whole table and for queries on every field the
// index filters by (queue, connection, class, signature, since, until),
// and fails the test when any answer differs. A table the store cannot
// group (dropped, a closed store) is no comparison: it returns false.
// It returns the index's refresh stats.
func IndexAgrees(tb testing.TB, s *sqlstore.Store, dir string) (sigindex.Stats, bool) {
	tb.Helper()
	ctx := context.Background()
	scan := &triage.Service{Store: s, Now: func() time.Time { return indexCheckNow }, Location: s.Location()}
	all, err := scan.Group(ctx, triage.GroupParams{})
	if err != nil {
		return sigindex.Stats{}, false
	}
	ix := sigindex.New(sigindex.Options{Dir: dir, Source: s, Notice: func(n string) { tb.Logf("index notice: %s", n) }})
	st, err := ix.RefreshStats(ctx, s.Location())
	if errors.Is(err, triage.ErrIndexUnusable) {
		tb.Errorf("the index cannot serve a %s table: %v", s.Schema().Dialect, err)
		return st, false
	}
	if err != nil {
		tb.Errorf("index refresh: %v", err)
		return st, false
	}
	indexed := &triage.Service{Store: s, Now: scan.Now, Location: s.Location(), Index: ix}
	queries := []triage.Query{{}}
	if len(all) > 0 {
		first, last := all[0], all[len(all)-1]
		queries = append(queries,
			triage.Query{Signature: first.ID},
			triage.Query{Class: first.Class},
			triage.Query{Filter: triage.Filter{Queues: first.Queues}},
			triage.Query{Filter: triage.Filter{Connections: last.Connections}},
			triage.Query{Filter: triage.Filter{Since: first.LastSeen}},
			triage.Query{Filter: triage.Filter{Until: first.FirstSeen, Queues: last.Queues}},
			triage.Query{Filter: triage.Filter{Since: last.FirstSeen, Until: last.LastSeen}},
		)
	}
	var params []triage.GroupParams
	for _, q := range queries {
		params = append(params, triage.GroupParams{Query: q})
	}
	// Trends: windows, first sightings and every order.
	params = append(params,
		triage.GroupParams{Window: 6 * time.Hour, Sort: triage.SortTrend},
		triage.GroupParams{Window: 30 * time.Minute, Sort: triage.SortLast},
		triage.GroupParams{NewSince: indexCheckNow.Add(-90 * time.Minute), OnlyNew: true, Sort: triage.SortFirst},
	)
	groupsAgree(tb, scan, indexed, params, st, "")
	// The same index built by reading ranges of ids at once, as the first
	// pass over a large table does.
	ranged := sigindex.New(sigindex.Options{Dir: filepath.Join(dir, "ranges"), Source: s, RangeMinRows: 1,
		Notice: func(n string) { tb.Logf("index notice: %s", n) }})
	rst, err := ranged.RefreshStats(ctx, s.Location())
	if err != nil {
		tb.Errorf("index refresh by ranges: %v", err)
		return st, false
	}
	if rst.Rows != st.Rows {
		tb.Errorf("the index read by ranges holds %d rows, in one pass %d", rst.Rows, st.Rows)
	}
	groupsAgree(tb, scan, &triage.Service{Store: s, Now: scan.Now, Location: s.Location(), Index: ranged}, params, rst, " read by ranges")
	// failed --signature: pages of two, cursor by cursor, for the biggest
	// and the smallest signatures (a scan per page keeps it to a few).
	if len(all) > 2 {
		all = []triage.Signature{all[0], all[1], all[len(all)-1]}
	}
	for _, sig := range all {
		var cursor [2]string
		for page := 0; page < maxCheckedPages; page++ {
			var got [2]string
			for k, svc := range []*triage.Service{scan, indexed} {
				pg, err := svc.List(ctx, triage.ListParams{Query: triage.Query{Signature: sig.ID}, Limit: 2, Cursor: cursor[k]})
				if err != nil {
					tb.Errorf("list signature %s: %v", sig.ID, err)
					return st, true
				}
				b, _ := json.Marshal(pg)
				got[k], cursor[k] = string(b), pg.Next
			}
			if got[0] != got[1] {
				tb.Errorf("signature %s page %d differs with the index:\n with: %s\n scan: %s", sig.ID, page, got[1], got[0])
				break
			}
			if cursor[0] == "" {
				break
			}
		}
	}
	return st, true
}

// groupsAgree compares each grouping with and without the index.
func groupsAgree(tb testing.TB, scan, indexed *triage.Service, params []triage.GroupParams, st sigindex.Stats, how string) {
	tb.Helper()
	ctx := context.Background()
	for _, p := range params {
		q := p.Query
		want, err := scan.Group(ctx, p)
		if err != nil {
			tb.Errorf("group %+v without the index: %v", q, err)
			continue
		}
		got, err := indexed.Group(ctx, p)
		if err != nil {
			tb.Errorf("group %+v with the index%s: %v", q, how, err)
			continue
		}
		wj, _ := json.Marshal(want)
		gj, _ := json.Marshal(got)
		if string(wj) != string(gj) {
			tb.Errorf("group %+v differs with the index%s (%+v):\n with: %s\n scan: %s", q, how, st, gj, wj)
		}
	}
}
