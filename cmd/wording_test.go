package cmd

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/jobtriage/jobtriage/triage"
)

// The CLI's wording and colour: --color and CLICOLOR_FORCE, singular/plural wording,
// --ndjson --limit, --signature that matches nothing or is malformed, and
// the progress meter's line.

func TestColorModes(t *testing.T) {
	for _, c := range []struct {
		mode              string
		tty, noColor, frc bool
		want              bool
	}{
		{"", true, false, false, true},
		{"", false, false, false, false},
		{"", true, true, false, false},
		{"", false, false, true, true}, // CLICOLOR_FORCE into a pipe
		{"", false, true, true, false}, // NO_COLOR beats CLICOLOR_FORCE
		{colorAlways, false, true, false, true},
		{colorNever, true, false, true, false},
	} {
		s := &IOStreams{stdoutTTY: c.tty, noColor: c.noColor, colorForce: c.frc, colorMode: c.mode}
		if got := s.ColorEnabled(); got != c.want {
			t.Errorf("%+v: ColorEnabled %v, want %v", c, got, c.want)
		}
	}

	dsn, _ := seed(t)
	h := newHarness(t, false)
	if code := h.run("show", "--color", "always", "--dsn", dsn, "11111111-1111-4111-8111-111111111111"); code != ExitOK ||
		!strings.Contains(h.out.String(), "\x1b[") {
		t.Errorf("--color always into a pipe: exit %d, no colour:\n%q", code, h.out.String())
	}
	h = newHarness(t, true)
	h.f.IO.noColor = false
	if code := h.run("failed", "--group", "--color", "never", "--dsn", dsn); code != ExitOK || strings.Contains(h.out.String(), "\x1b[") {
		t.Errorf("--color never on a terminal: exit %d, colour:\n%q", code, h.out.String())
	}
	if code := h.run("failed", "--color", "sometimes", "--dsn", dsn); code != ExitUsage ||
		!strings.Contains(h.errOut.String(), "auto, always or never") {
		t.Errorf("--color sometimes: exit %d: %s", code, h.errOut.String())
	}
}

func TestSingularWording(t *testing.T) {
	dsn, _ := seed(t)
	h := newHarness(t, false)
	if code := h.run("retry", "11111111-1111-4111-8111-111111111111", "--dsn", dsn); code != ExitOK ||
		!strings.HasPrefix(h.out.String(), "Retried 1 job (default 1)") {
		t.Errorf("retry one: exit %d %q %s", code, h.out.String(), h.errOut.String())
	}
	if code := h.run("forget", "22222222-2222-4222-8222-222222222222", "--dry-run", "--dsn", dsn); code != ExitOK ||
		!strings.HasPrefix(h.out.String(), "Would delete 1 failed job ") {
		t.Errorf("forget one: exit %d %q", code, h.out.String())
	}
	if code := h.run("flush", "--dry-run", "--dsn", dsn); code != ExitOK ||
		!strings.HasPrefix(h.out.String(), "Would delete 3 failed jobs ") || strings.Contains(h.out.String(), "every") {
		t.Errorf("flush: exit %d %q", code, h.out.String())
	}
	if got := countNoun(1204, "failed job"); got != "1,204 failed jobs" {
		t.Errorf("countNoun: %q", got)
	}
}

func TestNDJSONHonoursAnExplicitLimit(t *testing.T) {
	dsn, _ := seed(t)
	h := newHarness(t, false)
	count := func(args ...string) int {
		if code := h.run(append([]string{"failed", "--ndjson", "--dsn", dsn}, args...)...); code != ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, h.errOut.String())
		}
		return strings.Count(h.out.String(), "\n")
	}
	if n := count(); n != 4 {
		t.Errorf("--ndjson: %d records, want every one (4)", n)
	}
	if n := count("--limit", "2"); n != 2 {
		t.Errorf("--ndjson --limit 2: %d records", n)
	}
	if n := count("--limit", "0"); n != 4 {
		t.Errorf("--ndjson --limit 0: %d records", n)
	}
}

