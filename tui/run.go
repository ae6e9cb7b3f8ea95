// Package tui is jobtriage's keyboard-first terminal UI: error signatures,
// the jobs of one signature, the detail of one job, and retry/forget behind
// confirmations. It renders the same triage use-cases as the CLI; every
// database call runs in a tea.Cmd, off the UI loop.
package tui

import (
	"context"
	"errors"
	"io"
	"iter"
	"os"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/tui/termbg"
)

// Backend reads failed jobs; triage.Service satisfies it.
type Backend interface {
	// GroupSnapshots folds jobs into signatures, yielding snapshots as
	// it goes and the final list last (Done).
	GroupSnapshots(ctx context.Context, p triage.GroupParams) iter.Seq2[triage.GroupProgress, error]
	// List returns one keyset page; p.Signature filters to one signature.
	List(ctx context.Context, p triage.ListParams) (triage.Page, error)
	Show(ctx context.Context, id string) (triage.Detail, error)
}

// Actions change failed jobs; ServiceActions is a triage.Service's. A nil
// Actions (or Options.ReadOnly) is read-only mode. progress, when not
// nil, is told the jobs done so far after each batch.
type Actions interface {
	Retry(ctx context.Context, p triage.RetryParams, progress func(done int)) (triage.RetryResult, error)
	Forget(ctx context.Context, p triage.ForgetParams, progress func(done int)) (triage.ForgetResult, error)
}

// ServiceActions are a service's retry and forget, run batch by batch.
type ServiceActions struct{ *triage.Service }

// Retry drains a retry run.
func (a ServiceActions) Retry(ctx context.Context, p triage.RetryParams, progress func(int)) (triage.RetryResult, error) {
	run := a.StartRetry(ctx, p)
	defer run.Close()
	var ids []string
	var skips []triage.Skip
	for run.Next(ctx) {
		b := run.Batch()
		ids, skips = append(ids, b.IDs...), append(skips, b.Skips...)
		if progress != nil {
			progress(b.Retried)
		}
	}
	res := run.Result()
	res.IDs, res.Skipped = ids, skips
	return res, run.Err()
}

// Forget drains a forget run.
func (a ServiceActions) Forget(ctx context.Context, p triage.ForgetParams, progress func(int)) (triage.ForgetResult, error) {
	run := a.StartForget(ctx, p)
	var ids []string
	for run.Next(ctx) {
		b := run.Batch()
		ids = append(ids, b.IDs...)
		if progress != nil {
			progress(b.Deleted)
		}
	}
	res := run.Result()
	res.IDs = ids
	return res, run.Err()
}

// Options configure the UI.
type Options struct {
	// ReadOnly hides retry and forget, and the header says so.
	ReadOnly bool
	// Connection names the database for the header; it must already be
	// redacted (no password).
	Connection string
	// Threshold is the alert threshold the window count is shown against;
	// 0 shows the count alone.
	Threshold int
	// Window is the alert window's width; 0 hides the window count.
	Window time.Duration
	// TrendWindow is the signatures' trend window (0: the triage default);
	// NewSince marks signatures first seen at or after it (zero: within
	// the last trend window).
	TrendWindow time.Duration
	NewSince    time.Time
	// Refresh re-reads the database this often; 0 never refreshes by itself.
	Refresh time.Duration
	// NoColor renders plain text whatever the terminal supports.
	NoColor bool
	// DarkBackground picks the shade of adaptive colours. nil leaves it to
	// lipgloss, which asks the terminal with a 5 s timeout: Run decides it
	// first (termbg.Dark, at most termbg.Timeout) whenever colour is on.
	DarkBackground *bool
	// Archive, when set, receives every row a forget deletes, whole, before
	// its batch is deleted (triage.ForgetParams.Archive); ArchivePath names
	// it in the forget dialog and the status line.
	Archive     triage.Archiver
	ArchivePath string
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Run shows the UI on out, reading keys from in, until the user quits or ctx
// ends.
func Run(ctx context.Context, b Backend, a Actions, opts Options, in io.Reader, out io.Writer) error {
	if b == nil {
		return errors.New("tui: no backend")
	}
	if opts.DarkBackground == nil && !opts.NoColor {
		// Before the program owns the terminal, and bounded: the fork of
		// bubbletea no longer asks at package initialisation.
		dark := termbg.Dark(in, out, os.Getenv, termbg.Timeout)
		opts.DarkBackground = &dark
		lipgloss.SetHasDarkBackground(dark) // bubbles' defaults use the default renderer
	}
	m := New(ctx, b, a, opts, out)
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out), tea.WithAltScreen())
	final, err := p.Run()
	if fm, ok := final.(Model); ok {
		stop(&fm.cancelScan)
	}
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// FirstScreen builds the model for a width×height terminal, runs the scan
// Init starts until the signatures page has something to show (the first
// snapshot of the scan, its end, or an error) and returns that render. It
// is the hook for measuring time to first screen on a large table:
//
//	for i := 0; i < b.N; i++ { tui.FirstScreen(ctx, svc, tui.Options{}, 120, 40) }
//
// The scan is cancelled before it returns.
func FirstScreen(ctx context.Context, b Backend, opts Options, width, height int) (string, error) {
	if b == nil {
		return "", errors.New("tui: no backend")
	}
	m := New(ctx, b, nil, opts, io.Discard)
	m.tick = noTick
	mm, _ := m.Update(tea.WindowSizeMsg{Width: width, Height: height})
	m = mm.(Model)
	defer func() { stop(&m.cancelScan) }()
	// Only the scan's steps: the header's window count is not what the
	// first screen waits for.
	for cmd := m.firstScan; cmd != nil; {
		g := cmd().(groupMsg)
		mm, cmd = m.Update(g)
		m = mm.(Model)
		if g.err != nil {
			return m.View(), g.err
		}
		if len(m.sigs.items) > 0 || g.progress.Done {
			break
		}
	}
	return m.View(), nil
}

// noTick schedules nothing: FirstScreen and tests drive time themselves.
func noTick(time.Duration, func(time.Time) tea.Msg) tea.Cmd { return nil }
