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
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/detailview"
	"github.com/jobtriage/jobtriage/triage/sanitize"
)

// detailPage is one job: the sections of the detail model, one tab each
// (as `jobtriage show` prints them one after the other), and the payload's
// JSON, each rendered into a scrolling viewport.
type detailPage struct {
	seq     int
	job     triage.Job // the row it was opened from, shown while loading
	d       triage.Detail
	loaded  bool
	loading bool
	err     error
	section int // the open tab
	vp      viewport.Model
	// tabs are the tabs' names and rendered their text at the current
	// width, so that switching tabs and scrolling do not re-render.
	tabs     []string
	rendered []string
	width    int
	now      time.Time
}

// jsonTab is the tab after the model's sections: the payload as stored.
const jsonTab = "JSON"

func (m Model) openDetail(j triage.Job) (Model, tea.Cmd) {
	m.state = stateDetail
	seq := m.nextSeq()
	m.detail = detailPage{seq: seq, job: j, loading: true, vp: viewport.New(m.width, m.bodyHeight()-1)}
	k := m.keys.Detail
	m.detail.vp.KeyMap = viewport.KeyMap{Up: k.Up, Down: k.Down, PageUp: k.PageUp, PageDown: k.PageDown}
	return m, tea.Batch(showCmd(m.ctx, m.backend, j.ID, seq), m.startSpin())
}

func (p *detailPage) resize(st styles, w, h int) {
	p.vp.Width, p.vp.Height = w, h-1
	if p.loaded && p.width != w {
		p.render(st, p.now, w, h)
	}
}

// render lays out every tab for width w.
func (p *detailPage) render(st styles, now time.Time, w, h int) {
	p.width, p.now = w, now
	p.vp.Width, p.vp.Height = w, h-1
	p.tabs, p.rendered = nil, nil
	for _, s := range detailview.Build(p.d, now, 0) {
		p.tabs = append(p.tabs, s.Name)
		p.rendered = append(p.rendered, strings.Join(detailview.Layout(s, st.Detail, w), "\n"))
	}
	p.tabs = append(p.tabs, jsonTab)
	p.rendered = append(p.rendered, strings.Join(jsonLines(p.d, w), "\n"))
	p.vp.SetContent(p.rendered[p.section])
}

func (m Model) detailKey(msg tea.KeyMsg) (Model, tea.Cmd) {
	k := m.keys.Detail
	switch {
	case key.Matches(msg, k.Back):
		m.state = stateJobs
		m.detail.seq = m.nextSeq()
	case key.Matches(msg, k.Section) && len(m.detail.tabs) > 0: // loaded
		n, step := len(m.detail.tabs), 1
		if msg.String() == "shift+tab" {
			step = n - 1
		}
		m.detail.section = (m.detail.section + step) % n
		m.detail.vp.SetContent(m.detail.rendered[m.detail.section])
		m.detail.vp.GotoTop()
	case m.detail.job.ID == "" && key.Matches(msg, k.Retry, k.Forget, k.Copy):
	case key.Matches(msg, k.Retry):
		return m, m.askJobs(actionRetry, []triage.Job{m.detail.job})
	case key.Matches(msg, k.Forget):
		return m, m.askJobs(actionForget, []triage.Job{m.detail.job})
	case key.Matches(msg, k.Copy):
		return m, copyCmd(m.clipboard, "job id", m.detail.job.ID)
	case key.Matches(msg, k.Top):
		m.detail.vp.GotoTop()
	case key.Matches(msg, k.Bottom):
		m.detail.vp.GotoBottom()
	default: // the scroll keys, through the viewport's key map
		m.detail.vp, _ = m.detail.vp.Update(msg)
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
	tabs := make([]string, len(p.tabs))
	for i, name := range p.tabs {
		if i == p.section {
			// Brackets, not only reverse video, so the open tab shows
			// under NO_COLOR too.
			tabs[i] = m.st.TabActive.Render("[" + name + "]")
		} else {
			tabs[i] = m.st.Muted.Render(" " + name + " ")
		}
	}
	head := strings.Join(tabs, " ")
	if pct := p.vp.ScrollPercent(); p.vp.TotalLineCount() > p.vp.Height {
		head += m.st.Muted.Render("  " + strconv.Itoa(int(pct*100)) + "%")
	}
	return append([]string{head}, strings.Split(p.vp.View(), "\n")...)
}

// wrapped makes database text safe and hard-wraps it to w cells, each line
// styled.
func wrapped(style lipgloss.Style, text string, w int) []string {
	lines := detailview.Wrap(sanitize.Text(text), w)
	for i, l := range lines {
		lines[i] = style.Render(l)
	}
	return lines
}

// jsonLines pretty-prints the payload as stored, with the serialized
// command (decoded in the Command tab) replaced by a note.
func jsonLines(d triage.Detail, w int) []string {
	shown := d.Payload
	if c := gjson.GetBytes(d.Payload, "data.command"); d.PayloadErr == nil && c.Exists() && c.Type == gjson.String {
		note := "‹" + count(len(c.String())) + " bytes of PHP serialization; decoded under Command›"
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
	return wrapped(lipgloss.NewStyle(), pretty.String(), w)
}