func TestUnknownAndMalformedSignature(t *testing.T) {
	dsn, _ := seed(t)
	h := newHarness(t, false)
	for _, args := range [][]string{
		{"failed"}, {"failed", "--json"}, {"failed", "--ndjson"}, {"failed", "--group"}, {"failed", "--limit", "0"},
		{"retry", "--dry-run"}, {"retry", "--yes"}, {"forget", "--dry-run"}, {"forget", "--yes"},
	} {
		code := h.run(append(args, "--signature", "0123456789", "--dsn", dsn)...)
		if code != ExitNotFound || !strings.Contains(h.errOut.String(), "no failed job has signature 0123456789") {
			t.Errorf("%v --signature 0123456789: exit %d, stderr %q", args, code, h.errOut.String())
		}
		if code := h.run(append(args, "--signature", "nope", "--dsn", dsn)...); code != ExitUsage {
			t.Errorf("%v --signature nope: exit %d, want %d: %s", args, code, ExitUsage, h.errOut.String())
		}
	}
	// A known signature in upper case is the same signature.
	if code := h.run("failed", "--signature", "9717731C6A", "--dsn", dsn); code != ExitOK || strings.Count(h.out.String(), "\n") != 2 {
		t.Errorf("--signature in upper case: exit %d %q", code, h.out.String())
	}
}

func TestMeterLine(t *testing.T) {
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	m := &meter{verb: "retried", total: 9092, start: start}
	if got := m.line(1204, start.Add(100*time.Millisecond)); got != "retried 1,204 of 9,092 (13%)…" {
		t.Errorf("warming up: %q", got)
	}
	if got := m.line(2000, start.Add(time.Second)); got != "retried 2,000 of 9,092 (21%) · 2,000/s · about 4s left" {
		t.Errorf("with a total: %q", got)
	}
	if got := m.line(9092, start.Add(5*time.Second)); !strings.Contains(got, "(99%)") {
		t.Errorf("the last batch before done: %q", got)
	}
	m.total = 0
	if got := m.line(2000, start.Add(time.Second)); got != "retried 2,000 · 2,000/s" {
		t.Errorf("without a total: %q", got)
	}
}

// TestProgressShowsTheDryRunTotal: a confirmed bulk action's progress on a
// terminal states the total the dry run counted; with --yes (no dry run) it
// states a count alone.
func TestProgressShowsTheDryRunTotal(t *testing.T) {
	dsn, _ := seed(t)
	h := newHarness(t, true)
	h.f.IO.SetStderrTTY(true)
	h.in.WriteString("y\n")
	if code := h.run("forget", "--signature", "9717731c6a", "--dsn", dsn); code != ExitOK ||
		!strings.Contains(h.errOut.String(), "deleted 2 of 2 (99%)") {
		t.Errorf("confirmed forget: exit %d, stderr %q", code, h.errOut.String())
	}
	if code := h.run("flush", "--yes", "--dsn", dsn); code != ExitOK ||
		!strings.Contains(h.errOut.String(), "deleted 2…") || strings.Contains(h.errOut.String(), " of ") {
		t.Errorf("flush --yes: exit %d, stderr %q", code, h.errOut.String())
	}
}

// TestSkippedJobsSentenceIsWhole: the reason for jobs only artisan can
// retry is one whole sentence; the ids and the command follow it.
func TestSkippedJobsSentenceIsWhole(t *testing.T) {
	dsn, _ := seed(t)
	h := newHarness(t, false)
	h.run("retry", "all", "--dry-run", "--dsn", dsn)
	lines := strings.Split(h.errOut.String(), "\n")
	found := false
	for i, l := range lines {
		if strings.Contains(l, `connection "redis" is not a database queue`) {
			found = strings.HasSuffix(l, "; retry such jobs with php artisan queue:retry instead") &&
				i+2 < len(lines) && strings.HasPrefix(lines[i+2], "  run instead: php artisan queue:retry ")
		}
	}
	if !found {
		t.Errorf("skipped-jobs sentence:\n%s", h.errOut.String())
	}
}

// TestOneLineOutcomes: an id that matches nothing among found ones is an
// error line with the house prefix; a dry run for a signature nothing has
// prints the error alone; a refusal without --yes says how many jobs it
// would have acted on.
func TestOneLineOutcomes(t *testing.T) {
	dsn, _ := seed(t)
	h := newHarness(t, false)
	const missing = "99999999-9999-4999-8999-999999999999"
	for _, cmd := range []string{"retry", "forget"} {
		if code := h.run(cmd, "11111111-1111-4111-8111-111111111111", missing, "--dry-run", "--dsn", dsn); code != ExitPartial ||
			!strings.Contains(h.errOut.String(), "jobtriage: not found: no failed job with id "+missing+"\n") {
			t.Errorf("%s with a missing id: exit %d %q", cmd, code, h.errOut.String())
		}
		if code := h.run(cmd, "--signature", "0000000000", "--dry-run", "--dsn", dsn); code != ExitNotFound || h.out.Len() != 0 ||
			h.errOut.String() != "jobtriage: not found: no failed job has signature 0000000000 (failed --group lists them)\n" {
			t.Errorf("%s --signature nothing has: exit %d, stdout %q, stderr %q", cmd, code, h.out.String(), h.errOut.String())
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"retry", "--queue", "emails"}, "jobtriage: Retry 1 failed job on 1 queue"},
		{[]string{"forget", "--queue", "default"}, "jobtriage: Delete 3 failed jobs for good"},
		{[]string{"flush"}, "jobtriage: Delete 4 failed jobs"},
		{[]string{"prune", "--hours", "1"}, "jobtriage: Delete 1 failed job from before"},
	} {
		if code := h.run(append(c.args, "--dsn", dsn)...); code != ExitCancelled || !strings.Contains(h.errOut.String(), c.want) ||
			!strings.Contains(h.errOut.String(), "refusing without --yes") {
			t.Errorf("%v without --yes: exit %d %q, want %q", c.args, code, h.errOut.String(), c.want)
		}
	}
}

