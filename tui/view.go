package tui

import (
	"cmp"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/jobtriage/jobtriage/alerts"
	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sanitize"
)

// View draws two header lines, the body of the current state, a status line
// and the key help, each cut to the terminal width and padded to its height.
func (m Model) View() string {
	h := m.bodyHeight()
	var body []string
	switch m.state {
	case stateJobs:
		body = m.jobsBody(h)
	case stateDetail:
		body = m.detailBody(h)
	case stateConfirm:
		body = m.confirmBody(h)
	case stateHelp:
		body = m.helpBody()
	case stateFilter:
		body = m.filterBody(h)
	default:
		body = m.signaturesBody(h)
	}
	body = append(body, make([]string, max(h-len(body), 0))...)
	lines := append([]string{m.headerLine(), m.crumbLine()}, body[:h]...)
	lines = append(lines, m.statusLines()...)
	lines = append(lines, m.footer())
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, m.width, "")
	}
	return strings.Join(lines, "\n")
}

// footer is the page's short help, fitted to the width by dropping page
// bindings from the right: the global ones (? help, q quit) always show.
func (m Model) footer() string {
	h := m.help
	h.Width = 0 // fitted here, not cut with an ellipsis
	page := m.keys.helpFor(m.state)
	for len(page.short) > 0 && ansi.StringWidth(h.ShortHelpView(page.ShortHelp())) > m.width {
		page.short = page.short[:len(page.short)-1]
	}
	return h.ShortHelpView(page.ShortHelp())
}

// headerLine: where we are connected, how many jobs failed, the failure
// count of the alert window against its threshold, and read-only mode. On
// a narrow terminal the connection (app and database) is cut first: the
// counts, the alert and READ-ONLY are what the header is for.
func (m Model) headerLine() string {
	sep := m.st.Muted.Render(" · ")
	head := []string{m.st.Header.Render("jobtriage")}
	tail := []string{m.totalText()}
	if m.sigs.stale != nil {
		tail = append(tail, m.st.Alert.Render(staleMark))
	}
	if w := m.windowText(); w != "" {
		tail = append(tail, w)
	}
	if m.readOnly() {
		tail = append(tail, m.st.ReadOnly.Render("READ-ONLY"))
	}
	fixed := ansi.StringWidth(strings.Join(append(head, tail...), sep))
	if fixed > m.width {
		// Narrower still: the program's name goes too.
		return strings.Join(tail, sep)
	}
	if m.opts.Connection != "" {
		if room := m.width - fixed - ansi.StringWidth(sep); room >= minConnectionWidth {
			head = append(head, m.st.Muted.Render(cutWords(m.opts.Connection, room)))
		}
	}
	return strings.Join(append(head, tail...), sep)
}

// cutWords fits s into width cells, cut after its last whole word that
// fits (a trailing " ·" dropped) and marked with an ellipsis: "…/billing…",
// not "…/billing tabl…". A first word wider than width is cut inside.
func cutWords(s string, width int) string {
	line := sanitize.Line(s)
	if ansi.StringWidth(line) <= width {
		return line
	}
	cut := ""
	for i, r := range line {
		if r != ' ' {
			continue
		}
		head := strings.TrimRight(strings.TrimSpace(line[:i]), " ·")
		if ansi.StringWidth(head)+ansi.StringWidth(sanitize.Ellipsis) > width {
			break
		}
		cut = head
	}
	if cut == "" {
		return sanitize.Truncate(line, width)
	}
	return cut + sanitize.Ellipsis
}

// minConnectionWidth is the narrowest cut of the connection worth showing.
const minConnectionWidth = 8

func (m Model) windowText() string {
	if m.opts.Window <= 0 {
		return ""
	}
	label := "last " + alerts.FormatDuration(m.opts.Window) + ": "
	switch {
	case m.window.err != nil:
		return label + m.st.ErrorText.Render("?")
	case !m.window.known:
		return label + "…"
	}
	n := count(m.window.count)
	if m.window.capped {
		n = "≥" + n
	}
	if m.opts.Threshold <= 0 {
		return label + n
	}
	text := label + n + "/" + count(m.opts.Threshold)
	if m.window.count >= m.opts.Threshold {
		return m.st.Alert.Render(text + " ALERT")
	}
	return m.st.OK.Render(text)
}

