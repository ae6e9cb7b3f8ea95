package cmd

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The CLI's wording and colour: --color and CLICOLOR_FORCE, singular/plural wording,
// --ndjson --limit, --signature that matches nothing or is malformed, and
// the progress meter's line.

func TestColorModes(t *testing.T) {
	for _, c := range []struct {
		mode              colorMode
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
		!strings.HasPrefix(h.errOut.String(), "\r\033[Kread 1…") || !strings.HasSuffix(h.errOut.String(), "\r\033[K") {
		t.Errorf("restore on a terminal: exit %d, stderr %q", code, h.errOut.String())
	}
}
