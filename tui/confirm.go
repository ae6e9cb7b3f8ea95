package tui

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sanitize"
)

// confirmation is a pending action: the question, stating how many jobs it
// touches, the action that runs on "y", and for a retry the dry run's
// answer to "what would be retried and what skipped".
type confirmation struct {
	prompt  string
	details []string
	act     action
	total   int // the jobs the prompt states

	previewSeq int // the dry run this dialog waits for; 0: none
	preview    *triage.RetryResult
	previewErr error
}

// verbs say an action kind as a question, while it runs and once done.
var verbs = [...]struct{ ask, running, done string }{
	actionRetry:  {"Retry", "Retrying ", "Retried "},
	actionForget: {"Forget", "Forgetting ", "Forgot "},
}

// refOf addresses a job the way the store does: by uuid when it has one,
// else by row id (legacy rows with a NULL uuid stay reachable).
func refOf(j triage.Job) triage.Ref {
	if j.UUID != "" {
		return triage.Ref{UUID: j.UUID}
	}
	return triage.Ref{ID: j.RowID}
}

// maxListed is how many jobs or signatures a bulk confirmation names.
const maxListed = 3

// askJobs opens the confirmation for chosen jobs: the one under the cursor,
// or the marked ones. It returns the dry run of a retry.
func (m *Model) askJobs(kind actionKind, jobs []triage.Job) tea.Cmd {
	if m.readOnly() || len(jobs) == 0 {
		return nil
	}
	act := action{kind: kind}
	for _, j := range jobs { // one part per signature
		i := slices.IndexFunc(act.parts, func(p actionPart) bool { return p.sig == j.Signature })
		if i < 0 {
			i, act.parts = len(act.parts), append(act.parts, actionPart{sig: j.Signature})
		}
		act.parts[i].refs = append(act.parts[i].refs, refOf(j))
	}
	var c confirmation
	if len(jobs) == 1 {
		j := jobs[0]
		act.object, act.single = "job "+sanitize.Line(j.ID), true
		c.prompt = verbs[kind].ask + " 1 failed job " + sanitize.Truncate(j.ID, 40) + "?"
		c.details = []string{sanitize.Line(j.Class), exceptionText(j.ExceptionClass, j.ExceptionMessage)}
	} else {
		act.object = count(len(jobs)) + " marked jobs"
		c.prompt = verbs[kind].ask + " " + act.object + "?"
		var ids []string
		for _, j := range jobs[:min(len(jobs), maxListed)] {
			ids = append(ids, sanitize.Line(j.ID))
		}
		if len(jobs) > maxListed {
			ids = append(ids, "…")
		}
		c.details = []string{"Jobs " + strings.Join(ids, ", ")}
	}
	return m.openConfirm(c, act, len(jobs))
}

// askSignatures opens the confirmation for every job of the signatures
// (under the active filter, so the count it states is the count it
// touches). While a scan still runs the count is a lower bound and says so.
func (m *Model) askSignatures(kind actionKind, sigs []triage.Signature, partial bool) tea.Cmd {
	if m.readOnly() || len(sigs) == 0 {
		return nil
	}
	act := action{kind: kind, whole: true}
	n := 0
	for _, s := range sigs {
		act.parts = append(act.parts, actionPart{sig: s.ID, query: withSignature(m.query, s.ID)})
		n += s.Count
	}
	var c confirmation
	if len(sigs) == 1 {
		act.object = "signature " + sigs[0].ID
		c.details = []string{sanitize.Line(sigs[0].Class), exceptionText(sigs[0].ExceptionClass, sigs[0].Example)}
	} else {
		act.object = count(len(sigs)) + " signatures"
		for _, s := range sigs[:min(len(sigs), maxListed)] {
			c.details = append(c.details, s.ID+" ("+count(s.Count)+") "+sanitize.Line(classTail(s.Class, 40)))
		}
		if len(sigs) > maxListed {
			c.details = append(c.details, "…and "+count(len(sigs)-maxListed)+" more")
		}
	}
	c.prompt = verbs[kind].ask + " " + plural(n, "failed job", "failed jobs") + " of " + act.object + "?"
	if partial {
		c.prompt = verbs[kind].ask + " all failed jobs of " + act.object + " (" + count(n) + " counted so far)?"
	}
	if !m.query.Empty() {
		c.details = append(c.details, "Only jobs matching the filter: "+filterSummary(m.query))
	}
	return m.openConfirm(c, act, n)
}

