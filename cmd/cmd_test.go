package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

var testNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

type harness struct {
	f               *Factory
	in, out, errOut *bytes.Buffer
	dir             string
}

func newHarness(t *testing.T, tty bool) *harness {
	t.Helper()
	h := &harness{dir: t.TempDir()}
	f := &Factory{
		Now: func() time.Time { return testNow },
		Getenv: func(k string) string {
			if k == "JOBTRIAGE_CACHE_DIR" {
				return filepath.Join(h.dir, "cache")
			}
			return ""
		},
		Environ: func() []string { return nil },
		Getwd:   func() (string, error) { return h.dir, nil },
	}
	f.IO, h.in, h.out, h.errOut = Test()
	f.IO.SetStdoutTTY(tty)
	f.IO.SetStdinTTY(tty)
	f.Config = f.resolveConfig
	f.Service = f.openService
	h.f = f
	return h
}

func (h *harness) run(args ...string) ExitCode {
	h.out.Reset()
	h.errOut.Reset()
	return Run(context.Background(), h.f, args)
}

func ptr(s string) *string { return &s }

// seed makes a SQLite Laravel database with four failed jobs, one of them
// hostile, and returns its DSN.
func seed(t *testing.T) (string, *sqlstore.Store) {
	t.Helper()
	s := seedOn(t, "sqlite")
	return "sqlite:" + s.Endpoint().Path, s
}

// seedDriver is seed's database on driver, by DSN.
func seedDriver(t *testing.T, driver string) string {
	t.Helper()
	return sqltest.DSN(seedOn(t, driver).Endpoint())
}

