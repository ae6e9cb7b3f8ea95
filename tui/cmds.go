package tui

import (
	"context"
	"errors"
	"time"

	tea "github.com/charmbracelet/bubbletea"

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

// actionMsg answers a Retry or Forget.
type actionMsg struct {
	kind   actionKind
	what   string // "job 42", "signature ab12cd34"
	whole  bool   // a whole signature, not one job
	retry  triage.RetryResult
	forget triage.ForgetResult
	err    error
}

// refreshMsg is the auto-refresh tick.
type refreshMsg struct{}

// spinMsg advances the spinner while something loads.
type spinMsg struct{}

// groupProgressEvery is how many matching rows the scan reads between
// snapshots: small enough that the first counts show at once on a big table.
const groupProgressEvery = 1000

// groupCmd starts a Group scan in a goroutine and returns its first step.
// Snapshots go through a one-slot channel and a snapshot that finds the slot
// full replaces nothing and is dropped: each snapshot is complete, so the UI
// only ever needs the newest, and a slow terminal never slows the scan. The
// final step is always delivered (or the scan was cancelled).
func groupCmd(ctx context.Context, b Backend, q triage.Query, seq int) tea.Cmd {
	return func() tea.Msg {
		progress := make(chan triage.GroupProgress, 1)
		done := make(chan groupMsg, 1)
		go func() {
			sigs, err := b.Group(ctx, triage.GroupParams{
				Query:         q,
				ProgressEvery: groupProgressEvery,
				Progress: func(p triage.GroupProgress) {
					if p.Done {
						return // the final list arrives with done
					}
					select {
					case progress <- p:
					default:
					}
				},
			})
			done <- groupMsg{seq: seq, err: err,
				progress: triage.GroupProgress{Signatures: sigs, Fraction: 1, Done: true, Scanned: total(sigs)}}
		}()
		return nextGroupStep(ctx, progress, done, seq)()
	}
}

func nextGroupStep(ctx context.Context, progress chan triage.GroupProgress, done chan groupMsg, seq int) tea.Cmd {
	return func() tea.Msg {
		select {
		case p := <-progress:
			return groupMsg{seq: seq, progress: p, more: nextGroupStep(ctx, progress, done, seq)}
		case m := <-done:
			if m.err == nil && ctx.Err() != nil {
				m.err = ctx.Err()
			}
			return m
		}
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
			seen += len(page.Jobs)
			if page.Next == "" {
				return windowMsg{seq: seq, count: w.Count(now)}
			}
			if seen >= windowCountCap {
				return windowMsg{seq: seq, count: w.Count(now), capped: true}
			}
			p.Cursor = page.Next
		}
	}
}

// errNoActions is what an action says when the UI has no write path.
var errNoActions = errors.New("read-only: no write access")

func retryCmd(ctx context.Context, a Actions, p triage.RetryParams, what string, whole bool) tea.Cmd {
	return func() tea.Msg {
		msg := actionMsg{kind: actionRetry, what: what, whole: whole}
		if a == nil {
			msg.err = errNoActions
			return msg
		}
		msg.retry, msg.err = a.Retry(ctx, p)
		return msg
	}
}

func forgetCmd(ctx context.Context, a Actions, p triage.ForgetParams, what string, whole bool) tea.Cmd {
	return func() tea.Msg {
		msg := actionMsg{kind: actionForget, what: what, whole: whole}
		if a == nil {
			msg.err = errNoActions
			return msg
		}
		msg.forget, msg.err = a.Forget(ctx, p)
		return msg
	}
}
