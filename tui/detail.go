package tui

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/exception"
	"github.com/jobtriage/jobtriage/triage/sanitize"
)

// section is one tab of the detail page.
type section int

const (
	sectionSummary section = iota
	sectionException
	sectionPayload
	sectionCount
)

var sectionNames = [sectionCount]string{"Summary", "Exception", "Payload"}

// detailPage is one job: summary, exception chain and payload, each a tab
// rendered into a scrolling viewport.
type detailPage struct {
	seq     int
	job     triage.Job // the row it was opened from, shown while loading
	d       triage.Detail
	loaded  bool
	loading bool
	err     error
	section section
	vp      viewport.Model
	// rendered is the text of each section at the current width, so that
	// switching tabs and scrolling do not re-render.
	rendered [sectionCount]string
	width    int
	now      time.Time
}

func (m Model) openDetail(j triage.Job) (tea.Model, tea.Cmd) {
	m.state = stateDetail
	seq := m.nextSeq()
	m.detail = detailPage{seq: seq, job: j, loading: true, vp: viewport.New(m.width, m.bodyHeight()-1)}
	return m, tea.Batch(showCmd(m.ctx, m.backend, j.ID, seq), m.startSpin())
}

func (p *detailPage) resize(st styles, w, h int) {
	p.vp.Width, p.vp.Height = w, h-1
	if p.loaded && p.width != w {
		p.render(st, p.now, w, h)
	}
}

// render lays out every section for width w.
func (p *detailPage) render(st styles, now time.Time, w, h int) {
	p.width, p.now = w, now
	p.vp.Width, p.vp.Height = w, h-1
	p.rendered[sectionSummary] = strings.Join(summaryLines(st, p.d, now, w), "\n")
	p.rendered[sectionException] = strings.Join(exceptionLines(st, p.d, w), "\n")
	p.rendered[sectionPayload] = strings.Join(payloadLines(st, p.d, w), "\n")
	p.vp.SetContent(p.rendered[p.section])
}

func (m Model) detailKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	k := m.keys.Detail
	switch {
	case key.Matches(msg, k.Back):
		m.state = stateJobs
		m.detail.seq = m.nextSeq()
		return m, nil
	case key.Matches(msg, k.Section):
		step := section(1)
		if msg.String() == "shift+tab" {
			step = sectionCount - 1
		}
		m.detail.section = (m.detail.section + step) % sectionCount
		m.detail.vp.SetContent(m.detail.rendered[m.detail.section])
		m.detail.vp.GotoTop()
		return m, nil
	case key.Matches(msg, k.Retry):
		if m.detail.job.ID != "" {
			return m, m.askJobs(actionRetry, []triage.Job{m.detail.job})
		}
		return m, nil
	case key.Matches(msg, k.Forget):
		if m.detail.job.ID != "" {
			return m, m.askJobs(actionForget, []triage.Job{m.detail.job})
		}
		return m, nil
	case key.Matches(msg, k.Copy):
		if m.detail.job.ID != "" {
			return m, m.copyCmd("job id", m.detail.job.ID)
		}
	case key.Matches(msg, k.Up):
		m.detail.vp.ScrollUp(1)
	case key.Matches(msg, k.Down):
		m.detail.vp.ScrollDown(1)
	case key.Matches(msg, k.PageUp):
		m.detail.vp.PageUp()
	case key.Matches(msg, k.PageDown):
		m.detail.vp.PageDown()
	case key.Matches(msg, k.Top):
		m.detail.vp.GotoTop()
	case key.Matches(msg, k.Bottom):
		m.detail.vp.GotoBottom()
	}
	return m, nil
}

func (m Model) detailBody(height int) []string {
	p := m.detail
	switch {
	case p.err != nil:
		return m.errorBody("Could not read job "+sanitize.Line(p.job.ID), p.err, height)
	case !p.loaded:
		return []string{"", "  " + m.spin.View() + " Reading job " + sanitize.Line(p.job.ID) + "…"}
	}
	tabs := make([]string, 0, sectionCount)
	for s := section(0); s < sectionCount; s++ {
		if s == p.section {
			// Brackets, not only reverse video, so the open tab shows
			// under NO_COLOR too.
			tabs = append(tabs, m.st.TabActive.Render("["+sectionNames[s]+"]"))
		} else {
			tabs = append(tabs, m.st.Tab.Render(" "+sectionNames[s]+" "))
		}
	}
	head := strings.Join(tabs, " ")
	if pct := p.vp.ScrollPercent(); p.vp.TotalLineCount() > p.vp.Height {
		head += m.st.Muted.Render("  " + strconv.Itoa(int(pct*100)) + "%")
	}
	return append([]string{head}, strings.Split(p.vp.View(), "\n")...)
}

// wrapped makes database text safe and hard-wraps it to w cells, each line
// styled; tabs become spaces so widths stay true.
func wrapped(style lipgloss.Style, text string, w int) []string {
	text = strings.ReplaceAll(sanitize.Text(text), "\t", "    ")
	var out []string
	for _, line := range strings.Split(text, "\n") {
		// Break at words, and inside paths and class names at / and \.
		for _, part := range strings.Split(ansi.Wrap(line, w, `/\-`), "\n") {
			out = append(out, style.Render(part))
		}
	}
	return out
}

// field is one "Label  value" line of the summary, wrapped under the value
// column.
func field(st styles, label, value string, w int) []string {
	const labelWidth = 13
	if value == "" {
		value = "—"
	}
	vw := w - labelWidth
	if vw < 10 {
		vw = 10
	}
	lines := wrapped(lipgloss.NewStyle(), value, vw)
	out := make([]string, len(lines))
	for i, l := range lines {
		lab := ""
		if i == 0 {
			lab = label
		}
		out[i] = st.Label.Render(cell(lab, labelWidth-1, false)) + " " + l
	}
	return out
}