func seedOn(t *testing.T, driver string) *sqlstore.Store {
	t.Helper()
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
	payload := func(uuid, class string) string {
		c := strings.ReplaceAll(class, `\`, `\\`)
		return `{"uuid":"` + uuid + `","displayName":"` + c + `","job":"Illuminate\\Queue\\CallQueuedHandler@call","maxTries":3,"maxExceptions":null,"failOnTimeout":false,"backoff":"10,60","timeout":120,"retryUntil":null,"data":{"commandName":"` + c + `","command":"O:23:\"App\\Jobs\\ProcessPodcast\":1:{s:12:\"\u0000*\u0000podcastId\";i:7;}"}}`
	}
	exc := func(msg string) string {
		return "RuntimeException: " + msg + " in /var/www/app/app/Jobs/X.php:12\nStack trace:\n#0 /var/www/app/vendor/laravel/framework/src/Illuminate/Queue/CallQueuedHandler.php(120): App\\Jobs\\X->handle()\n#1 {main}"
	}
	sqltest.InsertFailed(t, s,
		sqltest.FailedFixture{UUID: ptr("11111111-1111-4111-8111-111111111111"), Connection: "database", Queue: "default",
			Payload: payload("11111111-1111-4111-8111-111111111111", `App\Jobs\ProcessPodcast`), Exception: exc("Podcast 7 not found"), FailedAt: "2026-11-30 10:00:00"},
		sqltest.FailedFixture{UUID: ptr("22222222-2222-4222-8222-222222222222"), Connection: "database", Queue: "emails",
			Payload: payload("22222222-2222-4222-8222-222222222222", `App\Jobs\ProcessPodcast`), Exception: exc("Podcast 8 not found"), FailedAt: "2026-11-30 11:00:00"},
		sqltest.FailedFixture{UUID: ptr("33333333-3333-4333-8333-333333333333"), Connection: "redis", Queue: "default",
			Payload: payload("33333333-3333-4333-8333-333333333333", `App\Jobs\SendMail`), Exception: exc("SMTP \x1b]52;c;ZXZpbA==\x07 down \x1b[2J"), FailedAt: "2026-11-30 11:30:00"},
		sqltest.FailedFixture{UUID: ptr("44444444-4444-4444-8444-444444444444"), Connection: "database", Queue: "default",
			Payload: `{"uuid":"44444444-4444-4444-8444-444444444444","displayName":`, Exception: exc("broken"), FailedAt: "2026-11-30 11:45:00"},
	)
	return s
}

func TestHelpNeverDialsTheDatabase(t *testing.T) {
	h := newHarness(t, false)
	h.f.Service = func(context.Context) (*triage.Service, error) {
		t.Fatal("--help opened the database")
		return nil, nil
	}
	h.f.Config = nil
	for _, args := range [][]string{{"--help"}, {"failed", "--help"}, {"retry", "--help"}, {"prune", "--help"}, {"show", "--help"}} {
		if code := h.run(args...); code != ExitOK || !strings.Contains(h.out.String(), "Usage:") {
			t.Errorf("%v: exit %d, out %q", args, code, h.out.String())
		}
	}
}

func TestFailedOutputs(t *testing.T) {
	dsn, _ := seed(t)
	h := newHarness(t, false)
	if code := h.run("failed", "--dsn", dsn); code != ExitOK {
		t.Fatalf("exit %d: %s", code, h.errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(h.out.String()), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "44444444-4444-4444-8444-444444444444\t") ||
		!strings.HasSuffix(lines[1], "\t2026-11-30T11:30:00Z") {
		t.Errorf("piped output is not one TSV record per job, newest first:\n%s", h.out.String())
	}
	if strings.ContainsRune(h.out.String(), '\x1b') {
		t.Error("an escape sequence from the database reached the output")
	}

	h = newHarness(t, true)
	if code := h.run("failed", "--dsn", dsn, "--limit", "2"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, h.errOut.String())
	}
	out := h.out.String()
	if !strings.HasPrefix(out, "Failed jobs — ") || !strings.Contains(out, "\nID") || !strings.Contains(out, "15 minutes ago") || strings.ContainsRune(out, '\x1b') ||
		!strings.Contains(out, `\x1b`) {
		t.Errorf("TTY table:\n%s", out)
	}
	if !strings.Contains(h.errOut.String(), "next page: --after ") {
		t.Errorf("no cursor for the next page: %q", h.errOut.String())
	}
	cursor := strings.TrimSpace(strings.TrimPrefix(h.errOut.String(), "next page: --after "))
	h.run("failed", "--dsn", dsn, "--json", "--after", cursor)
	var page struct {
		Jobs []struct {
			UUID             string `json:"uuid"`
			Class            string `json:"class"`
			ExceptionClass   string `json:"exception_class"`
			ExceptionMessage string `json:"exception_message"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal(h.out.Bytes(), &page); err != nil || len(page.Jobs) != 2 || page.Jobs[0].UUID != "22222222-2222-4222-8222-222222222222" {
		t.Fatalf("second page as JSON: %v %s", err, h.out.String())
	}
	jobs := page.Jobs
	if jobs[0].Class != `App\Jobs\ProcessPodcast` || jobs[0].ExceptionClass != "RuntimeException" || jobs[0].ExceptionMessage != "Podcast 8 not found" {
		t.Errorf("job JSON: %+v", jobs[0])
	}

	h.run("failed", "--dsn", dsn, "--group", "--json")
	var group struct {
		Signatures []struct {
			Signature string `json:"signature"`
			Count     int    `json:"count"`
		} `json:"signatures"`
	}
	if err := json.Unmarshal(h.out.Bytes(), &group); err != nil || len(group.Signatures) != 3 || group.Signatures[0].Count != 2 {
		t.Fatalf("group JSON: %v %s", err, h.out.String())
	}
	h.run("failed", "--dsn", dsn, "--signature", group.Signatures[0].Signature, "--json")
	if err := json.Unmarshal(h.out.Bytes(), &page); err != nil || len(page.Jobs) != 2 {
		t.Errorf("--signature: %v %s", err, h.out.String())
	}

	h.run("failed", "--dsn", dsn, "--ndjson", "--full")
	recs := strings.Split(strings.TrimSpace(h.out.String()), "\n")
	var first map[string]any
	if len(recs) != 4 || json.Unmarshal([]byte(recs[0]), &first) != nil || first["payload_text"] == nil || first["exception"] == nil {
		t.Errorf("ndjson export: %d records, first %v", len(recs), first)
	}
}

func TestShow(t *testing.T) {
	dsn, _ := seed(t)
	h := newHarness(t, true)
	if code := h.run("show", "--dsn", dsn, "11111111-1111-4111-8111-111111111111"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, h.errOut.String())
	}
	for _, want := range []string{"App\\Jobs\\ProcessPodcast", "podcastId", "Podcast 7 not found", "backoff", "10,60", "X.php:12"} {
		if !strings.Contains(h.out.String(), want) {
			t.Errorf("show lacks %q:\n%s", want, h.out.String())
		}
	}
	if code := h.run("show", "--dsn", dsn, "44444444-4444-4444-8444-444444444444"); code != ExitOK ||
		!strings.Contains(h.out.String(), "malformed payload") {
		t.Errorf("malformed payload: exit %d\n%s", code, h.out.String())
	}
	if code := h.run("show", "--dsn", dsn, "33333333-3333-4333-8333-333333333333"); code != ExitOK || strings.ContainsRune(h.out.String(), '\x1b') {
		t.Errorf("hostile exception reached the terminal: exit %d %q", code, h.out.String())
	}
}

func TestExitCodes(t *testing.T) {
	dsn, _ := seed(t)
	empty := filepath.Join(t.TempDir(), "empty.sqlite")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		tty    bool
		code   ExitCode
		stderr string
	}{
		{"unknown flag", []string{"failed", "--nope"}, false, ExitUsage, "unknown flag"},
		{"bad since", []string{"failed", "--dsn", dsn, "--since", "yesterdayish"}, false, ExitUsage, "--since"},
		{"bad cursor", []string{"failed", "--dsn", dsn, "--after", "garbage"}, false, ExitUsage, "--after"},
		{"show needs one id", []string{"show", "--dsn", dsn}, false, ExitUsage, "exactly one"},
		{"unknown id", []string{"show", "--dsn", dsn, "99999999-9999-4999-8999-999999999999"}, false, ExitNotFound, "no failed job"},
		{"bad dsn scheme", []string{"failed", "--dsn", "oracle://x"}, false, ExitUnreachable, ""},
		{"missing sqlite file", []string{"failed", "--dsn", "sqlite:/nonexistent/x.sqlite"}, false, ExitUnreachable, ""},
		{"unreachable server, no password shown", []string{"failed", "--dsn", "postgres://u:s3cr3tpw@127.0.0.1:1/db"}, false, ExitUnreachable, "127.0.0.1:1"},
		{"missing table", []string{"failed", "--dsn", "sqlite:" + empty}, false, ExitSchema, "queue:failed-table"},
		{"retry all needs --yes without a TTY", []string{"retry", "all", "--dsn", dsn}, false, ExitCancelled, "--yes"},
		{"operator says no", []string{"retry", "all", "--dsn", dsn}, true, ExitCancelled, "cancelled"},
		{"prune hours 0", []string{"prune", "--hours", "0", "--dsn", dsn}, false, ExitUsage, "--hours"},
		{"prune hours negative", []string{"prune", "--hours", "-5", "--dsn", dsn}, false, ExitUsage, "--hours"},
		{"forget unknown id", []string{"forget", "--yes", "--dsn", dsn, "99999999-9999-4999-8999-999999999999"}, false, ExitNotFound, "not found"},
		{"forget needs a selection", []string{"forget", "--dsn", dsn}, false, ExitUsage, "flush"},
		{"ids and all", []string{"retry", "all", "1", "--dsn", dsn}, false, ExitUsage, "all"},
		{"tui without a terminal", []string{"tui", "--dsn", dsn}, false, ExitUsage, "failed --group"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.tty)
			h.in.WriteString("n\n")
			start := time.Now()
			code := h.run(tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr %q", code, tc.code, h.errOut.String())
			}
			if !strings.Contains(h.errOut.String(), tc.stderr) {
				t.Errorf("stderr %q lacks %q", h.errOut.String(), tc.stderr)
			}
			if strings.Contains(h.errOut.String()+h.out.String(), "s3cr3tpw") {
				t.Error("the password appeared in the output")
			}
			if n := strings.Count(h.errOut.String(), "jobtriage: "); n != 1 {
				t.Errorf("want exactly one error line, got %d: %q", n, h.errOut.String())
			}
			if time.Since(start) > 15*time.Second {
				t.Errorf("took %s: errors must come within seconds", time.Since(start))
			}
		})
	}
}

