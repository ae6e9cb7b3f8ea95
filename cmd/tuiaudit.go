package cmd

import (
	"context"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/tui"
)

// auditedActions records the UI's retries and forgets in the audit log as
// the commands do, a run id per call; dry runs (previews) are not recorded.
type auditedActions struct {
	inner tui.Actions
	audit func(auditEntry) error
	args  []string
	newID func() string
}

func (a auditedActions) Retry(ctx context.Context, p triage.RetryParams, progress func(int)) (r triage.RetryResult, err error) {
	if p.DryRun {
		return a.inner.Retry(ctx, p, progress)
	}
	err = audited(a.audit, a.entry("tui retry", p.Query, p.Refs), func(e *auditEntry) error {
		r, err = a.inner.Retry(ctx, p, progress)
		e.Count, e.IDs, e.Skipped = int64(r.Retried), r.IDs, len(r.Skipped)
		return err
	})
	return r, err
}

func (a auditedActions) Forget(ctx context.Context, p triage.ForgetParams, progress func(int)) (r triage.ForgetResult, err error) {
	if p.DryRun {
		return a.inner.Forget(ctx, p, progress)
	}
	err = audited(a.audit, a.entry("tui forget", p.Query, p.Refs), func(e *auditEntry) error {
		r, err = a.inner.Forget(ctx, p, progress)
		e.Count, e.IDs = int64(r.Deleted), r.IDs
		return err
	})
	return r, err
}

// entry is a UI action's audit line, with a run id of its own: its query (a
// signature under the list's filter) and the jobs chosen one by one.
func (a auditedActions) entry(command string, q triage.Query, refs []triage.Ref) auditEntry {
	f := auditFilterOf(q)
	for _, r := range refs {
		f.Jobs = append(f.Jobs, r.String())
	}
	return auditEntry{Run: a.newID(), Command: command, Args: a.args, Filter: f}
}
