package tui

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/jobtriage/jobtriage/triage"
)

// sigList is the signatures page: one row per error signature, streamed in
// from a Group scan. Marks of signatures that leave the list are dropped.
type sigList struct {
	rows[triage.Signature]
	seq        int
	loading    bool // a scan is running
	refreshing bool // the running scan replaces items only when it ends
	loaded     bool // a scan has ended at least once
	progress   triage.GroupProgress
	err        error
	// stale is why the rows on screen are older than the last refresh (it
	// failed), until one succeeds; loadedAt is when the rows were read.
	stale    error
	loadedAt time.Time
	// order is how items are sorted; every snapshot is re-sorted.
	order sortOrder
}

// sortOrder is the signatures page's sort, cycled by s: the keys of
// failed --group --sort, in the same order.
type sortOrder int

const (
	sortCount     sortOrder = iota // biggest first, as triage returns them (the default)
	sortLastSeen                   // most recent failure first
	sortFirstSeen                  // newest signature first: what just started failing
	sortTrend                      // biggest rise since the window before first
	sortOrders
)

func (o sortOrder) String() string {
	return [...]string{"count", "last seen", "first seen", "trend"}[o]
}

// sorted returns sigs in order o, with the tie-breaks failed --group uses;
// the input (a backend snapshot) is not changed.
func (o sortOrder) sorted(sigs []triage.Signature) []triage.Signature {
	out := append([]triage.Signature(nil), sigs...)
	triage.SortSignatures(out, [...]triage.SortKey{triage.SortCount, triage.SortLast, triage.SortFirst, triage.SortTrend}[o])
	return out
}

// drop applies an action's result at once: each signature loses the jobs
// the action removed, and leaves the list when none are left, so the
// screen never shows counts the database no longer has while the refresh
// that confirms them runs.
func (l *sigList) drop(removed map[string]int) {
	l.rows.drop(func(s *triage.Signature) bool {
		n, ok := removed[s.ID]
		s.Count -= n
		return !ok || s.Count > 0
	})
}

func (l *sigList) startScan(seq int, keep bool) {
	l.seq = seq
	l.loading = true
	l.refreshing = keep
	l.err = nil
	l.progress = triage.GroupProgress{}
	if !keep {
		l.items, l.cursor, l.loaded = nil, 0, false
	}
}

func (l *sigList) fail(err error) {
	l.loading = false
	if l.refreshing {
		l.stale = err
	} else {
		l.err = err
	}
	l.refreshing = false
}

// apply takes a snapshot read at now; the cursor stays on the signature it
// was on.
func (l *sigList) apply(p triage.GroupProgress, now time.Time) {
	l.progress = p
	if p.Done {
		l.loading, l.refreshing, l.loaded = false, false, true
		l.stale, l.loadedAt = nil, now
	} else if l.refreshing {
		return
	}
	l.set(l.order.sorted(p.Signatures))
	if p.Done {
		for id := range l.marked {
			if !slices.ContainsFunc(l.items, func(s triage.Signature) bool { return s.ID == id }) {
				delete(l.marked, id)
			}
		}
	}
}

// move applies a list key to a cursor over n items with a page of rows;
// ok is false when msg is not a movement key.
func (k listKeys) move(msg tea.KeyMsg, cursor, n, rows int) (int, bool) {
	rows = max(rows, 1)
	switch {
	case key.Matches(msg, k.Up):
		cursor--
	case key.Matches(msg, k.Down):
		cursor++
	case key.Matches(msg, k.PageUp):
		cursor -= rows
	case key.Matches(msg, k.PageDown):
		cursor += rows
	case key.Matches(msg, k.Home):
		cursor = 0
	case key.Matches(msg, k.End):
		cursor = n - 1
	default:
		return cursor, false
	}
	return clampCursor(cursor, n), true
}

func (m Model) signaturesKey(msg tea.KeyMsg) (Model, tea.Cmd) {
	k := m.keys.Signatures
	if c, ok := k.move(msg, m.sigs.cursor, len(m.sigs.items), m.tableRows()); ok {
		m.sigs.cursor = c
		return m, nil
	}
	s, ok := m.sigs.current()
	switch {
	case key.Matches(msg, k.Filter):
		return m.openFilter()
	case key.Matches(msg, k.Open) && ok:
		return m.openJobs(s)
	case key.Matches(msg, k.Mark):
		m.sigs.toggle()
	case key.Matches(msg, k.Sort):
		m.sigs.order = (m.sigs.order + 1) % sortOrders
		m.sigs.set(m.sigs.order.sorted(m.sigs.items))
		m.status = statusLine{text: "Sorted by " + m.sigs.order.String() + "."}
	case key.Matches(msg, k.Copy) && ok:
		return m, copyCmd(m.clipboard, "signature id", s.ID)
	case key.Matches(msg, k.Clear) && len(m.sigs.marked) > 0:
		m.sigs.marked = nil
		m.status = statusLine{text: "Marks cleared."}
	case key.Matches(msg, k.Clear) && !m.query.Empty():
		nm, cmd := m.applyFilter(triage.Query{})
		nm.status = statusLine{text: "Filter cleared."}
		return nm, cmd
	case key.Matches(msg, k.Retry):
		return m, m.askSignatures(actionRetry, m.sigs.chosen(false), m.sigs.loading)
	case key.Matches(msg, k.Forget):
		return m, m.askSignatures(actionForget, m.sigs.chosen(false), m.sigs.loading)
	}
	return m, nil
}