// TestShowASignatureID: show given a signature id (failed --group's first
// column) says what it is and which command lists its jobs.
func TestShowASignatureID(t *testing.T) {
	dsn, _ := seed(t)
	h := newHarness(t, false)
	const sig = "9717731c6a" // the seed's ProcessPodcast signature (testdata/json/failed-group.golden.json)
	if code := h.run("show", sig, "--dsn", dsn); code != ExitNotFound ||
		h.errOut.String() != "jobtriage: not found: no failed job with id "+sig+"; that is a signature: jobtriage failed --signature "+sig+"\n" {
		t.Errorf("show %s: exit %d %q", sig, code, h.errOut.String())
	}
	if code := h.run("show", "9717731c6b", "--dsn", dsn); code != ExitNotFound || strings.Contains(h.errOut.String(), "signature") {
		t.Errorf("show of a hex id that is no signature: exit %d %q", code, h.errOut.String())
	}
}

// TestEmptyArchives: prune --archive x.gz with nothing to prune leaves a
// gzip file restore reads as zero records; restore refuses a 0-byte .gz in
// one line; a restored row whose id is taken is reported in one plain
// parenthesis.
func TestEmptyArchives(t *testing.T) {
	dsn, _ := seed(t)
	h := newHarness(t, false)
	gz := filepath.Join(t.TempDir(), "x.ndjson.gz")
	if code := h.run("prune", "--hours", "1000", "--yes", "--archive", gz, "--dsn", dsn); code != ExitOK {
		t.Fatalf("prune: exit %d %s", code, h.errOut.String())
	}
	if code := h.run("restore", gz, "--dsn", dsn); code != ExitOK || !strings.HasPrefix(h.out.String(), "Restored 0 failed jobs of 0 archived rows") {
		t.Errorf("restore of the empty archive: exit %d %q %s", code, h.out.String(), h.errOut.String())
	}
	empty := filepath.Join(t.TempDir(), "y.ndjson.gz")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if code := h.run("restore", empty, "--dsn", dsn); code != ExitUsage ||
		h.errOut.String() != "jobtriage: invalid input: archive "+empty+" is empty (0 bytes), so not gzip: nothing to restore; check that it is the file prune or forget wrote\n" {
		t.Errorf("restore of a 0-byte .gz: exit %d %q", code, h.errOut.String())
	}
	taken := filepath.Join(t.TempDir(), "taken.ndjson")
	rec := `{"schema_version":1,"archived_at":"2026-12-01T00:00:00Z","id":1,"uuid":"77777777-7777-4777-8777-777777777777","connection":"database","queue":"default","failed_at":"2026-11-30 09:00:00","payload":"{}","exception":"E"}`
	if err := os.WriteFile(taken, []byte(rec+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code := h.run("restore", taken, "--dsn", dsn); code != ExitOK ||
		!strings.HasPrefix(h.out.String(), "Restored 1 failed job of 1 archived row (1 row under a new id, as another row holds the old one)") {
		t.Errorf("restore under a new id: exit %d %q %s", code, h.out.String(), h.errOut.String())
	}
}

// TestListingsNameTheTarget: on a terminal, failed, failed --group and
// show open with what they list and where from, as confirmations name it;
// piped, the rows stay bare; --json carries it as "target".
func TestListingsNameTheTarget(t *testing.T) {
	dsn, _ := seed(t)
	target := " — " + dsn + " table failed_jobs"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"failed"}, "Failed jobs" + target + "\n"},
		{[]string{"failed", "--group"}, "Failed jobs by error signature" + target + "\n"},
		{[]string{"show", "11111111-1111-4111-8111-111111111111"}, "Failed job 11111111-1111-4111-8111-111111111111" + target + "\n"},
	} {
		h := newHarness(t, true)
		if code := h.run(append(c.args, "--dsn", dsn)...); code != ExitOK || !strings.HasPrefix(h.out.String(), c.want) {
			t.Errorf("%v on a terminal: exit %d, first line not %q:\n%s", c.args, code, c.want, h.out.String())
		}
		h = newHarness(t, false)
		if code := h.run(append(c.args, "--dsn", dsn)...); code != ExitOK || strings.Contains(h.out.String(), target) {
			t.Errorf("%v piped: exit %d, header in the rows:\n%s", c.args, code, h.out.String())
		}
		if code := h.run(append(c.args, "--json", "--dsn", dsn)...); code != ExitOK ||
			!strings.Contains(h.out.String(), `"target": "`+strings.TrimPrefix(target, " — ")+`"`) {
			t.Errorf("%v --json: exit %d, no target:\n%s", c.args, code, h.out.String())
		}
	}
}

