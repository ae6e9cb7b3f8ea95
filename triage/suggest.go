package triage

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jobtriage/jobtriage/triage/signature"
)

// SuggestRows is how many of the newest failed jobs completion reads: what
// fails now, within its timeout; SuggestIDs the ids offered.
const (
	SuggestRows = 2000
	SuggestIDs  = 50
)

// Suggestion is one completion candidate and what it stands for.
type Suggestion struct {
	Value       string
	Description string
}

// Suggestions are what shell completion offers: queues, connections and
// classes by name, signatures by count, ids newest first.
type Suggestions struct {
	Queues, Connections, Signatures, IDs, Classes []Suggestion
}

// Suggest reads the newest rows (0: SuggestRows) of failed_jobs and returns
// the names in them, with the app's own queue connections added.
func (s *Service) Suggest(ctx context.Context, rows int) (Suggestions, error) {
	if rows <= 0 {
		rows = SuggestRows
	}
	queues, conns, classes, sigs := map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}
	var out Suggestions // Signatures in the order first seen (newest first), until sorted
	cache := signature.NewCache(rows)
	err := s.Store.ScanFailed(ctx, ScanParams{Limit: rows, BatchSize: 500}, func(r *FailedRow) error {
		j := JobFromRowWith(r, cache.Normalize)
		queues[j.Queue]++
		conns[j.Connection]++
		classes[j.Class]++
		if sigs[j.Signature]++; sigs[j.Signature] == 1 {
			out.Signatures = append(out.Signatures, Suggestion{Value: j.Signature, Description: describeJob(j)})
		}
		if len(out.IDs) < SuggestIDs {
			out.IDs = append(out.IDs, Suggestion{Value: j.ID, Description: j.Queue + " · " + describeJob(j)})
		}
		return nil
	})
	if err != nil {
		return Suggestions{}, err
	}
	// The app's own names are offered too, with no recent failures unless
	// counted above (counted leaves out "").
	for _, c := range s.MonitorConnections {
		conns[c.Name] += 0
		queues[c.DefaultQueue] += 0
	}
	out.Queues = counted(queues)
	out.Connections = counted(conns)
	out.Classes = counted(classes)
	sort.SliceStable(out.Signatures, func(a, b int) bool { return sigs[out.Signatures[a].Value] > sigs[out.Signatures[b].Value] })
	return out, nil
}

// describeJob is "Class · ExceptionClass: message", as failed --group's.
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

// Names are the queue, connection and class names a command selects jobs by;
// Known queues exist otherwise (a monitor counted them).
type Names struct {
	Queues, Connections []string
	Class               string
	Known               []string
}

// maxHints is how many close names an UnknownNameError offers.
const maxHints = 3

// UnknownNameError is a name no failed job, queued job or connection has. It
// is ErrNotFound, not "nothing matched".
type UnknownNameError struct {
	Kind  string // "queue", "connection" or "class"
	Name  string
	Hints []string // the closest existing names, closest first
}

// Sentence is Error without its ErrNotFound prefix.
func (e *UnknownNameError) Sentence() string {
	var s string
	switch e.Kind {
	case "class":
		s = fmt.Sprintf("no job class matches %q: no failed job's class contains it", e.Name)
	case "connection":
		s = fmt.Sprintf("no connection %q: no failed job and no configured queue connection has that name", e.Name)
	default:
		s = fmt.Sprintf("no queue %q: no failed job, no queued job and no configured queue has that name", e.Name)
	}
	if len(e.Hints) == 0 {
		return s + "; check the spelling"
	}
	h := e.Hints
	if len(h) == 1 {
		return s + "; did you mean " + h[0] + "?"
	}
	return s + "; did you mean " + strings.Join(h[:len(h)-1], ", ") + " or " + h[len(h)-1] + "?"
}

func (e *UnknownNameError) Error() string        { return ErrNotFound.Error() + ": " + e.Sentence() }
func (e *UnknownNameError) Is(target error) bool { return target == ErrNotFound }

