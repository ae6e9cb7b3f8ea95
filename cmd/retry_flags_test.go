package cmd

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

// TestNewCmdRetry: retry's flags through runF, its defaults, and every
// combination it refuses before touching a store.
func TestNewCmdRetry(t *testing.T) {
	p := parseWith(t, NewCmdRetry, "all")
	if o := p.opts; p.code != ExitOK || !o.All || len(o.IDs) != 0 || o.Limit != 0 || o.DryRun || o.Yes || o.JSON ||
		o.Follow || o.FollowTimeout != DefaultFollowTimeout || o.Canary != 0 || o.CanarySuccess != "100%" || o.canaryShare != 1 || o.rate != 0 {
		t.Fatalf("retry all: exit %d %s %+v", p.code, p.err, o)
	}
	p = parseWith(t, NewCmdRetry, "--range", "1-5", "--range", " 9-9", "--limit", "3", "--to-queue", "slow", "--retry-until", "30m",
		"--database-connection", "db1,db2", "--dry-run", "-y", "--json")
	if o := p.opts; p.code != ExitOK || !reflect.DeepEqual(o.Ranges, []string{"1-5", " 9-9"}) || o.Limit != 3 || o.ToQueue != "slow" ||
		o.RetryUntil != 30*time.Minute || !reflect.DeepEqual(o.DBConns, []string{"db1", "db2"}) || !o.DryRun || !o.Yes || !o.JSON {
		t.Errorf("flags: exit %d %s %+v", p.code, p.err, o)
	}
	p = parseWith(t, NewCmdRetry, "--queue", "emails", "--canary", "5", "--canary-success", "80%", "--follow-timeout", "2m", "--rate", "10/s")
	if o := p.opts; p.code != ExitOK || o.Canary != 5 || o.canaryShare != 0.8 || o.FollowTimeout != 2*time.Minute || o.rate != 10 || !o.followed() {
		t.Errorf("canary: exit %d %s %+v", p.code, p.err, o)
	}
	p = parseWith(t, NewCmdRetry, "11111111-1111-4111-8111-111111111111", "--follow", "--stop-after-failures", "2")
	if o := p.opts; p.code != ExitOK || !o.Follow || o.StopAfterFailures != 2 || len(o.IDs) != 1 {
		t.Errorf("--follow: exit %d %s %+v", p.code, p.err, o)
	}

	usageCases(t, NewCmdRetry, map[string][]string{
		`"all" cannot be mixed with ids`:        {"7", "all"},
		"give ids or filters, not both":         {"7", "--range", "1-2"},
		`"all" takes no filters`:                {"all", "--queue", "q"},
		`name ids, "all", --range or a filter`:  {},
		`--limit" flag: must not be negative`:   {"all", "--limit", "-1"},
		"--retry-until must be a positive":      {"all", "--retry-until", "-1m"},
		"is not a valid row id":                 {"0"},
		`"--canary" flag: must be at least 1`:   {"all", "--canary", "-1"},
		`"--stop-after-failures" flag: must be`: {"all", "--stop-after-failures", "-1"},
		"which needs --follow":                  {"all", "--stop-after-failures", "1"},
		"--canary-success needs --canary N":     {"all", "--canary-success", "50%"},
		"--follow-timeout needs":                {"all", "--follow-timeout", "1m"},
		"--follow-timeout must be a positive":   {"all", "--follow", "--follow-timeout", "0s"},
		"--canary-success":                      {"all", "--canary", "2", "--canary-success", "150%"},
		"rate":                                  {"all", "--rate", "fast"},
		"invalid argument":                      {"all", "--limit", "ten"},
	})
}

func TestExpandRanges(t *testing.T) {
	refs, err := expandRanges([]string{"3-5", " 9-9 ", "1-1"})
	want := []triage.Ref{{ID: 3}, {ID: 4}, {ID: 5}, {ID: 9}, {ID: 1}}
	if err != nil || !reflect.DeepEqual(refs, want) {
		t.Fatalf("expandRanges = %v, %v; want %v", refs, err, want)
	}
	for in, msg := range map[string]string{
		"5":        "want FROM-TO",
		"a-b":      "want FROM-TO",
		"-1-3":     "want FROM-TO",
		"0-3":      "FROM must be at least 1",
		"5-3":      "not above TO",
		"1-100001": "covers more than 100000 ids",
	} {
		_, err := expandRanges([]string{in})
		if err == nil || exitCodeFor(err) != ExitUsage || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: %v, want a usage error with %q", in, err, msg)
		}
	}
	// The bound counts every range together.
	if _, err := expandRanges([]string{"1-60000", "60001-100001"}); err == nil {
		t.Error("two ranges over maxRangeIDs together were accepted")
	}
	if refs, err := expandRanges([]string{"1-" + "100000"}); err != nil || len(refs) != maxRangeIDs {
		t.Errorf("exactly maxRangeIDs ids: %d, %v", len(refs), err)
	}
}

