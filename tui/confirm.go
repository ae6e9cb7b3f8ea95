package tui

import (
	"sort"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sanitize"
)

// confirmation is a pending action: the question, stating how many jobs it
// touches, and the Cmd that runs it on "y".
type confirmation struct {
	prompt  string
	details []string
	run     tea.Cmd
}

func verbOf(kind actionKind) string {
	if kind == actionForget {
		return "Forget"
	}
	return "Retry"
}

// refOf addresses a job the way the store does: by uuid when it has one,
// else by row id (legacy rows with a NULL uuid stay reachable).
func refOf(j triage.Job) triage.Ref {
	if j.UUID != "" {
		return triage.Ref{UUID: j.UUID}
	}
	return triage.Ref{ID: j.RowID}
}

// askJob opens the confirmation for one job.
func (m *Model) askJob(kind actionKind, j triage.Job) {
	if m.readOnly() {
		return
	}
	what := "job " + sanitize.Line(j.ID)
	var run tea.Cmd
	refs := []triage.Ref{refOf(j)}
	if kind == actionRetry {
		run = retryCmd(m.ctx, m.actions, triage.RetryParams{Refs: refs}, what, false)
	} else {
		run = forgetCmd(m.ctx, m.actions, triage.ForgetParams{Refs: refs}, what, false)
	}
	m.confirm = confirmation{
		prompt:  verbOf(kind) + " 1 failed job " + sanitize.Truncate(j.ID, 40) + "?",
		details: []string{sanitize.Line(j.Class), exceptionText(j.ExceptionClass, j.ExceptionMessage), m.targetLine()},
		run:     run,
	}
	m.page, m.state = m.state, stateConfirm
}

// askSignature opens the confirmation for every job of a signature (under
// the active filter, so the count it states is the count it touches).
// While a scan still runs the count is a lower bound and says so.
func (m *Model) askSignature(kind actionKind, s triage.Signature, partial bool) {
	if m.readOnly() {
		return
	}
	id := shortID(s.ID)
	what := "signature " + id
	q := withSignature(m.query, s.ID)
	var run tea.Cmd
	if kind == actionRetry {
		run = retryCmd(m.ctx, m.actions, triage.RetryParams{Query: q}, what, true)
	} else {
		run = forgetCmd(m.ctx, m.actions, triage.ForgetParams{Query: q}, what, true)
	}
	prompt := verbOf(kind) + " " + plural(s.Count, "failed job", "failed jobs") + " of signature " + id + "?"
	if partial {
		prompt = verbOf(kind) + " all failed jobs of signature " + id + " (" + count(s.Count) + " counted so far)?"
	}
	details := []string{sanitize.Line(s.Class), exceptionText(s.ExceptionClass, s.Example)}
	if !isZeroQuery(m.query) {
		details = append(details, "Only jobs matching the filter: "+filterSummary(m.query))
	}
	details = append(details, m.targetLine())
	m.confirm = confirmation{prompt: prompt, details: details, run: run}
	m.page, m.state = m.state, stateConfirm
}

// targetLine names where the action lands (the app and the failed-jobs
// store), so that an operator with several apps open cannot act on the
// wrong one; "" when unknown.
func (m Model) targetLine() string {
	if m.opts.Connection == "" {
		return ""
	}
	return "In " + sanitize.Line(m.opts.Connection)
}

// confirmBody draws the question in a box in the middle of the body.
func (m Model) confirmBody(height int) []string {
	w := m.width - 6
	if w > 72 {
		w = 72
	}
	lines := []string{m.st.Header.Render(sanitize.Truncate(m.confirm.prompt, w))}
	for _, d := range m.confirm.details {
		if d != "" {
			lines = append(lines, m.st.Muted.Render(sanitize.Truncate(d, w)))
		}
	}
	hint := "y confirm · n cancel"
	if m.confirm.kindForget() {
		hint = "y forget (cannot be undone) · n cancel"
	}
	lines = append(lines, "", hint)
	box := m.st.Box.Width(w + 2).Render(strings.Join(lines, "\n"))
	return center(strings.Split(box, "\n"), m.width, height)
}

func (c confirmation) kindForget() bool { return strings.HasPrefix(c.prompt, "Forget") }

// center places lines in the middle of a width×height area.
func center(lines []string, width, height int) []string {
	top := (height - len(lines)) / 2
	if top < 0 {
		top = 0
	}
	out := make([]string, 0, height)
	for i := 0; i < top; i++ {
		out = append(out, "")
	}
	for _, l := range lines {
		pad := (width - sanitize.Width(stripped(l))) / 2
		if pad < 0 {
			pad = 0
		}
		out = append(out, strings.Repeat(" ", pad)+l)
	}
	return out
}

// actionSummary is the status line after an action succeeded.
func actionSummary(msg actionMsg) string {
	var b strings.Builder
	if msg.kind == actionRetry {
		r := msg.retry
		b.WriteString("Retried " + plural(r.Retried, "job", "jobs") + " of " + msg.what)
		if len(r.ByQueue) > 0 {
			b.WriteString(" onto " + queueList(r.ByQueue))
		}
		if n := len(r.Skipped); n > 0 {
			b.WriteString("; skipped " + count(n) + " (" + sanitize.Line(r.Skipped[0].Reason) + ")")
		}
		if n := len(r.NotFound); n > 0 {
			b.WriteString("; " + count(n) + " already gone")
		}
	} else {
		f := msg.forget
		b.WriteString("Forgot " + plural(f.Deleted, "job", "jobs") + " of " + msg.what)
		if n := len(f.NotFound); n > 0 {
			b.WriteString("; " + count(n) + " already gone")
		}
	}
	return b.String() + "."
}

// queueList is "default (3), emails (1)" in name order.
func queueList(byQueue map[string]int) string {
	names := make([]string, 0, len(byQueue))
	for q := range byQueue {
		names = append(names, q)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, q := range names {
		parts[i] = sanitize.Line(q) + " (" + count(byQueue[q]) + ")"
	}
	return strings.Join(parts, ", ")
}
