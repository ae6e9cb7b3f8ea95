package cmd

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/triagetest"
)

// TestNewCmdTagFlag: --tag reaches the query of failed, retry and forget
// in the name grammar (repeat or comma-separate, \, for a comma; trimmed as
// queue names are), is a filter of its own for the commands that act, and
// an empty tag is a usage error.
func TestNewCmdTagFlag(t *testing.T) {
	want := []string{`App\Models\Order:1001`, "a,b", "urgent"}
	args := []string{"--tag", `App\Models\Order:1001`, "--tag", `a\,b, urgent`}
	tags := func(f FilterFlags) []string {
		q, err := f.query(time.Now(), time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		return q.Tags
	}
	if p := parseWith(t, NewCmdFailed, args...); p.code != ExitOK || !reflect.DeepEqual(tags(p.opts.Filter), want) {
		t.Errorf("failed --tag: exit %d %s %+v", p.code, p.err, p.opts)
	}
	if p := parseWith(t, NewCmdRetry, args...); p.code != ExitOK || !reflect.DeepEqual(tags(p.opts.Filter), want) {
		t.Errorf("retry --tag: exit %d %s %+v", p.code, p.err, p.opts)
	}
	if p := parseWith(t, NewCmdForget, args...); p.code != ExitOK || !reflect.DeepEqual(tags(p.opts.Filter), want) {
		t.Errorf("forget --tag: exit %d %s %+v", p.code, p.err, p.opts)
	}
	usageCases(t, NewCmdFailed, map[string][]string{"an empty name names nothing": {"--tag", ""}})
	usageCases(t, NewCmdRetry, map[string][]string{`"all" takes no filters`: {"all", "--tag", "x"}})
	usageCases(t, NewCmdForget, map[string][]string{"ids or filters, not both": {"7", "--tag", "x"}})
}

// TestTagRun: on the in-memory store, --tag selects the jobs carrying the
// tag exactly — not a longer tag, not another case — for failed, a retry
// dry run and forget.
func TestTagRun(t *testing.T) {
	h := newHarness(t, false)
	st := triagetest.New(triage.IDModeUUID, time.UTC)
	for i, tags := range []string{`["App\\Models\\Order:1001","urgent"]`, `["App\\Models\\Order:10010"]`, `["app\\models\\order:1001"]`, `[]`} {
		u := fakeUUID(i + 1)
		st.Add(triagetest.Row{UUID: u, Connection: "database", Queue: "default",
			Payload:   `{"uuid":"` + u + `","displayName":"App\\Jobs\\Ship","job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"App\\Jobs\\Ship","command":"O:13:\"App\\Jobs\\Ship\":0:{}"},"tags":` + tags + `}`,
			Exception: "RuntimeException: down in /app/Ship.php:1", FailedAt: "2026-11-30 10:00:00"})
	}
	h.f.Service = func(context.Context) (*triage.Service, error) {
		return &triage.Service{Store: st, Now: h.f.Now, Location: time.UTC, Target: "fake table failed_jobs"}, nil
	}
	if code := h.run("failed", "--tag", `App\Models\Order:1001`); code != ExitOK {
		t.Fatalf("failed --tag: exit %d %s", code, h.errOut.String())
	}
	if lines := strings.Split(strings.TrimSpace(h.out.String()), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], fakeUUID(1)+"\t") {
		t.Errorf("failed --tag lists:\n%s", h.out.String())
	}
	if code := h.run("retry", "--tag", "urgent", "--dry-run", "--json"); code != ExitOK || !strings.Contains(h.out.String(), `"retried": 1`) {
		t.Errorf("retry --tag --dry-run: exit %d %s %s", code, h.out.String(), h.errOut.String())
	}
	if code := h.run("forget", "--tag", `App\Models\Order:1001`, "--yes", "--json"); code != ExitOK || st.Len() != 3 ||
		!strings.Contains(h.out.String(), `"deleted": 1`) {
		t.Errorf("forget --tag: exit %d, %d left, %s %s", code, st.Len(), h.out.String(), h.errOut.String())
	}
	if _, err := st.GetFailed(t.Context(), triage.Ref{ID: 1}); err == nil {
		t.Error("the tagged job is still there")
	}
}
