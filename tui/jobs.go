package tui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/jobtriage/jobtriage/triage"
)

// jobList is the jobs of one signature, read in keyset pages as the cursor
// nears the end. A marked job a reload no longer lists stays marked: it is
// still a job the operator chose.
type jobList struct {
	rows[triage.Job]
	seq         int
	sig         triage.Signature
	next        string // cursor of the next page; "" at the end
	loading     bool   // the first page (or a reload) is on its way
	loadingMore bool   // a next page is on its way
	err         error
}

// drop removes jobs an action took away (by id) at once. The signature's
// count is the caller's: ids may belong to other signatures.
func (l *jobList) drop(ids []string) {
	gone := make(map[string]bool, len(ids))
	for _, id := range ids {
		gone[id] = true
		delete(l.marked, id)
	}
	l.rows.drop(func(j *triage.Job) bool { return !gone[j.ID] })
}

// apply takes a page: appended to the list, or replacing it.
func (l *jobList) apply(p triage.Page, appendPage bool) {
	l.loading, l.loadingMore = false, false
	l.err = nil
	l.next = p.Next
	if appendPage {
		l.items = append(l.items, p.Jobs...)
		return
	}
	l.set(p.Jobs)
}

// query is the active filter narrowed to one signature.
func withSignature(q triage.Query, id string) triage.Query {
	q.Signature = id
	return q
}

func (m Model) openJobs(s triage.Signature) (Model, tea.Cmd) {
	m.state = stateJobs
	m.jobs = jobList{sig: s}
	return m, tea.Batch(m.reloadJobs(), m.startSpin())
}

// reloadJobs reads the list again from the top, as many rows as it shows
// now (so a refresh does not lose the pages already read).
func (m *Model) reloadJobs() tea.Cmd {
	m.jobs.seq, m.jobs.loading, m.jobs.loadingMore = m.nextSeq(), true, false
	p := triage.ListParams{Query: withSignature(m.query, m.jobs.sig.ID), Limit: min(max(len(m.jobs.items), pageSize), 500)}
	return listCmd(m.ctx, m.backend, p, m.jobs.seq, false)
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
	if l.cursor < len(l.items)-max(loadAhead, m.tableRows()) {
		return nil
	}
	l.loadingMore = true
	p := triage.ListParams{Query: withSignature(m.query, l.sig.ID), Cursor: l.next, Limit: pageSize}
	return tea.Batch(listCmd(m.ctx, m.backend, p, l.seq, true), m.startSpin())
}

func (m Model) jobsKey(msg tea.KeyMsg) (Model, tea.Cmd) {
	k := m.keys.Jobs
	if c, ok := k.move(msg, m.jobs.cursor, len(m.jobs.items), m.tableRows()); ok {
		m.jobs.cursor = c
		return m, m.maybeLoadMore()
	}
	j, ok := m.jobs.current()
	switch {
	case key.Matches(msg, k.Back) && len(m.jobs.marked) > 0:
		m.jobs.marked = nil
		m.status = statusLine{text: "Marks cleared."}
	case key.Matches(msg, k.Back):
		m.state = stateSignatures
		m.jobs.seq = m.nextSeq() // drop answers still on their way
	case key.Matches(msg, k.Filter):
		return m.openFilter()
	case key.Matches(msg, k.Open) && ok:
		return m.openDetail(j)
	case key.Matches(msg, k.Mark):
		m.jobs.toggle()
		return m, m.maybeLoadMore()
	case key.Matches(msg, k.Copy) && ok:
		return m, copyCmd(m.clipboard, "job id", j.ID)
	case key.Matches(msg, k.Retry):
		return m, m.askJobs(actionRetry, m.jobs.chosen(true))
	case key.Matches(msg, k.Forget):
		return m, m.askJobs(actionForget, m.jobs.chosen(true))
	case key.Matches(msg, k.RetryAll):
		return m, m.askSignatures(actionRetry, []triage.Signature{m.jobs.sig}, m.sigs.loading)
	case key.Matches(msg, k.ForgetAll):
		return m, m.askSignatures(actionForget, []triage.Signature{m.jobs.sig}, m.sigs.loading)
	}
	return m, nil
}

// jobColumns by rank: the id (its shortest unique prefix at least, whole
// when there is room for it), the message, the time, the queue.
var jobColumns = []column{
	{Title: "ID", Min: minIDPrefix, Max: 36, Whole: true, Rank: 0},
	{Title: "QUEUE", Min: 5, Max: 16, Flex: true, Rank: 3},
	{Title: "FAILED AT", Min: 19, Rank: 2},
	{Title: "MESSAGE", Min: 20, Flex: true, Weight: 3, Rank: 1},
}

// messageWant is the room the message is reserved before the lower ranks
// get theirs; it takes any spare room after.
const messageWant = 40

func (m Model) jobsBody(height int) []string {
	l := m.jobs
	switch {
	case len(l.items) == 0 && l.err != nil:
		return m.errorBody("Could not list the jobs of signature "+l.sig.ID, l.err, height)
	case len(l.items) == 0 && l.loading:
		return []string{"", "  " + m.spin.View() + " Loading jobs…"}
	case len(l.items) == 0:
		return []string{"", "  No failed jobs left in signature " + l.sig.ID + ".", "  Press esc to go back."}
	}
	cols := append([]column(nil), jobColumns...)
	var ids, queues, messages []string
	for _, j := range l.items {
		ids = append(ids, j.ID)
		queues = append(queues, j.Queue)
		messages = append(messages, exceptionText(j.ExceptionClass, j.ExceptionMessage))
	}
	prefix := uniquePrefixLen(ids)
	cols[0].Min, cols[0].Max = prefix, max(prefix, contentWidth("", ids))
	fitContent(&cols[1], queues)
	cols[3].Want = min(contentWidth(cols[3].Title, messages), messageWant)
	rows := height - 1
	if l.loadingMore || l.next != "" {
		rows-- // a line for "more below"
	}
	lines := m.table(cols, len(l.items), l.cursor, rows, func(i int, widths []int) string {
		j := l.items[i]
		id := j.ID
		if len(id) > widths[0] {
			id = id[:widths[0]] // a unique prefix, not a cut: no ellipsis
		}
		_, marked := l.marked[j.ID]
		return m.tableLine(tableRow(cols, widths, []string{
			id, j.Queue, stamp(j.FailedAt), exceptionText(j.ExceptionClass, j.ExceptionMessage),
		}), i == l.cursor, marked, false)
	})
	switch {
	case l.loadingMore:
		lines = append(lines, m.st.Muted.Render("  "+m.spin.View()+" loading more…"))
	case l.next != "":
		lines = append(lines, m.st.Muted.Render("  more below"))
	}
	return lines
}