// openConfirm shows c, for act on total jobs, over the current page; the
// dialog names where the action lands. A retry's dialog starts a dry run
// of the same action through Actions, so it can say before "y" what would
// be skipped (jobs on a connection jobtriage cannot write, passed
// retryUntil deadlines) and where the rest would go.
func (m *Model) openConfirm(c confirmation, act action, total int) tea.Cmd {
	stop(&m.cancelPreview)
	if act.kind == actionForget && m.opts.Archive != nil {
		act.archive, act.archivePath = m.opts.Archive, m.opts.ArchivePath
	}
	// Where the action lands (the app and the failed-jobs store), so that
	// an operator with several apps open cannot act on the wrong one.
	if m.opts.Connection != "" {
		c.details = append(c.details, "In "+sanitize.Line(m.opts.Connection))
	}
	c.act, c.total = act, total
	m.page, m.state = m.state, stateConfirm
	if act.kind != actionRetry {
		m.confirm = c
		return nil
	}
	c.previewSeq = m.nextSeq()
	m.confirm = c
	ctx, cancel := context.WithCancel(m.ctx)
	m.cancelPreview = cancel
	return tea.Batch(dryRunCmd(ctx, m.actions, c.act, c.previewSeq), m.startSpin())
}

// stop cancels what *cancel started, if anything, and forgets it.
func stop(cancel *context.CancelFunc) {
	if *cancel != nil {
		(*cancel)()
		*cancel = nil
	}
}

// closeConfirm leaves the dialog for the page under it.
func (m *Model) closeConfirm() {
	stop(&m.cancelPreview)
	m.keys.Confirm.Yes.SetEnabled(true)
	m.keys.Confirm.Copy.SetEnabled(false)
	m.state = m.page
	m.confirm = confirmation{}
}

func (m Model) onPreview(msg previewMsg) (Model, tea.Cmd) {
	if m.state != stateConfirm || msg.seq != m.confirm.previewSeq {
		return m, nil
	}
	stop(&m.cancelPreview)
	if msg.err != nil {
		m.confirm.previewErr = msg.err
		return m, nil
	}
	m.confirm.preview = &msg.res
	// y would retry nothing: it neither fires nor shows until the next
	// dialog.
	m.keys.Confirm.Yes.SetEnabled(!m.confirm.nothingToRetry())
	m.keys.Confirm.Copy.SetEnabled(artisanFallback(msg.res.Skipped, 0) != "")
	return m, nil
}

// nothingToRetry reports whether the dry run found no job to retry (every
// one skipped or gone).
func (c confirmation) nothingToRetry() bool {
	return c.preview != nil && c.preview.Retried == 0
}

// previewPending reports whether the dialog waits for its dry run.
func (c confirmation) previewPending() bool {
	return c.previewSeq != 0 && c.preview == nil && c.previewErr == nil
}

// previewLines are the dry run's answer for the dialog; spin is the
// spinner shown while it runs.
func (c confirmation) previewLines(spin string) []string {
	switch {
	case c.previewSeq == 0:
		return nil
	case c.previewErr != nil:
		return []string{"Dry run failed: " + errText(c.previewErr)}
	case c.preview == nil:
		return []string{spin + " Dry run: checking what would be retried and what skipped…"}
	}
	r := *c.preview
	var out []string
	switch {
	case r.Retried == 0 && len(r.Skipped) > 0:
		out = append(out, "Nothing would be retried: all "+count(len(r.Skipped))+" would be skipped, "+skipSummary(r.Skipped)+".")
	case r.Retried == 0:
		out = append(out, "Nothing would be retried.")
	default:
		line := "Dry run: " + count(r.Retried) + " would be retried"
		if len(r.ByQueue) > 0 {
			line += " onto " + queueList(r.ByQueue)
		}
		out = append(out, line+".")
		if len(r.Skipped) > 0 {
			out = append(out, "Would skip "+count(len(r.Skipped))+": "+skipSummary(r.Skipped)+".")
		}
	}
	if n := len(r.NotFound); n > 0 {
		out = append(out, count(n)+" already gone.")
	}
	return out
}

// artisanFallback is the command that retries the skipped jobs artisan can
// (on a connection jobtriage cannot write), naming the first limit of them
// (0: all); "" when there are none.
func artisanFallback(skips []triage.Skip, limit int) string {
	var ids []string
	n := 0
	for _, s := range skips {
		if triage.ArtisanCan(s.Code) {
			if limit == 0 || n < limit {
				ids = append(ids, sanitize.Line(s.ID))
			}
			n++
		}
	}
	if n == 0 {
		return ""
	}
	cmd := triage.ArtisanRetry(ids)
	if n > len(ids) {
		cmd += " … (" + count(n) + " jobs)"
	}
	return cmd
}

