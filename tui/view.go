package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/jobtriage/jobtriage/alerts"
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
	lines := make([]string, 0, m.height)
	lines = append(lines, m.headerLine(), m.crumbLine())
	for i := 0; i < h; i++ {
		if i < len(body) {
			lines = append(lines, body[i])
		} else {
			lines = append(lines, "")
		}
	}
	lines = append(lines, m.statusView(), m.help.ShortHelpView(m.keys.helpFor(m.state).ShortHelp()))
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, m.width, "")
	}
	return strings.Join(lines, "\n")
}

// headerLine: where we are connected, how many jobs failed, the failure
// count of the alert window against its threshold, and read-only mode.
func (m Model) headerLine() string {
	parts := []string{m.st.Header.Render("jobtriage")}
	if m.opts.Connection != "" {
		parts = append(parts, m.st.Muted.Render(sanitize.Line(m.opts.Connection)))
	}
	parts = append(parts, m.totalText())
	if w := m.windowText(); w != "" {
		parts = append(parts, w)
	}
	if m.readOnly() {
		parts = append(parts, m.st.ReadOnly.Render("READ-ONLY"))
	}
	return strings.Join(parts, m.st.Muted.Render(" · "))
}

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
		crumb += " › " + shortID(s.ID) + " " + sanitize.Line(classTail(s.Class, 40))
	}
	if page == stateDetail {
		crumb += " › job " + sanitize.Line(m.detail.job.ID)
	}
	parts := []string{m.st.Crumb.Render(crumb)}
	if !isZeroQuery(m.query) {
		parts = append(parts, m.st.Muted.Render("filter: "+filterSummary(m.query)))
	}
	if s := m.scanStatus(); s != "" {
		parts = append(parts, m.st.Muted.Render(s))
	}
	return strings.Join(parts, "  ")
}

func (m Model) statusView() string {
	if m.status.text == "" {
		return ""
	}
	if m.status.isErr {
		return m.st.ErrorText.Render(sanitize.Line(m.status.text))
	}
	if m.status.text == busyText {
		return m.spin.View() + " " + busyText
	}
	return m.st.StatusOK.Render(sanitize.Line(m.status.text))
}

func (m Model) helpBody() []string {
	lines := []string{"", m.st.Header.Render("  Keys"), ""}
	full := m.help
	full.ShowAll = true
	for _, l := range strings.Split(full.FullHelpView(m.keys.helpFor(m.page).FullHelp()), "\n") {
		lines = append(lines, "  "+l)
	}
	lines = append(lines, "", m.st.Muted.Render("  Global: ? help · ctrl+r refresh · q quit"))
	if m.readOnly() {
		lines = append(lines, m.st.ReadOnly.Render("  Read-only: retry and forget are disabled."))
	}
	return lines
}

// errorBody shows an error in a box; the page stays usable around it.
func (m Model) errorBody(title string, err error, height int) []string {
	w := m.width - 6
	if w > 76 {
		w = 76
	}
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
	if err == nil {
		return ""
	}
	return sanitize.Line(err.Error())
}

// stripped removes styling to measure a rendered line.
func stripped(s string) string { return ansi.Strip(s) }