// TestRetryRange: --range retries the integer ids it names on a table
// without uuids, leaves the others, and is refused on a uuid table.
func TestRetryRange(t *testing.T) {
	s := sqltest.OpenLaravel(t, "sqlite", sqlstore.SchemaLegacy, time.UTC)
	payload := `{"displayName":"App\\Jobs\\X","job":"Illuminate\\Queue\\CallQueuedHandler@call","maxTries":null,"data":{"commandName":"App\\Jobs\\X","command":"O:10:\"App\\Jobs\\X\":0:{}"}}`
	var rows []sqltest.FailedFixture
	for i := 0; i < 5; i++ {
		rows = append(rows, sqltest.FailedFixture{Connection: "database", Queue: "default", Payload: payload,
			Exception: "RuntimeException: boom", FailedAt: "2026-11-30 10:00:0" + string(rune('0'+i))})
	}
	ids := sqltest.InsertFailed(t, s, rows...)
	dsn := "sqlite:" + s.Endpoint().Path
	h := newHarness(t, false)
	if code := h.run("retry", "--dsn", dsn, "--range", "2-3", "--range", "5-6", "--yes", "--json"); code != ExitPartial { // id 6 does not exist
		t.Fatalf("exit %d: %s", code, h.errOut.String())
	}
	var left []int64
	if err := s.ScanFailed(t.Context(), triage.ScanParams{Ascending: true}, func(r *triage.FailedRow) error {
		left = append(left, r.ID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(left, []int64{ids[0], ids[3]}) {
		t.Errorf("left in failed_jobs: %v, want %v (ids 2, 3 and 5 retried)\n%s%s", left, []int64{ids[0], ids[3]}, h.out.String(), h.errOut.String())
	}
	if !strings.Contains(h.out.String(), `"retried":3`) && !strings.Contains(h.out.String(), `"retried": 3`) {
		t.Errorf("retry --json does not report 3 retried:\n%s", h.out.String())
	}

	dsnUUID, _ := seed(t)
	if code := h.run("retry", "--dsn", dsnUUID, "--range", "1-2", "--yes", "--json"); code != ExitOK ||
		!strings.Contains(h.out.String(), `"retried": 2`) {
		t.Errorf("--range on a uuid table: exit %d, %s", code, h.errOut.String())
	}
}

// TestRetryRunFake: retry on the in-memory store moves local jobs into its
// jobs table, pushes a connection routed to a queue backend there (once
// per uuid), and keeps every row when the backend refuses the push.
func TestRetryRunFake(t *testing.T) {
	h, st := fakeHarness(t, false, 4)
	if code := h.run("retry", "--queue", "emails", "--yes", "--json"); code != ExitOK || st.Len() != 2 || len(st.Jobs()) != 2 {
		t.Fatalf("local: exit %d, %d left, %d jobs: %s %s", code, st.Len(), len(st.Jobs()), h.out.String(), h.errOut.String())
	}
	for _, m := range st.Jobs() {
		if m.Queue != "emails" || (m.UUID != fakeUUID(2) && m.UUID != fakeUUID(4)) || !strings.Contains(string(m.Payload), `"uuid":"`+m.UUID+`"`) {
			t.Errorf("moved job %+v", m)
		}
	}

	b := &memBackend{Name: "fake redis", Err: errors.New("connection refused")}
	open := h.f.Service
	h.f.Service = func(ctx context.Context) (*triage.Service, error) {
		svc, err := open(ctx)
		if err == nil {
			svc.Router = triage.NewRouter(map[string]triage.Route{"database": {Connection: "database", Driver: triage.DriverRedis, Backend: b}}, nil, nil)
		}
		return svc, err
	}
	if code := h.run("retry", "all", "--yes"); code != ExitError || st.Len() != 2 || len(b.Queued()) != 0 ||
		!strings.Contains(h.errOut.String(), "connection refused") {
		t.Fatalf("refused push: exit %d, %d left, %d queued: %s", code, st.Len(), len(b.Queued()), h.errOut.String())
	}
	b.Err = nil
	if code := h.run("retry", "all", "--yes"); code != ExitOK || st.Len() != 0 || len(b.Queued()) != 2 || len(st.Jobs()) != 2 {
		t.Fatalf("pushed: exit %d, %d left, %d queued, %d local: %s", code, st.Len(), len(b.Queued()), len(st.Jobs()), h.errOut.String())
	}
	if code := h.run("retry", "all", "--yes"); code != ExitOK {
		t.Errorf("an empty table: exit %d %s", code, h.errOut.String())
	}
}

// TestRetryJobsDSN: with --jobs-dsn the jobs go into the other database's
// jobs table (openJobsBackend), and leave failed_jobs.
func TestRetryJobsDSN(t *testing.T) {
	dsn, failed := seed(t)
	jobs := sqltest.OpenLaravel(t, "sqlite", sqlstore.SchemaLaravel8, time.UTC)
	h := newHarness(t, false)
	if code := h.run("retry", "--dsn", dsn, "--jobs-dsn", "sqlite:"+jobs.Endpoint().Path, "--queue", "emails", "--yes"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, h.errOut.String())
	}
	stats, err := jobs.QueueStats(t.Context(), triage.QueueStatsParams{Now: testNow})
	if err != nil || len(stats) != 1 || stats[0].Queue != "emails" || stats[0].Size != 1 {
		t.Errorf("the jobs database holds %+v, %v; want one job on emails", stats, err)
	}
	if n, err := failed.Count(t.Context(), triage.Filter{Queues: []string{"emails"}}); err != nil || n != 0 {
		t.Errorf("failed_jobs still holds %d emails jobs (%v)", n, err)
	}
	if code := h.run("retry", "--dsn", dsn, "--jobs-dsn", "sqlite:"+filepath.Join(h.dir, "nowhere", "jobs.sqlite"), "all", "--yes"); code != ExitUnreachable {
		t.Errorf("an unreachable --jobs-dsn: exit %d %s", code, h.errOut.String())
	}
	if code := h.run("retry", "--dsn", dsn, "--jobs-dsn", "bogus://x", "all", "--yes"); code != ExitUnreachable || !strings.Contains(h.errOut.String(), "--jobs-dsn") {
		t.Errorf("a malformed --jobs-dsn: exit %d %s", code, h.errOut.String())
	}
}
