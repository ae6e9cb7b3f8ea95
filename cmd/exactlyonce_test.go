package cmd

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
	"github.com/jobtriage/jobtriage/triage/triagetest"
)

// A job already in jobs (an interrupted artisan queue:retry) is retried by
// deleting its row only, and the summary and --json say so.
func TestRetryReportsAlreadyQueued(t *testing.T) {
	h, st := fakeHarness(t, false, 3)
	if code := h.run("retry", fakeUUID(2), "--yes"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, h.errOut.String())
	}
	requeue := func() {
		st.Add(triagetest.Row{UUID: fakeUUID(2), Connection: "database", Queue: "emails", Payload: string(st.Jobs()[0].Payload),
			Exception: "RuntimeException: boom", FailedAt: "2026-12-01 09:00:00"})
	}
	requeue()
	if code := h.run("retry", fakeUUID(2), "--yes"); code != ExitOK || len(st.Jobs()) != 1 ||
		!strings.Contains(h.out.String(), "Retried 1 job (emails 1); 1 already queued (not pushed again") {
		t.Errorf("exit %d, %d jobs: %s %s", code, len(st.Jobs()), h.out.String(), h.errOut.String())
	}
	requeue()
	if code := h.run("retry", "all", "--yes", "--json"); code != ExitOK || len(st.Jobs()) != 3 ||
		!strings.Contains(h.out.String(), `"already_queued": [
    "`+fakeUUID(2)+`"
  ]`) {
		t.Errorf("exit %d, %d jobs: %s %s", code, len(st.Jobs()), h.out.String(), h.errOut.String())
	}
}

// A push still in doubt when the run ends names the command that reconciles.
func TestRetryNamesThePushInDoubt(t *testing.T) {
	st := triagetest.New(triage.IDModeUUID, time.UTC)
	st.Add(triagetest.Row{UUID: fakeUUID(1), Connection: "redis", Queue: "default", Payload: `{"uuid":"` + fakeUUID(1) + `","displayName":"A","job":"j","id":"r1","attempts":1,"data":{"commandName":"A"}}`,
		Exception: "RuntimeException: boom", FailedAt: "2026-12-01 09:00:00"})
	b := &memBackend{Name: "fake redis", Err: fmt.Errorf("the Redis server stopped answering: %w", triage.ErrInDoubt)}
	io, _, out, errOut := Test()
	opts := &RetryOptions{IO: io, Now: func() time.Time { return testNow }, Audit: func(auditEntry) error { return nil },
		All: true, Yes: true, resolveWait: time.Millisecond}
	opts.Service = func(context.Context) (*triage.Service, error) {
		return &triage.Service{Store: st, Now: opts.Now, Location: time.UTC,
			Router: triage.NewRouter(map[string]triage.Route{"redis": {Driver: triage.DriverRedis, Backend: b}}, nil, nil)}, nil
	}
	err := retryRun(context.Background(), opts)
	if err == nil || !strings.Contains(err.Error(), "reconcile with jobtriage retry 1 ") || st.Len() != 1 {
		t.Errorf("err %v, %d left: %s %s", err, st.Len(), out.String(), errOut.String())
	}
}

// --jobs-dsn without --jobs-ledger is warned about in the dry run and
// before the confirmation; with the ledger it is not.
func TestRetryWarnsJobsDSNWithoutLedger(t *testing.T) {
	dsn, _ := seed(t)
	jobs := sqltest.OpenLaravel(t, "sqlite", sqlstore.SchemaLaravel8, time.UTC)
	h := newHarness(t, false)
	other := "sqlite:" + jobs.Endpoint().Path
	const warning = "keeps no push ledger: a crash (SIGKILL) between a push and its delete can queue a job twice; --jobs-ledger"
	if code := h.run("retry", "--dsn", dsn, "--jobs-dsn", other, "all", "--dry-run"); code != ExitPartial || !strings.Contains(h.errOut.String(), warning) {
		t.Errorf("dry run: exit %d: %s", code, h.errOut.String())
	}
	if code := h.run("retry", "--dsn", dsn, "--jobs-dsn", other, "all"); code != ExitCancelled || !strings.Contains(h.errOut.String(), warning) {
		t.Errorf("confirmation: exit %d: %s", code, h.errOut.String())
	}
	if code := h.run("retry", "--dsn", dsn, "--jobs-dsn", other, "--jobs-ledger", "all", "--dry-run"); code != ExitPartial || strings.Contains(h.errOut.String(), "ledger") {
		t.Errorf("with the ledger: exit %d: %s", code, h.errOut.String())
	}
}