// crumbLine says which page this is, the active filter and a running scan.
func (m Model) crumbLine() string {
	page := m.state
	if page >= stateConfirm {
		page = m.page
	}
	crumb := "Signatures"
	if page == stateJobs || page == stateDetail {
		s := m.jobs.sig
		crumb += " › " + s.ID + " " + sanitize.Line(classTail(s.Class, 40))
	}
	if page == stateDetail {
		crumb += " › job " + sanitize.Line(m.detail.job.ID)
	}
	parts := []string{m.st.Crumb.Render(crumb)}
	if !m.query.Empty() {
		parts = append(parts, m.st.Muted.Render("filter: "+filterSummary(m.query)))
	}
	if s := m.scanStatus(); s != "" {
		parts = append(parts, m.st.Muted.Render(s))
	}
	left := strings.Join(parts, "  ")
	// The position sits at the right edge; when the crumb and filter need
	// the room it shrinks to "12/120", and the crumb is cut last.
	pos := m.position(page, false)
	if pos == "" {
		return left
	}
	if ansi.StringWidth(left)+2+ansi.StringWidth(pos) > m.width {
		pos = m.position(page, true)
	}
	pw := ansi.StringWidth(pos)
	room := m.width - pw - 2
	if room < 0 {
		return left
	}
	left = ansi.Truncate(left, room, "…")
	gap := m.width - ansi.StringWidth(left) - pw
	return left + strings.Repeat(" ", gap) + m.st.Muted.Render(pos)
}

// maxStatusLines bounds a long status: it wraps onto more lines (the body
// gives them up) and is cut after the last.
const maxStatusLines = 3

// statusLines are the status, wrapped to the width: at least one line
// (blank when there is nothing to say).
func (m Model) statusLines() []string {
	text, isErr := m.status.text, m.status.isErr
	if text == "" && !m.status.busy && m.sigs.stale != nil {
		// Said until a refresh succeeds, whatever else came and went.
		text, isErr = m.staleText(), true
	}
	if text == "" && !m.status.busy {
		return []string{""}
	}
	text = sanitize.Line(text)
	if m.status.busy {
		text = m.spin.View() + " " + m.runningText()
	}
	style := m.st.OK
	if isErr {
		style = m.st.ErrorText
	}
	lines := strings.Split(ansi.Wrap(text, m.width, `/\-`), "\n")
	if len(lines) > maxStatusLines {
		rest := strings.Join(lines[maxStatusLines-1:], " ")
		lines = append(lines[:maxStatusLines-1], sanitize.Truncate(rest, m.width))
	}
	for i, l := range lines {
		lines[i] = style.Render(l)
	}
	return lines
}

// staleMark flags, in the header, a list a refresh failed to renew.
const staleMark = "STALE"

// staleText says how old the rows on screen are and why no newer ones came.
func (m Model) staleText() string {
	return "Stale: rows as of " + m.sigs.loadedAt.Format("15:04:05") + "; the refresh failed: " +
		errText(m.sigs.stale) + " (" + m.keys.Global.Refresh.Help().Key + " tries again)"
}

func (m Model) helpBody() []string {
	lines := []string{"", m.st.Header.Render("  Keys"), ""}
	for _, l := range strings.Split(m.help.FullHelpView(m.keys.helpFor(m.page).FullHelp()), "\n") {
		lines = append(lines, "  "+l)
	}
	lines = append(lines, "", m.st.Muted.Render("  Global: ? help · ctrl+r refresh · q quit"))
	if m.page == stateSignatures {
		lines = append(lines, m.st.Muted.Render("  "+newMark+" new signature · TREND: the last "+
			alerts.FormatDuration(cmp.Or(max(m.opts.TrendWindow, 0), triage.DefaultTrendWindow))+" against the one before"))
	}
	if m.readOnly() {
		lines = append(lines, m.st.ReadOnly.Render("  Read-only: retry and forget are disabled."))
	}
	return lines
}

// errorBody shows an error in a box; the page stays usable around it.
func (m Model) errorBody(title string, err error, height int) []string {
	w := min(m.width-6, 76)
	text := []string{m.st.ErrorText.Render(title)}
	text = append(text, wrapped(m.st.Muted, errText(err), w)...)
	hint := "Press ctrl+r to try again, q to quit."
	if m.state != stateSignatures {
		hint = "Press ctrl+r to try again, esc to go back, q to quit."
	}
	text = append(text, "", hint)
	box := m.st.ErrorBox.Width(w + 2).Render(strings.Join(text, "\n"))
	return append([]string{""}, strings.Split(box, "\n")...)
}

// errText is an error message made safe: drivers quote database text in
// their errors.
func errText(err error) string {
	return sanitize.Line(err.Error())
}

// position says where the cursor is in the list of page: "120 of 9,092
// jobs" (short: "120/9,092"), and how many rows are marked. The jobs total is the signature's
// count (the list is read a page at a time).
func (m Model) position(page state, short bool) string {
	at, of, marked, noun := m.sigs.cursor+1, len(m.sigs.items), len(m.sigs.marked), "signatures"
	if page == stateJobs {
		at, of, marked, noun = m.jobs.cursor+1, max(m.jobs.sig.Count, len(m.jobs.items)), len(m.jobs.marked), "jobs"
	}
	if of == 0 || (page != stateSignatures && page != stateJobs) {
		return ""
	}
	if short {
		p := count(at) + "/" + count(of)
		if marked > 0 {
			p += " ·" + count(marked) + "✓"
		}
		return p
	}
	p := count(at) + " of " + count(of) + " " + noun
	if of == 1 {
		p = strings.TrimSuffix(p, "s")
	}
	if marked > 0 {
		p += " · " + count(marked) + " marked"
	}
	return p
}