// TestTargetTextDropsTheColour: --json's target is the confirmation's
// words, with a context's marker and without its colour.
func TestTargetTextDropsTheColour(t *testing.T) {
	svc := &triage.Service{TargetMark: "\x1b[1;31mcontext shop [PRODUCTION]\x1b[0m", Target: "app shop · postgres://u@db:5432/shop table failed_jobs"}
	if got, want := targetText(svc), "context shop [PRODUCTION] · app shop · postgres://u@db:5432/shop table failed_jobs"; got != want {
		t.Errorf("targetText = %q, want %q", got, want)
	}
}

// TestProgressOfGroupAndRestore: on a terminal, failed --group shows how
// far the scan has come every groupProgressEvery jobs and clears the line
// at the end, and restore counts the rows it read; with --json, or when
// stderr is no terminal, neither says a word there.
func TestProgressOfGroupAndRestore(t *testing.T) {
	h, _ := fakeHarness(t, false, groupProgressEvery+1)
	h.f.IO.SetStderrTTY(true)
	if code := h.run("failed", "--group"); code != ExitOK ||
		!strings.HasPrefix(h.errOut.String(), "\rscanned 5,000 failed jobs (") || !strings.HasSuffix(h.errOut.String(), "\r\033[K") {
		t.Errorf("group on a terminal: exit %d, stderr %q", code, h.errOut.String())
	}
	if code := h.run("failed", "--group", "--json"); code != ExitOK || h.errOut.Len() != 0 {
		t.Errorf("group --json: exit %d, stderr %q", code, h.errOut.String())
	}
	h.f.IO.SetStderrTTY(false)
	if code := h.run("failed", "--group"); code != ExitOK || h.errOut.Len() != 0 {
		t.Errorf("group, stderr no terminal: exit %d, stderr %q", code, h.errOut.String())
	}

	dsn, _ := seed(t)
	h = newHarness(t, false)
	arch := filepath.Join(t.TempDir(), "a.ndjson")
	if code := h.run("flush", "--yes", "--archive", arch, "--dsn", dsn); code != ExitOK {
		t.Fatalf("flush --archive: exit %d, stderr %q", code, h.errOut.String())
	}
	h.f.IO.SetStderrTTY(true)
	if code := h.run("restore", arch, "--dsn", dsn); code != ExitOK ||
		!strings.HasPrefix(h.errOut.String(), "\r\033[Kread 1 of 4 (25%)…") || !strings.HasSuffix(h.errOut.String(), "\r\033[K") {
		t.Errorf("restore on a terminal: exit %d, stderr %q", code, h.errOut.String())
	}
}

// TestHintsNameFlagsThatExist: every "pass --flag" an error hint offers, in
// any package's code, is a flag of some command.
func TestHintsNameFlagsThatExist(t *testing.T) {
	flags := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(fl *pflag.Flag) { flags[fl.Name] = true })
		c.PersistentFlags().VisitAll(func(fl *pflag.Flag) { flags[fl.Name] = true })
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(DocsTree())
	hint := regexp.MustCompile(`pass --([a-z][a-z-]*)`)
	seen := 0
	for _, dir := range []string{".", "../internal", "../triage", "../alerts", "../tui"} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			src, err := os.ReadFile(path)
			for _, m := range hint.FindAllSubmatch(src, -1) {
				seen++
				if !flags[string(m[1])] {
					t.Errorf("%s offers --%s, which no command has", path, m[1])
				}
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if seen == 0 {
		t.Fatal("no hint found: the pattern is stale")
	}
}
