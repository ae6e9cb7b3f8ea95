package triage

import (
	"context"
	"sort"
	"strconv"

	"github.com/jobtriage/jobtriage/triage/signature"
)

// SuggestRows is how many of the newest failed jobs shell completion reads:
// enough to see every queue and signature that is failing now, few enough
// to answer within the completion's timeout on any table.
const SuggestRows = 2000

// SuggestIDs is how many job ids completion offers, newest first.
const SuggestIDs = 50

// Suggestion is one completion candidate and what it stands for.
type Suggestion struct {
	Value       string
	Description string
}

// Suggestions are the names shell completion offers, each list sorted:
// queues and connections by name, signatures by count, ids newest first.
type Suggestions struct {
	Queues      []Suggestion
	Connections []Suggestion
	Signatures  []Suggestion
	IDs         []Suggestion
}

// Suggest reads the newest rows (SuggestRows when rows is 0) of failed_jobs
// and returns the queue names, connection names, signature ids and job ids
// in them, with the app's own queue connections added.
func (s *Service) Suggest(ctx context.Context, rows int) (Suggestions, error) {
	if rows <= 0 {
		rows = SuggestRows
	}
	queues, conns := map[string]int{}, map[string]int{}
	type sig struct {
		desc  string
		count int
		order int
	}
	sigs := map[string]*sig{}
	var out Suggestions
	cache := signature.NewCache(rows)
	err := s.Store.ScanFailed(ctx, ScanParams{Limit: rows, BatchSize: 500}, func(r *FailedRow) error {
		j := jobFromRow(r, cache.Normalize)
		queues[j.Queue]++
		conns[j.Connection]++
		if st, ok := sigs[j.Signature]; ok {
			st.count++
		} else {
			sigs[j.Signature] = &sig{desc: describeJob(j), count: 1, order: len(sigs)}
		}
		if len(out.IDs) < SuggestIDs {
			out.IDs = append(out.IDs, Suggestion{Value: j.ID, Description: j.Queue + " · " + describeJob(j)})
		}
		return nil
	})
	if err != nil {
		return Suggestions{}, err
	}
	for _, c := range s.MonitorConnections {
		if _, ok := conns[c.Name]; !ok && c.Name != "" {
			conns[c.Name] = 0
		}
		if _, ok := queues[c.DefaultQueue]; !ok && c.DefaultQueue != "" {
			queues[c.DefaultQueue] = 0
		}
	}
	out.Queues = counted(queues)
	out.Connections = counted(conns)
	ids := make([]string, 0, len(sigs))
	for id := range sigs {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(a, b int) bool {
		x, y := sigs[ids[a]], sigs[ids[b]]
		if x.count != y.count {
			return x.count > y.count
		}
		return x.order < y.order // newest first among equals
	})
	for _, id := range ids {
		out.Signatures = append(out.Signatures, Suggestion{Value: id, Description: sigs[id].desc})
	}
	return out, nil
}

// describeJob is "Class · ExceptionClass: message", as failed --group's
// second line says it.
func describeJob(j Job) string {
	d := j.Class
	if j.ExceptionClass != "" {
		d += " · " + j.ExceptionClass
		if j.ExceptionMessage != "" {
			d += ": " + j.ExceptionMessage
		}
	}
	return d
}

// counted sorts names, each described by its count of recent failures.
func counted(m map[string]int) []Suggestion {
	names := make([]string, 0, len(m))
	for n := range m {
		if n != "" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	out := make([]Suggestion, len(names))
	for i, n := range names {
		desc := "no recent failures"
		switch c := m[n]; {
		case c == 1:
			desc = "1 recent failure"
		case c > 1:
			desc = strconv.Itoa(c) + " recent failures"
		}
		out[i] = Suggestion{Value: n, Description: desc}
	}
	return out
}