func TestRetryAndAudit(t *testing.T) {
	dsn, store := seed(t)
	h := newHarness(t, false)
	logPath := filepath.Join(t.TempDir(), "audit.log")
	code := h.run("retry", "all", "--yes", "--dsn", dsn, "--audit-log", logPath)
	// The redis job and the malformed one are skipped: exit 7, partial.
	if code != ExitPartial {
		t.Fatalf("exit %d: %s %s", code, h.out.String(), h.errOut.String())
	}
	// The summary names where the write landed.
	if !strings.Contains(h.out.String(), "Retried 2 jobs (default 1, emails 1); skipped 2 — sqlite:"+strings.TrimPrefix(dsn, "sqlite:")+" table failed_jobs.") {
		t.Errorf("summary: %q", h.out.String())
	}
	if !strings.Contains(h.errOut.String(), `connection "redis" is not a database queue`) || !strings.Contains(h.errOut.String(), "malformed payload") {
		t.Errorf("skip reasons: %q", h.errOut.String())
	}
	var n int
	if err := store.DB().Get(&n, "SELECT COUNT(*) FROM jobs"); err != nil || n != 2 {
		t.Errorf("jobs has %d rows (%v)", n, err)
	}
	raw, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	var entry auditEntry // the outcome line, after the intent line
	if err := json.Unmarshal(lastLine(raw), &entry); err != nil || entry.Command != "retry" || entry.Count != 2 ||
		len(entry.IDs) != 2 || entry.Database == "" || entry.Host == "" {
		t.Errorf("audit line %s: %v", raw, err)
	}
	if code := h.run("retry", "all", "--yes", "--dsn", dsn, "--json"); code != ExitPartial {
		t.Fatalf("second run exit %d", code)
	}
	var res triage.RetryResult
	if err := json.Unmarshal(h.out.Bytes(), &res); err != nil || res.Retried != 0 || len(res.Skipped) != 2 {
		t.Errorf("second run JSON: %v %s", err, h.out.String())
	}
	// The ids of --json come from the spool the batches were written to.
	if code := h.run("forget", "--connection", "redis", "--dry-run", "--json", "--dsn", dsn); code != ExitOK {
		t.Fatalf("forget --dry-run exit %d: %s", code, h.errOut.String())
	}
	var fres triage.ForgetResult
	if err := json.Unmarshal(h.out.Bytes(), &fres); err != nil || !fres.DryRun || fres.Deleted != 1 || len(fres.IDs) != 1 {
		t.Errorf("forget --dry-run --json: %v %s", err, h.out.String())
	}
	if code := h.run("forget", "--connection", "redis", "--yes", "--json", "--dsn", dsn, "--audit-log", logPath); code != ExitOK {
		t.Fatalf("forget exit %d: %s", code, h.errOut.String())
	}
	var gone triage.ForgetResult
	if err := json.Unmarshal(h.out.Bytes(), &gone); err != nil || gone.Deleted != 1 || fmt.Sprint(gone.IDs) != fmt.Sprint(fres.IDs) {
		t.Errorf("forget --json: %v %s, want the dry run's ids %v", err, h.out.String(), fres.IDs)
	}
	raw, _ = os.ReadFile(logPath)
	lines := bytes.Split(bytes.TrimSpace(raw), []byte("\n"))
	if err := json.Unmarshal(lines[len(lines)-1], &entry); err != nil || len(lines) != 4 || entry.Command != "forget" || fmt.Sprint(entry.IDs) != fmt.Sprint(fres.IDs) {
		t.Errorf("audit after forget (%d lines): %s: %v", len(lines), raw, err)
	}
	// The command line as typed, flags included, and the filter in the
	// documented schema (docs/json.md).
	var doc map[string]any
	if err := json.Unmarshal(lines[len(lines)-1], &doc); err != nil {
		t.Fatal(err)
	}
	if args := fmt.Sprint(doc["args"]); !strings.Contains(args, "--connection redis") || !strings.Contains(args, "--audit-log") {
		t.Errorf("audit args %s, want the command line as typed", args)
	}
	if f, _ := doc["filter"].(map[string]any); fmt.Sprint(f["connections"]) != "[redis]" || len(f) != 1 {
		t.Errorf("audit filter %v, want {connections: [redis]}", doc["filter"])
	}
}

