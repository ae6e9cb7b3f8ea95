package tui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/jobtriage/jobtriage/triage"
)

// jobList is the jobs of one signature, read in keyset pages as the cursor
// nears the end.
type jobList struct {
	seq         int
	sig         triage.Signature
	items       []triage.Job
	next        string // cursor of the next page; "" at the end
	cursor      int
	offset      int
	loading     bool // the first page (or a reload) is on its way
	loadingMore bool // a next page is on its way
	err         error
}

// apply takes a page: appended to the list, or replacing it (the cursor
// stays on the job it was on, if that job is still there).
func (l *jobList) apply(p triage.Page, appendPage bool) {
	l.loading, l.loadingMore = false, false
	l.err = nil
	l.next = p.Next
	if appendPage {
		l.items = append(l.items, p.Jobs...)
		return
	}
	var keepID string
	if l.cursor < len(l.items) {
		keepID = l.items[l.cursor].ID
	}
	l.items = p.Jobs
	l.cursor = clampCursor(l.cursor, len(l.items))
	for i, j := range l.items {
		if j.ID == keepID {
			l.cursor = i
			break
		}
	}
}

func (l jobList) selected() (triage.Job, bool) {
	if l.cursor < 0 || l.cursor >= len(l.items) {
		return triage.Job{}, false
	}
	return l.items[l.cursor], true
}

// query is the active filter narrowed to one signature.
func withSignature(q triage.Query, id string) triage.Query {
	q.Signature = id
	return q
}

func (m Model) openJobs(s triage.Signature) (tea.Model, tea.Cmd) {
	m.state = stateJobs
	m.jobs = jobList{sig: s}
	return m, tea.Batch(m.reloadJobs(), m.startSpin())
}

// reloadJobs reads the list again from the top, as many rows as it shows
// now (so a refresh does not lose the pages already read).
func (m *Model) reloadJobs() tea.Cmd {
	limit := len(m.jobs.items)
	if limit < pageSize {
		limit = pageSize
	}
	if limit > 500 {
		limit = 500
	}
	seq := m.nextSeq()
	m.jobs.seq = seq
	m.jobs.loading = true
	m.jobs.loadingMore = false
	p := triage.ListParams{Query: withSignature(m.query, m.jobs.sig.ID), Limit: limit}
	return listCmd(m.ctx, m.backend, p, seq, false)
}

// loadAhead is how close to the end the cursor may come before the next
// page is asked for.
const loadAhead = 10

// maybeLoadMore asks for the next page when the cursor nears the end.
func (m *Model) maybeLoadMore() tea.Cmd {
	l := &m.jobs
	if l.loading || l.loadingMore || l.next == "" || l.err != nil {
		return nil
	}
	ahead := loadAhead
	if r := m.tableRows(); r > ahead {
		ahead = r
	}
	if l.cursor < len(l.items)-ahead {
		return nil
	}
	l.loadingMore = true
	p := triage.ListParams{Query: withSignature(m.query, l.sig.ID), Cursor: l.next, Limit: pageSize}
	return tea.Batch(listCmd(m.ctx, m.backend, p, l.seq, true), m.startSpin())
}

func (m Model) jobsKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	k := m.keys.Jobs
	if c, ok := k.move(msg, m.jobs.cursor, len(m.jobs.items), m.tableRows()); ok {
		m.jobs.cursor = c
		return m, m.maybeLoadMore()
	}
	switch {
	case key.Matches(msg, k.Back):
		m.state = stateSignatures
		m.jobs.seq = m.nextSeq() // drop answers still on their way
		return m, nil
	case key.Matches(msg, k.Filter):
		return m.openFilter()
	case key.Matches(msg, k.Open):
		j, ok := m.jobs.selected()
		if !ok {
			return m, nil
		}
		return m.openDetail(j)
	case key.Matches(msg, k.Retry):
		if j, ok := m.jobs.selected(); ok {
			m.askJob(actionRetry, j)
		}
	case key.Matches(msg, k.Forget):
		if j, ok := m.jobs.selected(); ok {
			m.askJob(actionForget, j)
		}
	case key.Matches(msg, k.RetryAll):
		m.askSignature(actionRetry, m.jobs.sig, m.sigs.loading)
	case key.Matches(msg, k.ForgetAll):
		m.askSignature(actionForget, m.jobs.sig, m.sigs.loading)
	}
	return m, nil
}

var jobColumns = []column{
	{Title: "ID", Min: 10, Max: 36, Flex: true, Weight: 6},
	{Title: "QUEUE", Min: 8, Max: 16, Flex: true},
	{Title: "FAILED AT", Min: 19},
	{Title: "MESSAGE", Min: 20, Flex: true, Weight: 3},
}

func (m Model) jobsBody(height int) []string {
	l := m.jobs
	switch {
	case len(l.items) == 0 && l.err != nil:
		return m.errorBody("Could not list the jobs of signature "+shortID(l.sig.ID), l.err, height)
	case len(l.items) == 0 && l.loading:
		return []string{"", "  " + m.spin.View() + " Loading jobs…"}
	case len(l.items) == 0:
		return []string{"", "  No failed jobs left in signature " + shortID(l.sig.ID) + ".", "  Press esc to go back."}
	}
	widths := fitColumns(jobColumns, m.width)
	lines := []string{m.st.TableHead.Render(tableHeader(jobColumns, widths))}
	rows := height - 1
	if l.loadingMore || l.next != "" {
		rows-- // a line for "more below"
	}
	l.offset = scrollOffset(l.offset, l.cursor, rows, len(l.items))
	for i := l.offset; i < len(l.items) && i < l.offset+rows; i++ {
		j := l.items[i]
		row := tableRow(jobColumns, widths, []string{
			j.ID, j.Queue, stamp(j.FailedAt), exceptionText(j.ExceptionClass, j.ExceptionMessage),
		})
		if i == l.cursor {
			row = m.st.Selected.Render(row)
		}
		lines = append(lines, row)
	}
	switch {
	case l.loadingMore:
		lines = append(lines, m.st.Muted.Render("  "+m.spin.View()+" loading more…"))
	case l.next != "":
		lines = append(lines, m.st.Muted.Render("  more below"))
	}
	return lines
}
