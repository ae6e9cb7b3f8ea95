package cmd

import (
	"context"
	"strconv"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/tui"
)

// auditedActions records every retry and forget the terminal UI makes in
// the audit log, as the commands do: an intent line before the call
// changes anything (one that cannot be written stops the call) and an
// outcome line after it, with a run id of their own per call. Dry runs
// (a retry dialog's preview) change nothing and are not recorded.
type auditedActions struct {
	inner tui.Actions
	audit func(auditEntry) error
	args  []string
	newID func() string
}

func (a auditedActions) Retry(ctx context.Context, p triage.RetryParams, progress func(int)) (triage.RetryResult, error) {
	if p.DryRun {
		return a.inner.Retry(ctx, p, progress)
	}
	return auditedCall(a, "tui retry", tuiAuditFilter(p.Query, p.Refs),
		func() (triage.RetryResult, error) { return a.inner.Retry(ctx, p, progress) },
		func(r triage.RetryResult, e *auditEntry) {
			e.Count, e.IDs, e.Skipped = int64(r.Retried), r.IDs, len(r.Skipped)
		})
}

func (a auditedActions) Forget(ctx context.Context, p triage.ForgetParams, progress func(int)) (triage.ForgetResult, error) {
	if p.DryRun {
		return a.inner.Forget(ctx, p, progress)
	}
	return auditedCall(a, "tui forget", tuiAuditFilter(p.Query, p.Refs),
		func() (triage.ForgetResult, error) { return a.inner.Forget(ctx, p, progress) },
		func(r triage.ForgetResult, e *auditEntry) { e.Count, e.IDs = int64(r.Deleted), r.IDs })
}

// auditedCall writes the intent line, makes the call (not without that
// line), and writes the outcome line that outcome fills from its result.
// A failing outcome line is the call's error when the call had none.
func auditedCall[R any](a auditedActions, command string, filter *auditFilter, call func() (R, error), outcome func(R, *auditEntry)) (R, error) {
	e := auditEntry{Run: a.newID(), Phase: auditIntent, Command: command, Args: a.args, Filter: filter}
	if err := a.audit(e); err != nil {
		var none R
		return none, err
	}
	res, err := call()
	e.Phase, e.Error = auditOutcome, auditError(err)
	outcome(res, &e)
	if aerr := a.audit(e); aerr != nil && err == nil {
		err = aerr
	}
	return res, err
}

// tuiAuditFilter is a UI action's selection: its query (a signature under
// the list's filter) and the jobs chosen one by one.
func tuiAuditFilter(q triage.Query, refs []triage.Ref) *auditFilter {
	f := auditFilterOf(q)
	for _, r := range refs {
		if r.UUID != "" {
			f.Jobs = append(f.Jobs, r.UUID)
		} else {
			f.Jobs = append(f.Jobs, strconv.FormatInt(r.ID, 10))
		}
	}
	return f
}