// TestAuditMasksPasswordsInTheCommandLine: a DSN's password never reaches
// the audit log, which records the command line as typed.
func TestAuditMasksPasswordsInTheCommandLine(t *testing.T) {
	dsn, _ := seed(t)
	h := newHarness(t, false)
	logPath := filepath.Join(t.TempDir(), "audit.log")
	// A search text that is a DSN (pasted from a runbook) carries one.
	h.run("forget", "--search", "postgres://ops:Tr0ub4dor33@db.internal/app", "--yes", "--dsn", dsn, "--audit-log", logPath)
	raw, _ := os.ReadFile(logPath)
	if len(raw) == 0 || strings.Contains(string(raw), "Tr0ub4dor") {
		t.Errorf("audit log %q: want lines without the password", raw)
	}
}

// The spool frames ids as JSON strings: text from the database (a uuid
// column holds anything) cannot break the lines or the JSON written from it.
func TestIDSpoolKeepsHostileIDsIntact(t *testing.T) {
	t.Run("file", func(t *testing.T) { testSpool(t, t.TempDir()) })
	// No temporary file can be made: the spool lives in memory.
	t.Run("memory", func(t *testing.T) { testSpool(t, filepath.Join(t.TempDir(), "missing")) })
}

func testSpool(t *testing.T, tmpdir string) {
	t.Setenv("TMPDIR", tmpdir)
	ids := newSpool()
	defer ids.Close()
	if inMemory := ids.f == nil; inMemory != strings.HasSuffix(tmpdir, "missing") {
		t.Fatalf("TMPDIR %s: spool in memory = %v", tmpdir, inMemory)
	}
	hostile := []string{"plain", "new\nline", `quote"and\\slash`, "\x1b[31mred", "ünï"}
	if err := ids.AddIDs(hostile[:2]); err != nil {
		t.Fatal(err)
	}
	if err := ids.AddIDs(hostile[2:]); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := writeJSONSpliced(&out, triage.ForgetResult{Deleted: 5, IDs: []string{}}, map[string]*spool{"ids": ids}); err != nil {
		t.Fatal(err)
	}
	var back triage.ForgetResult
	if err := json.Unmarshal(out.Bytes(), &back); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if fmt.Sprintf("%q", back.IDs) != fmt.Sprintf("%q", hostile) || back.Deleted != 5 {
		t.Errorf("ids came back as %q from %s", back.IDs, out.String())
	}
	// Written twice (audit, then --json): the same both times.
	var again bytes.Buffer
	if err := writeJSONSpliced(&again, triage.ForgetResult{Deleted: 5, IDs: []string{}}, map[string]*spool{"ids": ids}); err != nil || again.String() != out.String() {
		t.Errorf("second write differs (%v):\n%s", err, again.String())
	}
	// After a dry run's preview the real run starts from an empty spool.
	if err := ids.reset(); err != nil {
		t.Fatal(err)
	}
	if err := ids.AddIDs([]string{"after"}); err != nil {
		t.Fatal(err)
	}
	var reset bytes.Buffer
	if err := writeJSONSpliced(&reset, triage.ForgetResult{IDs: []string{}}, map[string]*spool{"ids": ids}); err != nil ||
		json.Unmarshal(reset.Bytes(), &back) != nil || fmt.Sprint(back.IDs) != "[after]" || ids.Len() != 1 {
		t.Errorf("after reset (%v): %s", err, reset.String())
	}
}

