package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sanitize"
)

// filter fields, in tab order.
const (
	fieldText = iota
	fieldQueue
	fieldClass
	fieldTag
	fieldCount
)

var fieldLabels = [fieldCount]string{"Text", "Queue", "Class", "Tag"}

// filterForm edits the active filter: free text (payload or exception),
// queues (comma separated), job class and Horizon tags (comma separated,
// every one of them, each exact as triage.Query.Tags matches them).
type filterForm struct {
	inputs [fieldCount]lineInput
	focus  int
}

var fieldPlaceholders = [fieldCount]string{"text in the payload or exception", "queue[,queue…]", "job class, or part of it", "Horizon tag[,tag…], exact"}

// load fills the form from a query.
func (f *filterForm) load(q triage.Query) {
	f.inputs[fieldText].SetValue(q.Filter.Search)
	f.inputs[fieldQueue].SetValue(strings.Join(q.Filter.Queues, ","))
	f.inputs[fieldClass].SetValue(q.Class)
	f.inputs[fieldTag].SetValue(strings.Join(q.Tags, ","))
	f.focus = fieldText
}

// query reads the form back; blank fields mean no restriction.
func (f filterForm) query() triage.Query {
	var q triage.Query
	q.Filter.Search = strings.TrimSpace(f.inputs[fieldText].Value())
	q.Filter.Queues = commaList(f.inputs[fieldQueue].Value())
	q.Class = strings.TrimSpace(f.inputs[fieldClass].Value())
	q.Tags = commaList(f.inputs[fieldTag].Value())
	return q
}

// commaList is a field's comma-separated names, trimmed, blanks dropped.
func commaList(v string) []string {
	var out []string
	for _, name := range strings.Split(v, ",") {
		if name = strings.TrimSpace(name); name != "" {
			out = append(out, name)
		}
	}
	return out
}

// filterSummary is the active filter in one line: text "x", queue a,b, class Y, tag t,u.
func filterSummary(q triage.Query) string {
	var parts []string
	if q.Filter.Search != "" {
		parts = append(parts, "text \""+sanitize.Line(q.Filter.Search)+"\"")
	}
	if len(q.Filter.Queues) > 0 {
		parts = append(parts, "queue "+sanitize.Line(strings.Join(q.Filter.Queues, ",")))
	}
	if q.Class != "" {
		parts = append(parts, "class "+sanitize.Line(q.Class))
	}
	if len(q.Tags) > 0 {
		parts = append(parts, "tag "+sanitize.Line(strings.Join(q.Tags, ",")))
	}
	return strings.Join(parts, ", ")
}

func (m Model) openFilter() (Model, tea.Cmd) {
	m.filter.load(m.query)
	m.page, m.state = m.state, stateFilter
	return m, nil
}

func (m Model) filterKey(msg tea.KeyMsg) (Model, tea.Cmd) {
	k := m.keys.Filter
	switch {
	case key.Matches(msg, k.Cancel):
		m.state = m.page
		return m, nil
	case key.Matches(msg, k.Next):
		m.filter.focus = (m.filter.focus + 1) % fieldCount
		return m, nil
	case key.Matches(msg, k.Prev):
		m.filter.focus = (m.filter.focus + fieldCount - 1) % fieldCount
		return m, nil
	case key.Matches(msg, k.Clear):
		m.filter.inputs[m.filter.focus].SetValue("")
		return m, nil
	case key.Matches(msg, k.Apply):
		return m.applyFilter(m.filter.query())
	}
	m.filter.inputs[m.filter.focus] = m.filter.inputs[m.filter.focus].update(msg)
	return m, nil
}

// applyFilter sets the filter and re-reads with it: the signatures stream
// in again, and the jobs page (if that is where the filter was opened)
// reloads its list.
func (m Model) applyFilter(q triage.Query) (Model, tea.Cmd) {
	m.state = m.page
	m.query = q
	m.status = statusLine{}
	cmds := []tea.Cmd{m.startGroup(false), m.startSpin()}
	if m.state == stateJobs {
		m.jobs.items, m.jobs.cursor, m.jobs.next = nil, 0, ""
		cmds = append(cmds, m.reloadJobs())
	}
	return m, tea.Batch(cmds...)
}

func (m Model) filterBody(height int) []string {
	w := min(m.width-6, 72)
	lines := []string{m.st.Header.Render("Filter"), ""}
	for i := range m.filter.inputs {
		mark := "  "
		if i == m.filter.focus {
			mark = "› "
		}
		lines = append(lines, mark+cell(fieldLabels[i], 7, false)+
			m.filter.inputs[i].view(m.st, fieldPlaceholders[i], w-10, i == m.filter.focus))
	}
	lines = append(lines, "", m.st.Muted.Render("Blank fields match everything; queues and tags are comma separated."))
	box := m.st.Box.Width(w + 2).Render(strings.Join(lines, "\n"))
	return append([]string{""}, strings.Split(box, "\n")...)
}

// lineInput is a one-line text field: type, paste, backspace. (bubbles'
// textinput would pull a clipboard dependency the module does not carry.)
type lineInput struct {
	value []rune
}

// maxInput bounds a field; filters are short.
const maxInput = 200

func (in lineInput) Value() string { return string(in.value) }

func (in *lineInput) SetValue(s string) {
	in.value = []rune(s)
	if len(in.value) > maxInput {
		in.value = in.value[:maxInput]
	}
}

func (in lineInput) update(msg tea.KeyMsg) lineInput {
	switch msg.Type {
	case tea.KeyBackspace:
		in.SetValue(string(in.value[:max(len(in.value)-1, 0)]))
	case tea.KeySpace:
		in.SetValue(in.Value() + " ")
	case tea.KeyRunes:
		in.SetValue(in.Value() + string(msg.Runes))
	}
	return in
}

func (in lineInput) view(st styles, placeholder string, w int, focused bool) string {
	w = max(w, 4)
	text := sanitize.Line(in.Value())
	if text == "" && !focused {
		return st.Muted.Render(sanitize.Truncate(placeholder, w))
	}
	if focused {
		// Keep the end (where typing happens) in view.
		if tw := ansi.StringWidth(text); tw > w-1 {
			text = ansi.TruncateLeft(text, tw-w+2, "…")
		}
		return text + st.Cursor
	}
	return sanitize.Truncate(text, w)
}
