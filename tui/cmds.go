package tui

import (
	"context"
	"io"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/jobtriage/jobtriage/alerts"
	"github.com/jobtriage/jobtriage/triage"
)

// Every database call is a tea.Cmd built from values (the backend interface,
// params, a sequence number) so it never reads the model off the UI loop.
// Each result carries the seq of its request: a page that has moved on
// ignores answers to questions it no longer asks.

// groupMsg is one step of a streamed Group scan. While the scan runs, more
// reads the next step; Done steps carry the final list or the error.
type groupMsg struct {
	seq      int
	progress triage.GroupProgress
	err      error
	more     tea.Cmd
}

// pageMsg answers a List call.
type pageMsg struct {
	seq    int
	append bool // a next page for the current list, not a reload
	page   triage.Page
	err    error
}

// detailMsg answers a Show call.
type detailMsg struct {
	seq    int
	detail triage.Detail
	err    error
}

// windowMsg answers the failure count of the alert window.
type windowMsg struct {
	seq    int
	count  int
	capped bool // counting stopped at windowCountCap
	err    error
}

// actionKind is what a confirmed action does.
type actionKind int

const (
	actionRetry actionKind = iota
	actionForget
)

// actionPart is one call of an action: every job of one signature under
// the filter (query), or chosen jobs of it (refs).
type actionPart struct {
	sig   string
	query triage.Query
	refs  []triage.Ref
}

// action is a confirmed retry or forget: one call per part.
type action struct {
	kind   actionKind
	object string // "job 42", "signature ab12cd34ef", "3 signatures", "5 marked jobs"
	single bool   // one job
	whole  bool   // whole signatures, not chosen jobs
	dryRun bool   // a retry's dry run
	parts  []actionPart
	// archive receives a forget's rows before they are deleted (nil: no
	// archive); archivePath names it.
	archive     triage.Archiver
	archivePath string
}

// actionMsg answers an action: the results of its calls merged, and how
// many jobs left each signature (so the lists can drop them at once).
type actionMsg struct {
	act     action
	retry   triage.RetryResult
	forget  triage.ForgetResult
	removed map[string]int // signature id → jobs retried or forgotten
	err     error          // the call that failed; the parts before it ran
}

// done is how many jobs the action took away.
func (m actionMsg) done() int {
	n := 0
	for _, c := range m.removed {
		n += c
	}
	return n
}

// ids are the jobs the action took away.
func (m actionMsg) ids() []string {
	if m.act.kind == actionForget {
		return m.forget.IDs
	}
	return m.retry.IDs
}

// previewMsg answers the dry run of a retry dialog.
type previewMsg struct {
	seq int
	res triage.RetryResult
	err error
}

// copiedMsg says whether an id reached the terminal's clipboard sequence.
type copiedMsg struct {
	what, text string
	err        error
}

// refreshMsg is the auto-refresh tick.
type refreshMsg struct{}

// spinMsg advances the spinner while something loads.
type spinMsg struct{}

// groupProgressEvery is how many matching rows the scan reads between
// snapshots: small enough that the first counts show at once on a big table.
const groupProgressEvery = 1000

// groupCmd starts a Group scan and returns its first step. Only the final
// step is sure to arrive: each snapshot is complete, so the UI only ever
// needs the newest, and a slow terminal never slows the scan.
func groupCmd(ctx context.Context, b Backend, p triage.GroupParams, seq int) tea.Cmd {
	p.ProgressEvery = groupProgressEvery
	return stream(func(report func(triage.GroupProgress)) tea.Msg {
		var sigs []triage.Signature
		var err error
		for g, gerr := range b.GroupSnapshots(ctx, p) {
			if err = gerr; err != nil || g.Done {
				sigs = g.Signatures // the final list arrives with done
				break
			}
			report(g)
		}
		if err == nil {
			err = ctx.Err() // cancelled: the list is not the whole one
		}
		return groupMsg{seq: seq, err: err,
			progress: triage.GroupProgress{Signatures: sigs, Fraction: 1, Done: true, Scanned: total(sigs)}}
	}, func(g triage.GroupProgress, more tea.Cmd) tea.Msg {
		return groupMsg{seq: seq, progress: g, more: more}
	})
}

// stream runs work in a goroutine and returns its first step: a report
// turned into a message by step, with the Cmd that waits for the next, or
// work's final message, which always arrives. Reports go through a one-slot
// channel where the newest replaces an unread one.
func stream[P any](work func(report func(P)) tea.Msg, step func(p P, more tea.Cmd) tea.Msg) tea.Cmd {
	return func() tea.Msg {
		progress := make(chan P, 1)
		done := make(chan tea.Msg, 1)
		go func() {
			done <- work(func(p P) {
				select {
				case <-progress:
				default:
				}
				progress <- p // the only sender: the slot is free
			})
		}()
		var next tea.Cmd
		next = func() tea.Msg {
			select {
			case p := <-progress:
				return step(p, next)
			case m := <-done:
				return m
			}
		}
		return next()
	}
}

