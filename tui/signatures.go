package tui

import (
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/jobtriage/jobtriage/triage"
)

// sigList is the signatures page: one row per error signature, streamed in
// from a Group scan.
type sigList struct {
	seq        int
	items      []triage.Signature
	cursor     int
	offset     int
	loading    bool // a scan is running
	refreshing bool // the running scan replaces items only when it ends
	loaded     bool // a scan has ended at least once
	progress   triage.GroupProgress
	err        error
}

func (l *sigList) startScan(seq int, keep bool) {
	l.seq = seq
	l.loading = true
	l.refreshing = keep
	l.err = nil
	l.progress = triage.GroupProgress{}
	if !keep {
		l.items = nil
		l.cursor, l.offset = 0, 0
		l.loaded = false
	}
}

func (l *sigList) fail(err error) {
	l.loading = false
	if !l.refreshing {
		l.err = err
	}
	l.refreshing = false
}

// apply takes a snapshot; the cursor stays on the signature it was on.
func (l *sigList) apply(p triage.GroupProgress) {
	l.progress = p
	if p.Done {
		l.loading, l.refreshing, l.loaded = false, false, true
	} else if l.refreshing {
		return
	}
	var keepID string
	if l.cursor < len(l.items) {
		keepID = l.items[l.cursor].ID
	}
	l.items = p.Signatures
	l.cursor = clampCursor(l.cursor, len(l.items))
	for i, s := range l.items {
		if s.ID == keepID {
			l.cursor = i
			break
		}
	}
}

func (l sigList) selected() (triage.Signature, bool) {
	if l.cursor < 0 || l.cursor >= len(l.items) {
		return triage.Signature{}, false
	}
	return l.items[l.cursor], true
}

// move applies a list key to a cursor over n items with a page of rows;
// ok is false when msg is not a movement key.
func (k listKeys) move(msg tea.KeyMsg, cursor, n, rows int) (int, bool) {
	if rows < 1 {
		rows = 1
	}
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

func (m Model) signaturesKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	k := m.keys.Signatures
	if c, ok := k.move(msg, m.sigs.cursor, len(m.sigs.items), m.tableRows()); ok {
		m.sigs.cursor = c
		return m, nil
	}
	switch {
	case key.Matches(msg, k.Filter):
		return m.openFilter()
	case key.Matches(msg, k.Open):
		s, ok := m.sigs.selected()
		if !ok {
			return m, nil
		}
		return m.openJobs(s)
	case key.Matches(msg, k.Retry):
		if s, ok := m.sigs.selected(); ok {
			m.askSignature(actionRetry, s, m.sigs.loading)
		}
	case key.Matches(msg, k.Forget):
		if s, ok := m.sigs.selected(); ok {
			m.askSignature(actionForget, s, m.sigs.loading)
		}
	}
	return m, nil
}

// tableRows is how many data rows a table shows under its header.
func (m Model) tableRows() int { return m.bodyHeight() - 1 }

var signatureColumns = []column{
	{Title: "COUNT", Min: 7, Right: true},
	{Title: "LAST SEEN", Min: 9},
	{Title: "FIRST SEEN", Min: 10},
	{Title: "JOB", Min: 14, Max: 40, Flex: true, Weight: 2},
	{Title: "EXCEPTION", Min: 20, Flex: true, Weight: 3},
	{Title: "QUEUES", Min: 8, Max: 24, Flex: true},
}

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
	widths := fitColumns(signatureColumns, m.width)
	lines := []string{m.st.TableHead.Render(tableHeader(signatureColumns, widths))}
	rows := height - 1
	l.offset = scrollOffset(l.offset, l.cursor, rows, len(l.items))
	now := m.now()
	for i := l.offset; i < len(l.items) && i < l.offset+rows; i++ {
		s := l.items[i]
		row := tableRow(signatureColumns, widths, []string{
			count(s.Count), ago(now, s.LastSeen), ago(now, s.FirstSeen),
			classTail(s.Class, widths[3]), exceptionText(s.ExceptionClass, s.Example),
			strings.Join(s.Queues, ","),
		})
		if i == l.cursor {
			row = m.st.Selected.Render(row)
		}
		lines = append(lines, row)
	}
	return lines
}

// exceptionText is "Short: message" with the exception's namespace dropped.
func exceptionText(class, message string) string {
	short := class
	if i := strings.LastIndexByte(class, '\\'); i >= 0 {
		short = class[i+1:]
	}
	if message == "" {
		return short
	}
	if short == "" {
		return message
	}
	return short + ": " + message
}

func (m Model) emptyBody() []string {
	if !isZeroQuery(m.query) {
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
	pct := int(p.Fraction * 100)
	return m.spin.View() + " scanning " + strconv.Itoa(pct) + "% · " + count(p.Scanned) + " jobs"
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
	if !isZeroQuery(m.query) {
		return count(n) + " matching"
	}
	return count(n) + " failed"
}
