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

func (a auditedActions) Retry(ctx context.Context, p triage.RetryParams) (triage.RetryResult, error) {
	if p.DryRun {
		return a.inner.Retry(ctx, p)
	}
	e := auditEntry{Run: a.newID(), Phase: auditIntent, Command: "tui retry", Args: a.args, Filter: tuiAuditFilter(p.Query, p.Refs)}
	if err := a.audit(e); err != nil {
		return triage.RetryResult{}, err
	}
	res, err := a.inner.Retry(ctx, p)
	e.Phase, e.Count, e.IDs, e.Skipped, e.Error = auditOutcome, int64(res.Retried), res.IDs, len(res.Skipped), auditError(err)
	if aerr := a.audit(e); aerr != nil && err == nil {
		err = aerr
	}
	return res, err
}

func (a auditedActions) Forget(ctx context.Context, p triage.ForgetParams) (triage.ForgetResult, error) {
	if p.DryRun {
		return a.inner.Forget(ctx, p)
	}
	e := auditEntry{Run: a.newID(), Phase: auditIntent, Command: "tui forget", Args: a.args, Filter: tuiAuditFilter(p.Query, p.Refs)}
	if err := a.audit(e); err != nil {
		return triage.ForgetResult{}, err
	}
	res, err := a.inner.Forget(ctx, p)
	e.Phase, e.Count, e.IDs, e.Error = auditOutcome, int64(res.Deleted), res.IDs, auditError(err)
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