func summaryLines(st styles, d triage.Detail, now time.Time, w int) []string {
	var out []string
	add := func(label, value string) { out = append(out, field(st, label, value, w)...) }
	add("ID", d.ID)
	add("Row id", strconv.FormatInt(d.RowID, 10))
	add("UUID", d.UUID)
	add("Connection", d.Connection)
	add("Queue", d.Queue)
	add("Job", d.Class)
	add("Failed at", stamp(d.FailedAt)+"  ("+ago(now, d.FailedAt)+")")
	add("Exception", exceptionText(d.ExceptionClass, d.ExceptionMessage))
	top := d.Chain.Top()
	add("Thrown at", top.Location())
	if f, ok := top.FirstAppFrame(); ok {
		add("App frame", f.Raw)
	}
	if d.PayloadErr == nil && len(d.Payload) > 0 {
		pl := d.Payload
		add("Attempts", gjsonText(pl, "attempts")+" of maxTries "+gjsonText(pl, "maxTries"))
		add("Timeout", gjsonText(pl, "timeout"))
		add("Backoff", gjsonText(pl, "backoff"))
		if ru := gjson.GetBytes(pl, "retryUntil"); ru.Exists() && ru.Type == gjson.Number {
			v := stamp(time.Unix(ru.Int(), 0).In(now.Location()))
			if d.RetryUntilExpired {
				v += "  (passed: a retry fails at once unless given a new deadline)"
			}
			add("Retry until", v)
		}
	}
	add("Command", commandState(d))
	return out
}

// gjsonText renders a payload field, "—" when absent or null.
func gjsonText(b []byte, path string) string {
	r := gjson.GetBytes(b, path)
	if !r.Exists() || r.Type == gjson.Null {
		return "—"
	}
	return r.String()
}

func commandState(d triage.Detail) string {
	switch d.Command {
	case triage.CommandNone:
		return "none (a string job)"
	case triage.CommandPlain:
		return "decoded"
	case triage.CommandDecrypted:
		return "decrypted with APP_KEY"
	case triage.CommandEncrypted:
		if d.CommandErr != nil {
			return "encrypted; decryption failed: " + errText(d.CommandErr)
		}
		return "encrypted (set APP_KEY to read it)"
	case triage.CommandUnreadable:
		if d.CommandErr != nil {
			return "unreadable: " + errText(d.CommandErr)
		}
		return "unreadable"
	}
	return string(d.Command)
}

// exceptionLines shows the chain as operators read it: the exception that
// was thrown first, then the ones it wrapped. Application frames are marked
// "▸" (and bold), vendor frames are dimmed, so the eye finds the bug.
func exceptionLines(st styles, d triage.Detail, w int) []string {
	if len(d.Chain) == 0 {
		if strings.TrimSpace(d.Exception) == "" {
			return []string{st.Muted.Render("No exception text was stored.")}
		}
		return wrapped(lipgloss.NewStyle(), d.Exception, w)
	}
	var out []string
	for i := len(d.Chain) - 1; i >= 0; i-- {
		e := d.Chain[i]
		title := "Thrown"
		if i != len(d.Chain)-1 {
			title = "Caused by"
		}
		if len(out) > 0 {
			out = append(out, "")
		}
		out = append(out, wrapped(st.Section, title+": "+e.Class, w)...)
		if e.Message != "" {
			out = append(out, wrapped(lipgloss.NewStyle(), e.Message, w)...)
		}
		if loc := e.Location(); loc != "" {
			out = append(out, wrapped(st.Muted, "at "+loc, w)...)
		}
		out = append(out, frameLines(st, e.Frames, w)...)
	}
	return out
}

func frameLines(st styles, frames []exception.Frame, w int) []string {
	var out []string
	for _, f := range frames {
		mark, style := "  ", st.Vendor
		if !f.Vendor {
			mark, style = "▸ ", st.AppFrame
		}
		text := "#" + strconv.Itoa(f.Index) + " " + f.Raw
		for i, l := range wrapped(style, text, w-2) {
			if i > 0 {
				out = append(out, "    "+l)
				continue
			}
			out = append(out, mark+l)
		}
	}
	return out
}

// payloadLines pretty-prints the payload JSON with the serialized command
// replaced by a note, and then the command's decoded properties.
func payloadLines(st styles, d triage.Detail, w int) []string {
	var out []string
	if d.PayloadErr != nil {
		out = append(out, wrapped(st.ErrorText, "The payload is not valid JSON: "+errText(d.PayloadErr), w)...)
		return append(out, wrapped(lipgloss.NewStyle(), string(d.Payload), w)...)
	}
	shown := d.Payload
	if c := gjson.GetBytes(d.Payload, "data.command"); c.Exists() && c.Type == gjson.String {
		note := "‹" + count(len(c.String())) + " bytes of PHP serialization; properties below›"
		if d.Command == triage.CommandEncrypted {
			note = "‹encrypted, " + count(len(c.String())) + " bytes›"
		}
		if b, err := sjson.SetBytes(append([]byte(nil), d.Payload...), "data.command", note); err == nil {
			shown = b
		}
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, shown, "", "  "); err != nil {
		pretty.Reset()
		pretty.Write(shown)
	}
	out = append(out, wrapped(lipgloss.NewStyle(), pretty.String(), w)...)
	out = append(out, "", st.Section.Render("Command properties"))
	if d.CommandText != "" {
		out = append(out, wrapped(lipgloss.NewStyle(), d.CommandText, w)...)
	} else {
		out = append(out, wrapped(st.Muted, commandState(d), w)...)
	}
	return out
}
