package tui

import (
	"cmp"
	"context"
	"io"
	"strconv"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/spinner"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/jobtriage/jobtriage/alerts"
	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sanitize"
)

// state is what the root model shows: a page (signatures, jobs, detail) or
// an overlay above one (confirm, help, filter). Loading and error are states
// of each page's data, shown in its body.
type state int

const (
	stateSignatures state = iota
	stateJobs
	stateDetail
	stateConfirm
	stateHelp
	stateFilter
)

func (s state) String() string {
	return [...]string{"signatures", "jobs", "detail", "confirm", "help", "filter"}[s]
}

// Model is the root bubbletea model. It is a value: Update returns a changed
// copy, and Cmds are built from values, never from the model.
type Model struct {
	ctx     context.Context
	backend Backend
	actions Actions // nil in read-only mode
	opts    Options
	now     func() time.Time
	// tick schedules a message after a delay (tea.Tick); tests replace it so
	// that running every returned Cmd synchronously never sleeps.
	tick func(time.Duration, func(time.Time) tea.Msg) tea.Cmd

	st       styles
	keys     keyMap
	help     help.Model
	spin     spinner.Model
	spinning bool
	width    int
	height   int

	state state
	page  state        // the page under an overlay
	query triage.Query // the active filter; never carries a Signature
	seq   int          // numbers requests so stale answers are dropped

	sigs    sigList
	jobs    jobList
	detail  detailPage
	confirm confirmation
	filter  filterForm
	window  windowState
	status  statusLine
	running running

	cancelScan    context.CancelFunc
	cancelPreview context.CancelFunc // the dry run of the open retry dialog
	firstScan     tea.Cmd            // the scan Init starts; New sets it up so Init need not change the model
	// clipboard is where y writes its OSC 52 sequence: the terminal.
	clipboard io.Writer
}

// statusLine is the feedback after an action (wrapped when long); busy
// while an action runs, when it shows the action's progress instead.
type statusLine struct {
	text  string
	isErr bool
	busy  bool
}

// running is the action in flight: what it is, how many jobs it should
// move (the dry run's count when there was one) and how far it has come.
type running struct {
	seq     int
	act     action
	total   int
	done    int
	started time.Time
}

// windowState is the failure count of the alert window for the header;
// known once counted.
type windowState struct {
	windowMsg
	known bool
}

// New builds the root model. out is where the program draws; colours are
// detected on it.
func New(ctx context.Context, b Backend, a Actions, opts Options, out io.Writer) Model {
	ctx, out = cmp.Or(ctx, context.Background()), cmp.Or(out, io.Writer(io.Discard))
	if opts.ReadOnly {
		a = nil
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	r := newRenderer(out, opts.NoColor)
	if opts.DarkBackground != nil {
		r.SetHasDarkBackground(*opts.DarkBackground) // never ask the terminal again
	}
	st := newStyles(r)
	h := help.New()
	h.Styles = st.Help
	sp := spinner.New(spinner.WithSpinner(spinner.MiniDot), spinner.WithStyle(st.Crumb))
	m := Model{
		ctx: ctx, backend: b, actions: a, opts: opts, now: now, tick: tea.Tick,
		st: st, keys: newKeyMap(a == nil), help: h, spin: sp,
		width: 80, height: 24, clipboard: out,
	}
	m.firstScan = m.startGroup(false)
	m.window.seq = m.nextSeq()
	m.spinning = true // Init starts it
	return m
}

// readOnly reports whether actions are hidden.
func (m Model) readOnly() bool { return m.actions == nil }

// Init starts the signature scan (prepared by New), the window count, the
// auto-refresh tick and the spinner.
func (m Model) Init() tea.Cmd {
	return tea.Batch(m.firstScan, m.windowCount(m.window.seq), m.scheduleRefresh(), m.startSpinCmd())
}

func (m Model) scheduleRefresh() tea.Cmd {
	if m.opts.Refresh <= 0 {
		return nil
	}
	return m.tick(m.opts.Refresh, func(time.Time) tea.Msg { return refreshMsg{} })
}

const spinEvery = 100 * time.Millisecond

func (m Model) windowCount(seq int) tea.Cmd {
	if m.opts.Window <= 0 {
		return nil
	}
	return windowCmd(m.ctx, m.backend, m.now(), m.opts.Window, seq)
}

func (m *Model) nextSeq() int {
	m.seq++
	return m.seq
}

// loading reports whether anything is being fetched (the spinner turns).
func (m Model) loading() bool {
	return m.sigs.loading || m.jobs.loading || m.jobs.loadingMore || m.detail.loading || m.status.busy ||
		m.confirm.previewPending()
}

func (m Model) startSpinCmd() tea.Cmd {
	return m.tick(spinEvery, func(time.Time) tea.Msg { return spinMsg{} })
}

// startSpin starts the spinner unless it already turns.
func (m *Model) startSpin() tea.Cmd {
	if m.spinning {
		return nil
	}
	m.spinning = true
	return m.startSpinCmd()
}

// Update is the state machine. The detail viewport follows the body's
// height, which a wrapped status line changes.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	nm, cmd := m.update(msg)
	nm.detail.vp.Height = nm.bodyHeight() - 1
	return nm, cmd
}