func TestPruneFromCron(t *testing.T) {
	dsn, store := seed(t)
	h := newHarness(t, false)
	if code := h.run("prune", "--hours", "1", "--yes", "--dsn", dsn); code != ExitOK {
		t.Fatalf("exit %d: %s", code, h.errOut.String())
	}
	// now is 12:00; failed_at < 11:00 goes: the 10:00 job only.
	if !strings.HasPrefix(h.out.String(), "Deleted 1 failed job from before 2026-11-30 11:00:00 UTC") {
		t.Errorf("summary %q", h.out.String())
	}
	if n, _ := store.Count(context.Background(), triage.Filter{}); n != 3 {
		t.Errorf("%d rows left", n)
	}
	if code := h.run("flush", "--hours", "0.5", "--yes", "--dsn", dsn, "--json"); code != ExitOK {
		t.Fatalf("flush exit %d: %s", code, h.errOut.String())
	}
	if !strings.Contains(h.out.String(), `"deleted": 2`) {
		t.Errorf("flush --hours 0.5 (<= 11:30): %s", h.out.String())
	}
}

// TestExitCodeMapping pins the one place that maps errors to exit codes,
// including the codes no scenario above reaches cheaply (1, 130).
func TestExitCodeMapping(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want ExitCode
	}{
		{nil, ExitOK},
		{errors.New("disk on fire"), ExitError},
		{FlagErrorf("bad flag"), ExitUsage},
		{fmt.Errorf("wrap: %w", triage.ErrInvalidInput), ExitUsage},
		{fmt.Errorf("wrap: %w", triage.ErrInvalidCursor), ExitUsage},
		{ErrCancelled, ExitCancelled},
		{fmt.Errorf("wrap: %w", triage.ErrNotFound), ExitNotFound},
		{fmt.Errorf("wrap: %w", triage.ErrUnreachable), ExitUnreachable},
		{fmt.Errorf("%w: bad .env", errConfig), ExitUnreachable},
		{fmt.Errorf("wrap: %w", triage.ErrMissingTable), ExitSchema},
		{silentExit(ExitPartial), ExitPartial},
		{silentExit(ExitUnhealthy), ExitUnhealthy},
		{context.Canceled, ExitInterrupted},
	} {
		if got := exitCodeFor(tc.err); got != tc.want {
			t.Errorf("exitCodeFor(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
	// Ctrl-C while a command runs: exit 130 and one line.
	dsn, _ := seed(t)
	h := newHarness(t, false)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if code := Run(ctx, h.f, []string{"failed", "--group", "--dsn", dsn}); code != ExitInterrupted {
		t.Errorf("cancelled run: exit %d, stderr %q", code, h.errOut.String())
	}
}

// TestFailedLimitZeroStreams: --limit 0 prints every job, streamed, as a
// valid JSON array or as TSV, the same jobs as the paged listing.
func TestFailedLimitZeroStreams(t *testing.T) {
	dsn, _ := seed(t)
	h := newHarness(t, false)
	if code := h.run("failed", "--dsn", dsn, "--limit", "0", "--json"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, h.errOut.String())
	}
	var doc struct {
		SchemaVersion int `json:"schema_version"`
		Jobs          []struct {
			UUID string `json:"uuid"`
		} `json:"jobs"`
		Next *string `json:"next"`
	}
	if err := json.Unmarshal(h.out.Bytes(), &doc); err != nil || doc.SchemaVersion != 1 || len(doc.Jobs) != 4 ||
		doc.Jobs[0].UUID != "44444444-4444-4444-8444-444444444444" || doc.Next != nil {
		t.Fatalf("--limit 0 --json: %v\n%s", err, h.out.String())
	}
	if code := h.run("failed", "--dsn", dsn, "--limit", "0", "--queue", "nope", "--json"); code != ExitOK ||
		json.Unmarshal(h.out.Bytes(), &doc) != nil || doc.Jobs == nil || len(doc.Jobs) != 0 {
		t.Errorf("empty stream is not an empty list of jobs: %q", h.out.String())
	}
	h.run("failed", "--dsn", dsn, "--limit", "0")
	if lines := strings.Split(strings.TrimSpace(h.out.String()), "\n"); len(lines) != 4 || strings.ContainsRune(h.out.String(), '\x1b') {
		t.Errorf("--limit 0 TSV: %q", h.out.String())
	}
}

// On a terminal a bulk retry previews, asks with the count, and then runs:
// what it reports and audits is the real run's, not the preview's as well.
func TestRetryAsksOnATerminal(t *testing.T) {
	dsn, _ := seed(t)
	h := newHarness(t, true)
	logPath := filepath.Join(t.TempDir(), "audit.log")
	h.in.WriteString("y\n")
	if code := h.run("retry", "all", "--json", "--dsn", dsn, "--audit-log", logPath); code != ExitPartial {
		t.Fatalf("exit %d: %s", code, h.errOut.String())
	}
	if !strings.Contains(h.errOut.String(), "Retry 2 failed jobs on 2 queues — sqlite:"+strings.TrimPrefix(dsn, "sqlite:")+" table failed_jobs? [y/N]") || !strings.Contains(h.errOut.String(), "would skip 1 job") {
		t.Errorf("question and preview: %q", h.errOut.String())
	}
	var res triage.RetryResult
	if err := json.Unmarshal(h.out.Bytes(), &res); err != nil || res.DryRun || res.Retried != 2 || len(res.IDs) != 2 || len(res.Skipped) != 2 {
		t.Errorf("result after yes: %v %s", err, h.out.String())
	}
	raw, _ := os.ReadFile(logPath)
	var entry auditEntry
	if err := json.Unmarshal(lastLine(raw), &entry); err != nil || len(entry.IDs) != 2 || entry.Skipped != 2 {
		t.Errorf("audit line %s: %v", raw, err)
	}
}