// confirmBody draws the question in a box in the middle of the body.
func (m Model) confirmBody(height int) []string {
	w := min(m.width-6, 72)
	lines := []string{m.st.Header.Render(sanitize.Truncate(m.confirm.prompt, w))}
	for _, d := range m.confirm.details {
		if d != "" {
			lines = append(lines, m.st.Muted.Render(sanitize.Truncate(d, w)))
		}
	}
	if p := m.confirm.previewLines(m.spin.View()); len(p) > 0 {
		lines = append(lines, "")
		style := m.st.Header
		if m.confirm.previewErr != nil {
			style = m.st.ErrorText
		}
		for _, l := range p {
			lines = append(lines, wrapped(style, l, w)...)
		}
		// The artisan command for the skipped jobs it can retry: the Copy
		// key copies it whole, the dialog shows its start on one line.
		if c := m.keys.Confirm.Copy; m.confirm.preview != nil && c.Enabled() {
			lines = append(lines, wrapped(m.st.Header, "Artisan can retry the skipped jobs ("+c.Help().Key+" copies the command):", w)...)
			lines = append(lines, m.st.Muted.Render(sanitize.Truncate(artisanFallback(m.confirm.preview.Skipped, maxListed), w)))
		}
	}
	hint := "y confirm · n cancel"
	switch a := m.confirm.act; {
	case m.confirm.nothingToRetry():
		hint = "n close"
	case a.kind == actionForget && a.archive != nil:
		hint = "y forget (each row archived to " + sanitize.Line(a.archivePath) + " first) · n cancel"
	case a.kind == actionForget:
		hint = "y forget (cannot be undone) · n cancel"
	}
	lines = append(lines, "", hint)
	box := m.st.Box.Width(w + 2).Render(strings.Join(lines, "\n"))
	return center(strings.Split(box, "\n"), m.width, height)
}

// center places lines in the middle of a width×height area.
func center(lines []string, width, height int) []string {
	out := make([]string, max((height-len(lines))/2, 0), height)
	for _, l := range lines {
		pad := max((width-sanitize.Width(ansi.Strip(l)))/2, 0)
		out = append(out, strings.Repeat(" ", pad)+l)
	}
	return out
}

// actionSummary is the status line after an action: what it did in the
// words an operator uses ("Retried job X onto default."), then what it left
// alone and why.
func actionSummary(msg actionMsg) string {
	a, r, f := msg.act, msg.retry, msg.forget
	if msg.err != nil {
		done := ""
		if n := msg.done(); n > 0 {
			done = " after " + plural(n, "job", "jobs")
		}
		return verbs[a.kind].ask + " of " + a.object + " failed" + done + ": " + errText(msg.err)
	}
	n, gone, past := r.Retried, len(r.NotFound), verbs[a.kind].done
	if a.kind == actionForget {
		n, gone = f.Deleted, len(f.NotFound)
	}
	var b strings.Builder
	switch {
	case a.single && n == 1:
		b.WriteString(past + a.object)
	case a.single && len(r.Skipped) == 1:
		return "Did not retry " + a.object + ": " + sanitize.Line(r.Skipped[0].Reason) + "."
	case a.single:
		return capitalize(a.object) + " was already gone."
	case n == 0 && a.kind == actionRetry:
		b.WriteString("Retried nothing of " + a.object)
	case a.whole:
		b.WriteString(past + plural(n, "job", "jobs") + " of " + a.object)
	default:
		b.WriteString(past + count(n) + " of " + a.object)
	}
	if len(r.ByQueue) > 0 && n > 0 {
		b.WriteString(" onto " + queueList(r.ByQueue))
	}
	if len(r.Skipped) > 0 {
		b.WriteString("; skipped " + count(len(r.Skipped)) + ": " + skipSummary(r.Skipped))
	}
	if gone > 0 {
		b.WriteString("; " + count(gone) + " already gone")
	}
	if a.archive != nil && f.Deleted > 0 {
		b.WriteString("; archived to " + sanitize.Line(a.archivePath) + " first")
	}
	return b.String() + "."
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// skipSummary counts skipped jobs by reason, biggest first: "20 on
// connection redis (not writable by jobtriage), 4 past retryUntil".
func skipSummary(skips []triage.Skip) string {
	counts := map[string]int{}
	for _, s := range skips {
		counts[skipLabel(s)]++
	}
	labels := slices.SortedFunc(maps.Keys(counts), func(a, b string) int {
		return cmp.Or(counts[b]-counts[a], strings.Compare(a, b))
	})
	for i, l := range labels {
		labels[i] = count(counts[l]) + " " + l
	}
	return strings.Join(labels, ", ")
}

// skipLabel is the short reason of one skip; the full reason is in the
// CLI's retry --dry-run output.
func skipLabel(s triage.Skip) string {
	switch s.Code {
	case triage.SkipNotDatabase:
		return "on connection " + sanitize.Line(s.Connection) + " (not writable by jobtriage)"
	case triage.SkipRetryUntil:
		return "past retryUntil"
	case triage.SkipMalformed:
		return "with a malformed payload"
	case triage.SkipNoJobsTable:
		return "on connection " + sanitize.Line(s.Connection) + " (no jobs table)"
	}
	return sanitize.Line(s.Reason)
}

// queueList is "default (3), emails (1)" in name order.
func queueList(byQueue map[string]int) string {
	names := slices.Sorted(maps.Keys(byQueue))
	for i, q := range names {
		names[i] = sanitize.Line(q) + " (" + count(byQueue[q]) + ")"
	}
	return strings.Join(names, ", ")
}