func (m Model) update(msg tea.Msg) (Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
	case tea.KeyMsg:
		return m.handleKeys(msg)
	case previewMsg:
		return m.onPreview(msg)
	case copiedMsg:
		if msg.err != nil {
			m.status = statusLine{text: "Could not copy the " + msg.what + ": " + errText(msg.err), isErr: true}
		} else {
			m.status = statusLine{text: "Copied " + msg.what + " " + sanitize.Line(msg.text) + " (OSC 52)."}
		}
	case groupMsg:
		return m.onGroup(msg)
	case pageMsg:
		return m.onPage(msg)
	case detailMsg:
		return m.onDetail(msg)
	case windowMsg:
		if msg.seq == m.window.seq {
			m.window = windowState{windowMsg: msg, known: msg.err == nil}
		}
	case actionMsg:
		m.running = running{}
		return m.onAction(msg)
	case actionProgressMsg:
		if msg.seq == m.running.seq {
			m.running.done = msg.done
			return m, msg.more
		}
	case refreshMsg:
		cmd := m.refresh()
		return m, tea.Batch(cmd, m.scheduleRefresh())
	case spinMsg:
		if !m.loading() {
			m.spinning = false
			return m, nil
		}
		m.spinning = true
		m.spin, _ = m.spin.Update(spinner.TickMsg{})
		return m, m.startSpinCmd()
	}
	return m, nil
}

func (m *Model) resize(w, h int) {
	m.width, m.height = max(w, 20), max(h, 8)
	m.help.Width = m.width
	m.clearStatus() // it was laid out for the old width
	m.detail.resize(m.st, m.width, m.bodyHeight())
}

// bodyHeight is the rows between the two header lines and the status
// (one line, two when a long status wraps) and footer lines.
func (m Model) bodyHeight() int { return m.height - 3 - len(m.statusLines()) }

// handleKeys handles a key message. Bubbletea v1 reports runes that arrive
// in one read as one KeyRunes message, so "gjjjr" typed (or sent by tmux)
// quickly would match no binding and be lost: each rune is handled as its
// own key, except in the filter form, where the rest of the burst is typed
// text. A paste stays whole: it is text.
func (m Model) handleKeys(msg tea.KeyMsg) (Model, tea.Cmd) {
	if msg.Type != tea.KeyRunes || msg.Paste || len(msg.Runes) < 2 {
		return m.handleKey(msg)
	}
	var cmds []tea.Cmd
	for i, r := range msg.Runes {
		if m.state == stateFilter {
			nm, cmd := m.handleKey(tea.KeyMsg{Type: tea.KeyRunes, Runes: msg.Runes[i:], Alt: msg.Alt})
			return nm, tea.Batch(append(cmds, cmd)...)
		}
		var cmd tea.Cmd
		m, cmd = m.handleKey(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt})
		cmds = append(cmds, cmd)
	}
	return m, tea.Batch(cmds...)
}

