package tui

import (
	"context"
	"io"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/spinner"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/jobtriage/jobtriage/triage"
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

	cancelScan context.CancelFunc
	firstScan  tea.Cmd // the scan Init starts; New sets it up so Init need not change the model
}

// statusLine is the one line of feedback after an action.
type statusLine struct {
	text  string
	isErr bool
}

// windowState is the failure count of the alert window for the header.
type windowState struct {
	seq    int
	known  bool
	count  int
	capped bool
	err    error
}

// New builds the root model. out is where the program draws; colours are
// detected on it.
func New(ctx context.Context, b Backend, a Actions, opts Options, out io.Writer) Model {
	if ctx == nil {
		ctx = context.Background()
	}
	if opts.ReadOnly {
		a = nil
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	if out == nil {
		out = io.Discard
	}
	r := newRenderer(out, opts.NoColor)
	st := newStyles(r)
	h := help.New()
	h.Styles = st.Help
	sp := spinner.New(spinner.WithSpinner(spinner.MiniDot), spinner.WithStyle(st.Crumb))
	m := Model{
		ctx: ctx, backend: b, actions: a, opts: opts, now: now, tick: tea.Tick,
		st: st, keys: newKeyMap(a == nil), help: h, spin: sp,
		width: 80, height: 24,
		filter: newFilterForm(st),
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
	return m.sigs.loading || m.jobs.loading || m.jobs.loadingMore || m.detail.loading || m.status.text == busyText
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

// Update is the state machine.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
		return m, nil
	case tea.KeyMsg:
		return m.handleKey(msg)
	case groupMsg:
		return m.onGroup(msg)
	case pageMsg:
		return m.onPage(msg)
	case detailMsg:
		return m.onDetail(msg)
	case windowMsg:
		if msg.seq == m.window.seq {
			m.window = windowState{seq: msg.seq, known: msg.err == nil, count: msg.count, capped: msg.capped, err: msg.err}
		}
		return m, nil
	case actionMsg:
		return m.onAction(msg)
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
		return m, m.tick(spinEvery, func(time.Time) tea.Msg { return spinMsg{} })
	}
	return m, nil
}

func (m *Model) resize(w, h int) {
	if w < 20 {
		w = 20
	}
	if h < 8 {
		h = 8
	}
	m.width, m.height = w, h
	m.help.Width = w
	m.detail.resize(m.st, w, m.bodyHeight())
}

// bodyHeight is the rows between the two header lines and the status and
// footer lines.
func (m Model) bodyHeight() int { return m.height - 4 }

func (m Model) handleKey(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	if msg.String() == "ctrl+c" {
		return m, m.quit()
	}
	switch m.state {
	case stateFilter:
		return m.filterKey(msg)
	case stateConfirm:
		switch {
		case key.Matches(msg, m.keys.Confirm.Yes):
			cmd := m.confirm.run
			m.state = m.page
			m.confirm = confirmation{}
			m.status = statusLine{text: busyText}
			return m, tea.Batch(cmd, m.startSpin())
		case key.Matches(msg, m.keys.Confirm.No):
			m.state = m.page
			m.confirm = confirmation{}
			m.status = statusLine{text: "Cancelled."}
		}
		return m, nil
	case stateHelp:
		switch {
		case key.Matches(msg, m.keys.HelpClose):
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
	if m.cancelScan != nil {
		m.cancelScan()
	}
	return tea.Quit
}

// busyText is the status while an action runs.
const busyText = "Working…"

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
	if m.cancelScan != nil {
		m.cancelScan()
	}
	ctx, cancel := context.WithCancel(m.ctx)
	m.cancelScan = cancel
	seq := m.nextSeq()
	keep := refresh && len(m.sigs.items) > 0
	m.sigs.startScan(seq, keep)
	return groupCmd(ctx, m.backend, m.query, seq)
}

func (m Model) onGroup(msg groupMsg) (tea.Model, tea.Cmd) {
	if msg.seq != m.sigs.seq {
		return m, nil
	}
	if msg.err != nil {
		if m.sigs.refreshing {
			m.status = statusLine{text: "Refresh failed: " + errText(msg.err), isErr: true}
		}
		m.sigs.fail(msg.err)
		m.cancelScan = nil
		return m, nil
	}
	m.sigs.apply(msg.progress)
	if msg.progress.Done {
		if m.cancelScan != nil {
			m.cancelScan() // releases the scan's context
			m.cancelScan = nil
		}
		return m, nil
	}
	return m, msg.more
}

func (m Model) onPage(msg pageMsg) (tea.Model, tea.Cmd) {
	if msg.seq != m.jobs.seq {
		return m, nil
	}
	if msg.err != nil {
		if msg.append || len(m.jobs.items) > 0 {
			m.status = statusLine{text: "Could not load jobs: " + errText(msg.err), isErr: true}
			m.jobs.loading, m.jobs.loadingMore = false, false
			return m, nil
		}
		m.jobs.loading, m.jobs.loadingMore = false, false
		m.jobs.err = msg.err
		return m, nil
	}
	m.jobs.apply(msg.page, msg.append)
	return m, m.maybeLoadMore()
}

func (m Model) onDetail(msg detailMsg) (tea.Model, tea.Cmd) {
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

func (m Model) onAction(msg actionMsg) (tea.Model, tea.Cmd) {
	if msg.err != nil {
		verb := "Retry"
		if msg.kind == actionForget {
			verb = "Forget"
		}
		m.status = statusLine{text: verb + " of " + msg.what + " failed: " + errText(msg.err), isErr: true}
		return m, nil
	}
	m.status = statusLine{text: actionSummary(msg)}
	// The job or signature is gone from the failed list: step back to the
	// list it was in and re-read it so that it visibly leaves.
	switch m.state {
	case stateDetail:
		m.state = stateJobs
	}
	if m.state == stateJobs && msg.whole {
		m.state = stateSignatures
	}
	return m, m.refresh()
}