// CheckNames returns an *UnknownNameError for the first of n's names that
// nothing has; a name that exists never ends the check of the ones after it. It reads the configuration, then one row of failed_jobs per
// name, then the jobs table, and suggestions only for an unknown name.
func (s *Service) CheckNames(ctx context.Context, n Names) error {
	configured := map[string]bool{}
	for _, c := range s.MonitorConnections {
		configured["connection:"+c.Name] = true
		configured["queue:"+c.DefaultQueue] = true
	}
	for _, q := range n.Known {
		configured["queue:"+q] = true
	}
	for _, q := range n.Queues {
		if configured["queue:"+q] {
			continue
		}
		ok, err := s.hasFailed(ctx, Query{Filter: Filter{Queues: []string{q}}})
		if err == nil && !ok {
			ok, err = s.hasQueued(ctx, q)
		}
		if err != nil {
			return err
		}
		if !ok {
			return s.unknownName(ctx, "queue", q, n.Known)
		}
	}
	for _, c := range n.Connections {
		if configured["connection:"+c] {
			continue
		}
		ok, err := s.hasFailed(ctx, Query{Filter: Filter{Connections: []string{c}}})
		if err != nil {
			return err
		}
		if !ok {
			return s.unknownName(ctx, "connection", c, nil)
		}
	}
	if n.Class != "" {
		if ok, err := s.hasFailed(ctx, Query{Class: n.Class}); ok || err != nil {
			return err
		}
		return s.unknownName(ctx, "class", n.Class, nil)
	}
	return nil
}

// hasFailed reports whether any failed job matches q.
func (s *Service) hasFailed(ctx context.Context, q Query) (bool, error) {
	page, err := s.List(ctx, ListParams{Query: q, Limit: 1})
	return len(page.Jobs) > 0, err
}

// hasQueued reports whether the jobs table (if any) holds rows of queue.
func (s *Service) hasQueued(ctx context.Context, queue string) (bool, error) {
	src, ok := s.MonitorSource()
	if !ok {
		return false, nil
	}
	stats, err := src.QueueStats(ctx, QueueStatsParams{Queues: []string{queue}, Now: s.Now()})
	if errors.Is(err, ErrMissingTable) {
		return false, nil // no jobs table: nothing is queued there
	}
	for _, st := range stats {
		if st.Size > 0 {
			return true, err
		}
	}
	return false, err
}

// unknownName builds the error for name, with the closest of the names
// that exist: the recent failures' and the configured ones, plus extra.
func (s *Service) unknownName(ctx context.Context, kind, name string, extra []string) error {
	sg, err := s.Suggest(ctx, 0)
	if err != nil {
		return err
	}
	have := map[string][]Suggestion{"queue": sg.Queues, "connection": sg.Connections, "class": sg.Classes}[kind]
	for _, h := range have {
		extra = append(extra, h.Value)
	}
	return &UnknownNameError{Kind: kind, Name: name, Hints: closestNames(name, extra, kind == "class")}
}

// closestNames are up to maxHints names within a third of name's length in
// edits (at least one), case-insensitive, closest first; a class is also
// compared by its base name (Legcy is close to App\Jobs\Legacy).
func closestNames(name string, names []string, class bool) []string {
	type cand struct {
		name string
		dist int
	}
	want := strings.ToLower(name)
	limit := max(1, len([]rune(want))/3)
	var cs []cand
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] || n == "" {
			continue
		}
		seen[n] = true
		d := editDistance(want, strings.ToLower(n))
		if class {
			base := n[strings.LastIndex(n, `\`)+1:]
			d = min(d, editDistance(want, strings.ToLower(base)))
		}
		if d <= limit {
			cs = append(cs, cand{n, d})
		}
	}
	slices.SortFunc(cs, func(a, b cand) int { return cmp.Or(cmp.Compare(a.dist, b.dist), strings.Compare(a.name, b.name)) })
	var out []string
	for i := 0; i < len(cs) && i < maxHints; i++ {
		out = append(out, cs[i].name)
	}
	return out
}

// editDistance is the optimal-string-alignment distance of a and b: each
// insertion, deletion, substitution and swap of neighbours is one edit.
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}

// CheckMonitorNames is CheckNames for a monitor's queues: one report r counted
// jobs or failures on exists; Blind ones are not judged.
func CheckMonitorNames(ctx context.Context, st MonitorSource, p MonitorParams, r Report) error {
	blind := map[string]bool{}
	for _, c := range p.Connections {
		blind[c.Name] = c.Blind != ""
	}
	var n Names
	for _, q := range r.Queues {
		if q.Size > 0 || q.Failed > 0 {
			n.Known = append(n.Known, q.Queue)
		}
	}
	for _, ref := range p.Queues {
		if blind[cmp.Or(ref.Connection, p.DefaultConnection)] {
			continue
		}
		n.Queues = append(n.Queues, ref.Queue)
		if ref.Connection != "" {
			n.Connections = append(n.Connections, ref.Connection)
		}
	}
	svc := &Service{Store: st, MonitorConnections: p.Connections, Now: func() time.Time { return r.At }}
	return svc.CheckNames(ctx, n)
}