// tableRows is how many data rows a table shows under its header.
func (m Model) tableRows() int { return m.bodyHeight() - 1 }

// signatureColumns: the first four are the sort keys, in sortOrder order;
// their Min leaves room for the sort arrow. By rank, a narrow terminal
// keeps the count, the job's class and the exception before the times and
// the trend (and the column sorted by, whichever it is).
var signatureColumns = []column{
	{Title: "COUNT", Min: 7, Right: true, Rank: 0},
	{Title: "LAST SEEN", Min: 10, Rank: 3},
	{Title: "FIRST SEEN", Min: 11, Rank: 5},
	{Title: "TREND", Min: trendWidth, Rank: 4},
	{Title: "JOB", Min: 12, Max: 40, Flex: true, Weight: 2, Rank: 1},
	{Title: "EXCEPTION", Min: 16, Flex: true, Weight: 3, Rank: 2},
	{Title: "QUEUES", Min: 8, Max: 24, Flex: true, Rank: 6},
}

// Indexes into signatureColumns of the columns sized by their content.
const (
	sigJobColumn = iota + 4
	sigExceptionColumn
	sigQueuesColumn
)

// exceptionWant is the room the exception is reserved before the lower
// ranks get theirs; it takes any spare room after.
const exceptionWant = 32

func (m Model) signaturesBody(height int) []string {
	l := m.sigs
	switch {
	case len(l.items) == 0 && l.err != nil:
		return m.errorBody("Could not read failed jobs", l.err, height)
	case len(l.items) == 0 && l.loading:
		return []string{"", "  " + m.spin.View() + " Scanning failed jobs, newest first…"}
	case len(l.items) == 0:
		return m.emptyBody()
	}
	cols := append([]column(nil), signatureColumns...)
	cols[l.order].Title += sortArrow // the first columns are the sort keys, in order
	cols[l.order].Rank = cols[0].Rank
	var classes, exceptions, queues []string
	for _, s := range l.items {
		classes = append(classes, s.Class)
		exceptions = append(exceptions, exceptionText(s.ExceptionClass, s.Example))
		queues = append(queues, strings.Join(s.Queues, ","))
	}
	// The class and the queues never need more than their longest; the
	// exception takes the spare room.
	fitContent(&cols[sigJobColumn], classes)
	fitContent(&cols[sigQueuesColumn], queues)
	cols[sigExceptionColumn].Want = min(contentWidth(cols[sigExceptionColumn].Title, exceptions), exceptionWant)
	now := m.now()
	return m.table(cols, len(l.items), l.cursor, height-1, func(i int, widths []int) string {
		s := l.items[i]
		_, marked := l.marked[s.ID]
		return m.tableLine(tableRow(cols, widths, []string{
			count(s.Count), ago(now, s.LastSeen), ago(now, s.FirstSeen), trendText(s),
			classTail(s.Class, widths[sigJobColumn]), exceptionText(s.ExceptionClass, s.Example),
			strings.Join(s.Queues, ","),
		}), i == l.cursor, marked, s.New)
	})
}

// trendWidth fits a sparkline of every slice, a space and a change as
// Change writes it (at most five cells).
const trendWidth = triage.SparkBuckets + 6

// trendText is a signature's trend: the sparkline over the two windows and
// the change from the previous window to the last.
func trendText(s triage.Signature) string { return Sparkline(s.Spark) + " " + Change(s.Change()) }

// sortArrow marks the column the signatures are sorted by (descending).
const sortArrow = "▼"

// exceptionText is "Short: message" with the exception's namespace dropped.
func exceptionText(class, message string) string {
	short := class[strings.LastIndexByte(class, '\\')+1:]
	if message == "" || short == "" {
		return short + message
	}
	return short + ": " + message
}

func (m Model) emptyBody() []string {
	if !m.query.Empty() {
		return []string{"", "  No failed jobs match the filter (" + filterSummary(m.query) + ").",
			"  Press / to change it."}
	}
	return []string{"", "  No failed jobs. The failed_jobs table is empty."}
}

// scanStatus is the header's note on a running scan.
func (m Model) scanStatus() string {
	p := m.sigs.progress
	if !m.sigs.loading {
		return ""
	}
	if p.Scanned == 0 {
		return m.spin.View() + " scanning"
	}
	return m.spin.View() + " scanning " + strconv.Itoa(int(p.Fraction*100)) + "% · " + count(p.Scanned) + " jobs"
}

// totalText is the header's failed count: exact once a scan ended, a lower
// bound while the first one streams.
func (m Model) totalText() string {
	if len(m.sigs.items) == 0 && !m.sigs.loaded {
		return "… failed"
	}
	n := total(m.sigs.items)
	if !m.sigs.loaded {
		return "≥" + count(n) + " failed"
	}
	if !m.query.Empty() {
		return count(n) + " matching"
	}
	return count(n) + " failed"
}