func total(sigs []triage.Signature) int {
	n := 0
	for _, s := range sigs {
		n += s.Count
	}
	return n
}

// pageSize is how many jobs one List call asks for.
const pageSize = 50

func listCmd(ctx context.Context, b Backend, p triage.ListParams, seq int, appendPage bool) tea.Cmd {
	return func() tea.Msg {
		page, err := b.List(ctx, p)
		return pageMsg{seq: seq, append: appendPage, page: page, err: err}
	}
}

func showCmd(ctx context.Context, b Backend, id string, seq int) tea.Cmd {
	return func() tea.Msg {
		d, err := b.Show(ctx, id)
		return detailMsg{seq: seq, detail: d, err: err}
	}
}

// windowCountCap bounds the work of counting the alert window: past it the
// header says "≥ cap", which is over any sane threshold anyway.
const windowCountCap = 10000

// windowCmd counts the failures of the last width at now through an
// alerts.Window, paging newest first through the jobs since now−width.
func windowCmd(ctx context.Context, b Backend, now time.Time, width time.Duration, seq int) tea.Cmd {
	return func() tea.Msg {
		w, err := alerts.NewWindow(width)
		if err != nil {
			return windowMsg{seq: seq, err: err}
		}
		p := triage.ListParams{Query: triage.Query{Filter: triage.Filter{Since: now.Add(-width)}}, Limit: 500}
		seen := 0
		for {
			page, err := b.List(ctx, p)
			if err != nil {
				return windowMsg{seq: seq, err: err}
			}
			for _, j := range page.Jobs {
				w.Add(j.FailedAt)
			}
			if seen += len(page.Jobs); page.Next == "" || seen >= windowCountCap {
				return windowMsg{seq: seq, count: w.Count(now), capped: page.Next != ""}
			}
			p.Cursor = page.Next
		}
	}
}

// actionProgressMsg is how many jobs a running action has done; more
// waits for the next report or the end.
type actionProgressMsg struct {
	seq  int
	done int
	more tea.Cmd
}

// actionCmd runs an action and streams how many jobs it has done.
func actionCmd(ctx context.Context, a Actions, act action, seq int) tea.Cmd {
	return stream(func(report func(int)) tea.Msg { return runAction(ctx, a, act, report) },
		func(n int, more tea.Cmd) tea.Msg { return actionProgressMsg{seq: seq, done: n, more: more} })
}

// runAction makes the action's calls in turn; report is told the jobs
// done so far across them.
func runAction(ctx context.Context, a Actions, act action, report func(int)) actionMsg {
	msg := actionMsg{act: act, removed: map[string]int{}}
	base := 0
	progress := func(n int) { report(base + n) }
	for _, p := range act.parts {
		var n int
		if act.kind == actionRetry {
			var r triage.RetryResult
			r, msg.err = a.Retry(ctx, triage.RetryParams{Query: p.query, Refs: p.refs, DryRun: act.dryRun}, progress)
			mergeRetry(&msg.retry, r)
			n = r.Retried
		} else {
			var r triage.ForgetResult
			r, msg.err = a.Forget(ctx, triage.ForgetParams{Query: p.query, Refs: p.refs, Archive: act.archive}, progress)
			msg.forget.Deleted += r.Deleted
			msg.forget.IDs = append(msg.forget.IDs, r.IDs...)
			msg.forget.NotFound = append(msg.forget.NotFound, r.NotFound...)
			n = r.Deleted
		}
		msg.removed[p.sig] += n
		base += n
		if msg.err != nil {
			return msg
		}
	}
	return msg
}

// dryRunCmd asks Actions what a retry would do, changing nothing.
func dryRunCmd(ctx context.Context, a Actions, act action, seq int) tea.Cmd {
	act.dryRun = true
	return func() tea.Msg {
		r := runAction(ctx, a, act, func(int) {})
		r.retry.DryRun = true
		return previewMsg{seq: seq, res: r.retry, err: r.err}
	}
}

func mergeRetry(dst *triage.RetryResult, r triage.RetryResult) {
	dst.Retried += r.Retried
	dst.IDs = append(dst.IDs, r.IDs...)
	dst.Skipped = append(dst.Skipped, r.Skipped...)
	dst.NotFound = append(dst.NotFound, r.NotFound...)
	for q, n := range r.ByQueue {
		if dst.ByQueue == nil {
			dst.ByQueue = map[string]int{}
		}
		dst.ByQueue[q] += n
	}
}

// copyCmd puts text on the clipboard of the terminal the UI draws on with
// OSC 52, which works over ssh and needs no clipboard tool. The sequence
// goes out in one write, as the renderer's frames do, so it never lands
// inside a frame. Terminals that do not support OSC 52 (or tmux without
// set-clipboard on) ignore it.
func copyCmd(w io.Writer, what, text string) tea.Cmd {
	return func() tea.Msg {
		_, err := io.WriteString(w, ansi.SetSystemClipboard(text))
		return copiedMsg{what: what, text: text, err: err}
	}
}