// handleKey handles one key. A status line belongs to the screen it was
// said on: a key that changes the page or opens or closes a dialog clears
// it, unless the key itself said something.
func (m Model) handleKey(msg tea.KeyMsg) (Model, tea.Cmd) {
	before, said := m.state, m.status
	nm, cmd := m.dispatchKey(msg)
	if nm.state != before && nm.status == said {
		nm.clearStatus()
	}
	return nm, cmd
}

// clearStatus removes the status line, except while an action runs.
func (m *Model) clearStatus() {
	if !m.status.busy {
		m.status = statusLine{}
	}
}

func (m Model) dispatchKey(msg tea.KeyMsg) (Model, tea.Cmd) {
	if msg.String() == "ctrl+c" {
		return m, m.quit()
	}
	switch m.state {
	case stateFilter:
		return m.filterKey(msg)
	case stateConfirm:
		switch {
		case key.Matches(msg, m.keys.Confirm.Yes):
			c := m.confirm
			total := c.total
			if c.preview != nil {
				total = c.preview.Retried
			}
			m.running = running{seq: m.nextSeq(), act: c.act, total: total, started: m.now()}
			cmd := actionCmd(m.ctx, m.actions, c.act, m.running.seq)
			m.closeConfirm()
			m.status = statusLine{busy: true}
			return m, tea.Batch(cmd, m.startSpin())
		case key.Matches(msg, m.keys.Confirm.Copy):
			return m, copyCmd(m.clipboard, "artisan command", artisanFallback(m.confirm.preview.Skipped, 0))
		case key.Matches(msg, m.keys.Confirm.No):
			m.closeConfirm()
			m.status = statusLine{text: "Cancelled."}
		}
		return m, nil
	case stateHelp:
		if key.Matches(msg, m.keys.HelpClose) {
			m.state = m.page
		}
		return m, nil
	}
	switch {
	case key.Matches(msg, m.keys.Global.Quit):
		return m, m.quit()
	case key.Matches(msg, m.keys.Global.Help):
		m.page, m.state = m.state, stateHelp
		return m, nil
	case key.Matches(msg, m.keys.Global.Refresh):
		m.status = statusLine{}
		return m, m.refresh()
	}
	switch m.state {
	case stateJobs:
		return m.jobsKey(msg)
	case stateDetail:
		return m.detailKey(msg)
	default:
		return m.signaturesKey(msg)
	}
}

func (m Model) quit() tea.Cmd {
	stop(&m.cancelScan)
	stop(&m.cancelPreview)
	return tea.Quit
}

// runningText is the status while an action runs: what, how far, and
// about how long is left once there is a rate to go by.
func (m Model) runningText() string {
	r := m.running
	verb := verbs[r.act.kind].running
	if r.act.single || r.total <= 0 {
		return verb + r.act.object + "…"
	}
	if r.done == 0 {
		return verb + plural(r.total, "job", "jobs") + " of " + r.act.object + "…"
	}
	text := verb + r.act.object + ": " + count(r.done) + " of " + count(r.total)
	if r.done <= r.total {
		text += " (" + strconv.Itoa(r.done*100/r.total) + "%)"
		if elapsed := m.now().Sub(r.started); elapsed > 0 && r.done < r.total {
			left := time.Duration(float64(elapsed) / float64(r.done) * float64(r.total-r.done))
			text += ", about " + alerts.FormatDuration(left.Round(time.Second)+time.Second) + " left"
		}
	}
	return text
}

