package cmd

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/jobtriage/jobtriage/triage"
)

// recordingActions is a tui.Actions that records its calls.
type recordingActions struct {
	calls []string
	err   error
}

func (r *recordingActions) Retry(_ context.Context, p triage.RetryParams, _ func(int)) (triage.RetryResult, error) {
	r.calls = append(r.calls, "retry dry="+strconv.FormatBool(p.DryRun))
	return triage.RetryResult{Retried: 2, IDs: []string{"u1", "u2"}, Skipped: []triage.Skip{{ID: "u3"}}}, r.err
}

func (r *recordingActions) Forget(_ context.Context, p triage.ForgetParams, _ func(int)) (triage.ForgetResult, error) {
	r.calls = append(r.calls, "forget")
	return triage.ForgetResult{Deleted: 1, IDs: []string{"u1"}}, r.err
}

// TestAuditedActions: each retry and forget the TUI makes writes an intent
// line before it and an outcome line after it, under a run id of its own;
// a preview writes nothing; an intent that cannot be written stops the
// call before it changes anything.
func TestAuditedActions(t *testing.T) {
	var lines []auditEntry
	inner := &recordingActions{}
	n := 0
	a := auditedActions{inner: inner, args: []string{"tui"}, audit: func(e auditEntry) error { lines = append(lines, e); return nil },
		newID: func() string { n++; return "run" + strconv.Itoa(n) }}
	ctx := context.Background()
	q := triage.Query{Signature: "ab12cd34ef", Filter: triage.Filter{Queues: []string{"emails"}}}

	if _, err := a.Retry(ctx, triage.RetryParams{Query: q, DryRun: true}, nil); err != nil || len(lines) != 0 {
		t.Fatalf("a dry run wrote %d lines (%v)", len(lines), err)
	}
	if _, err := a.Retry(ctx, triage.RetryParams{Query: q}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Forget(ctx, triage.ForgetParams{Refs: []triage.Ref{{UUID: "u1"}, {ID: 42}}}, nil); err != nil {
		t.Fatal(err)
	}
	type line struct {
		run, phase, command string
		count               int64
		ids                 []string
		skipped             int
		filter              auditFilter
	}
	var got []line
	for _, e := range lines {
		got = append(got, line{e.Run, e.Phase, e.Command, e.Count, e.IDs, e.Skipped, *e.Filter.(*auditFilter)})
	}
	want := []line{
		{"run1", auditIntent, "tui retry", 0, nil, 0, auditFilter{Queues: []string{"emails"}, Signature: "ab12cd34ef"}},
		{"run1", auditOutcome, "tui retry", 2, []string{"u1", "u2"}, 1, auditFilter{Queues: []string{"emails"}, Signature: "ab12cd34ef"}},
		{"run2", auditIntent, "tui forget", 0, nil, 0, auditFilter{Jobs: []string{"u1", "42"}}},
		{"run2", auditOutcome, "tui forget", 1, []string{"u1"}, 0, auditFilter{Jobs: []string{"u1", "42"}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("audit lines\n got %+v\nwant %+v", got, want)
	}

	// The action's own error is the outcome's error.
	inner.err = errors.New("deadlock")
	lines = nil
	if _, err := a.Forget(ctx, triage.ForgetParams{Query: q}, nil); err == nil || len(lines) != 2 || lines[1].Error != "deadlock" {
		t.Errorf("a failed forget: %v, lines %+v", err, lines)
	}

	// No intent line, no action.
	inner.calls, inner.err = nil, nil
	a.audit = func(e auditEntry) error { return errors.New("audit log: disk full") }
	for name, call := range map[string]func() error{
		"retry":  func() error { _, err := a.Retry(ctx, triage.RetryParams{Query: q}, nil); return err },
		"forget": func() error { _, err := a.Forget(ctx, triage.ForgetParams{Query: q}, nil); return err },
	} {
		if err := call(); err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Errorf("%s without an intent line: %v", name, err)
		}
	}
	if len(inner.calls) != 0 {
		t.Errorf("acted without an intent line: %v", inner.calls)
	}
}

// TestTUIChecksTheAuditLogFirst: a tui that may act refuses an audit log
// it cannot append to before it starts (exit 5); --read-only never writes
// one, so it does not check.
func TestTUIChecksTheAuditLogFirst(t *testing.T) {
	dsn, _ := seed(t)
	bad := filepath.Join(t.TempDir(), "missing", "audit.log")
	h := newHarness(t, true)
	if code := Run(context.Background(), h.f, []string{"tui", "--dsn", dsn, "--audit-log", bad, "--refresh", "0"}); code != ExitUnreachable ||
		!strings.Contains(h.errOut.String(), "audit log") {
		t.Errorf("tui with an unwritable audit log: exit %d: %s", code, h.errOut.String())
	}
	h = newHarness(t, true)
	h.in.WriteString("q")
	if code := Run(context.Background(), h.f, []string{"tui", "--dsn", dsn, "--audit-log", bad, "--read-only", "--refresh", "0"}); code != ExitOK {
		t.Errorf("tui --read-only with an unwritable audit log: exit %d: %s", code, h.errOut.String())
	}
}

// TestTUIActionsAreAudited: the actions tui hands the UI are the service's,
// recorded in the factory's audit log (a forget through them leaves an
// intent and an outcome line and deletes the row), and none with
// --read-only.
func TestTUIActionsAreAudited(t *testing.T) {
	dsn, store := seed(t)
	h := newHarness(t, true)
	h.f.Conn.DSN = dsn
	logPath := filepath.Join(t.TempDir(), "audit.log")
	h.f.AuditLog = logPath
	parse := func(args ...string) *TUIOptions {
		t.Helper()
		var got *TUIOptions
		c := NewCmdTUI(h.f, func(_ context.Context, o *TUIOptions) error { got = o; return nil })
		c.SetArgs(args)
		if err := c.Execute(); err != nil || got == nil {
			t.Fatalf("tui %v: %v", args, err)
		}
		return got
	}
	ctx := context.Background()
	svc, err := h.f.Service(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if a := tuiActions(svc, parse("--read-only")); a != nil {
		t.Errorf("--read-only: actions %T, want none", a)
	}
	before, _ := store.Count(ctx, triage.Filter{})
	var one triage.FailedRow
	if err := store.ScanFailed(ctx, triage.ScanParams{Limit: 1}, func(r *triage.FailedRow) error { one = *r; return nil }); err != nil {
		t.Fatal(err)
	}
	res, err := tuiActions(svc, parse()).Forget(ctx, triage.ForgetParams{Refs: []triage.Ref{{UUID: one.UUID}}}, nil)
	if err != nil || res.Deleted != 1 {
		t.Fatalf("forget through the TUI's actions: %+v, %v", res, err)
	}
	if after, _ := store.Count(ctx, triage.Filter{}); after != before-1 {
		t.Errorf("%d rows left of %d", after, before)
	}
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"phase":"intent"`) || !strings.Contains(lines[1], `"phase":"outcome"`) ||
		!strings.Contains(lines[1], `"command":"tui forget"`) || !strings.Contains(lines[1], one.UUID) {
		t.Errorf("audit log:\n%s", b)
	}
}