// refresh re-reads what the current page shows: the signatures (kept on
// screen until the new scan ends), the window count, and the jobs list.
func (m *Model) refresh() tea.Cmd {
	var cmds []tea.Cmd
	if !m.sigs.loading || m.sigs.err != nil {
		cmds = append(cmds, m.startGroup(true))
	}
	seq := m.nextSeq()
	m.window.seq = seq
	cmds = append(cmds, m.windowCount(seq))
	if m.page == stateJobs || m.state == stateJobs || m.state == stateDetail {
		cmds = append(cmds, m.reloadJobs())
	}
	return tea.Batch(append(cmds, m.startSpin())...)
}

// startGroup starts a new scan and cancels the one in flight. A refresh
// keeps the current rows on screen and swaps them when the scan ends; a new
// filter streams its snapshots in.
func (m *Model) startGroup(refresh bool) tea.Cmd {
	stop(&m.cancelScan)
	ctx, cancel := context.WithCancel(m.ctx)
	m.cancelScan = cancel
	m.sigs.startScan(m.nextSeq(), refresh && len(m.sigs.items) > 0)
	return groupCmd(ctx, m.backend, triage.GroupParams{Query: m.query, Window: m.opts.TrendWindow, NewSince: m.opts.NewSince}, m.sigs.seq)
}

func (m Model) onGroup(msg groupMsg) (Model, tea.Cmd) {
	if msg.seq != m.sigs.seq {
		return m, nil
	}
	if msg.err != nil {
		// A failed refresh keeps the rows; the status line says they are
		// stale, and why, until one succeeds (statusLines).
		m.sigs.fail(msg.err)
		m.cancelScan = nil
		return m, nil
	}
	m.sigs.apply(msg.progress, m.now())
	if msg.progress.Done {
		stop(&m.cancelScan) // releases the scan's context
		return m, nil
	}
	return m, msg.more
}

func (m Model) onPage(msg pageMsg) (Model, tea.Cmd) {
	if msg.seq != m.jobs.seq {
		return m, nil
	}
	if msg.err != nil {
		m.jobs.loading, m.jobs.loadingMore = false, false
		if msg.append || len(m.jobs.items) > 0 {
			m.status = statusLine{text: "Could not load jobs: " + errText(msg.err), isErr: true}
		} else {
			m.jobs.err = msg.err
		}
		return m, nil
	}
	m.jobs.apply(msg.page, msg.append)
	return m, m.maybeLoadMore()
}

func (m Model) onDetail(msg detailMsg) (Model, tea.Cmd) {
	if msg.seq != m.detail.seq {
		return m, nil
	}
	m.detail.loading = false
	if msg.err != nil {
		m.detail.err = msg.err
		return m, nil
	}
	m.detail.d = msg.detail
	m.detail.loaded = true
	m.detail.render(m.st, m.now(), m.width, m.bodyHeight())
	return m, nil
}

// onAction shows what an action did and applies it to the lists at once
// (the jobs it took away leave, their signatures' counts drop), then
// re-reads: the screen never shows counts the database no longer has while
// the refresh runs. A failed multi-part action still applies the parts
// that ran.
func (m Model) onAction(msg actionMsg) (Model, tea.Cmd) {
	m.status = statusLine{text: actionSummary(msg), isErr: msg.err != nil}
	m.sigs.drop(msg.removed)
	m.jobs.drop(msg.ids())
	if n := msg.removed[m.jobs.sig.ID]; n > 0 {
		m.jobs.sig.Count = max(m.jobs.sig.Count-n, len(m.jobs.items))
	}
	if msg.err != nil && msg.done() == 0 {
		return m, nil
	}
	m.jobs.marked, m.sigs.marked = nil, nil
	// The job or signature is gone from the failed list: step back to the
	// list it was in and re-read it so that it visibly leaves.
	if m.state == stateDetail {
		m.state = stateJobs
	}
	if m.state == stateJobs && msg.act.whole {
		m.state = stateSignatures
	}
	return m, m.refresh()
}
