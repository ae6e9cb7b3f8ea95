package cmd

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

// TestNewCmdFailedTrendFlags: --new-since, --window and --sort are parsed
// into the options, go with --group only, and bad values are usage errors
// before anything is opened.
func TestNewCmdFailedTrendFlags(t *testing.T) {
	for _, c := range []struct {
		args    []string
		wantErr string
		check   func(*FailedOptions) bool
	}{
		{[]string{"--group"}, "", func(o *FailedOptions) bool { return o.Window == "1h" && o.Sort == "count" && o.NewSince == "" }},
		{[]string{"--group", "--new-since", "2h", "--window", "1d", "--sort", "trend"}, "",
			func(o *FailedOptions) bool { return o.NewSince == "2h" && o.Window == "1d" && o.Sort == "trend" }},
		{[]string{"--new-since", "2h"}, "--new-since goes with --group", nil},
		{[]string{"--sort", "trend"}, "--sort goes with --group", nil},
		{[]string{"--window", "2h"}, "--window goes with --group", nil},
		{[]string{"--group", "--new-since", "2h", "--since", "1d"}, "does not combine with --since", nil},
		{[]string{"--group", "--window", "0s"}, "--window", nil},
		{[]string{"--group", "--window", "31d"}, "at most 720h", nil},
		{[]string{"--group", "--window", "soon"}, "--window", nil},
		{[]string{"--group", "--sort", "size"}, "want count, last, first or trend", nil},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			h := newHarness(t, false)
			var got *FailedOptions
			cmd := NewCmdFailed(h.f, func(_ context.Context, o *FailedOptions) error { got = o; return nil })
			cmd.SetArgs(c.args)
			cmd.SetOut(h.out)
			cmd.SetErr(h.errOut)
			err := cmd.Execute()
			if c.wantErr != "" {
				if err == nil || exitCodeFor(err) != ExitUsage || !strings.Contains(err.Error(), c.wantErr) || got != nil {
					t.Fatalf("error %v (%T), want a usage error with %q, runF called %v", err, err, c.wantErr, got != nil)
				}
				return
			}
			if err != nil || got == nil || !c.check(got) {
				t.Fatalf("err %v, opts %+v", err, got)
			}
		})
	}
}

type groupJSON struct {
	Signatures []struct {
		Signature string `json:"signature"`
		Count     int    `json:"count"`
		Recent    int    `json:"recent"`
		Previous  int    `json:"previous"`
		Change    int    `json:"change"`
		Spark     []int  `json:"spark"`
		New       bool   `json:"new"`
		Message   string `json:"exception_message"`
	} `json:"signatures"`
	TotalJobs     int    `json:"total_jobs"`
	Sort          string `json:"sort"`
	WindowSeconds int64  `json:"window_seconds"`
	NewSince      string `json:"new_since"`
	OnlyNew       bool   `json:"only_new"`
}

// TestFailedGroupTrend runs failed --group's trend paths on the seed
// (now 12:00; Podcast at 10:00 and 11:00, SMTP 11:30, broken 11:45).
func TestFailedGroupTrend(t *testing.T) {
	dsn, _ := seed(t)
	h := newHarness(t, false)
	group := func(args ...string) groupJSON {
		t.Helper()
		if code := h.run(append([]string{"failed", "--group", "--json", "--dsn", dsn}, args...)...); code != ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, h.errOut.String())
		}
		var g groupJSON
		if err := json.Unmarshal(h.out.Bytes(), &g); err != nil {
			t.Fatal(err)
		}
		return g
	}
	g := group("--window", "30m", "--sort", "trend")
	if g.Sort != "trend" || g.WindowSeconds != 1800 || g.NewSince != "2026-11-30T11:30:00Z" || g.OnlyNew || len(g.Signatures) != 3 {
		t.Fatalf("document: %+v", g)
	}
	// Last 30m (11:30–12:00): SMTP and broken, each +1 and new; Podcast:
	// 11:00 is the window before, 10:00 in neither: change -1.
	for i, s := range g.Signatures {
		podcast := strings.HasPrefix(s.Message, "Podcast")
		if podcast != (i == 2) {
			t.Errorf("trend order: %d is %q", i, s.Message)
		}
		if podcast && (s.Recent != 0 || s.Previous != 1 || s.Change != -1 || s.New || s.Count != 2) {
			t.Errorf("podcast: %+v", s)
		}
		if !podcast && (s.Recent != 1 || s.Previous != 0 || s.Change != 1 || !s.New) {
			t.Errorf("%q: %+v", s.Message, s)
		}
	}
	// --new-since: a duration back, or a wall-clock time in the app zone.
	for _, since := range []string{"45m", "2026-11-30 11:15:00"} {
		g = group("--new-since", since, "--sort", "first")
		if !g.OnlyNew || g.TotalJobs != 2 || len(g.Signatures) != 2 || !strings.HasPrefix(g.Signatures[0].Message, "broken") {
			t.Errorf("--new-since %s: %+v", since, g)
		}
	}
	g = group("--new-since", "2026-11-30 11:50")
	if len(g.Signatures) != 0 {
		t.Errorf("nothing started after 11:50: %+v", g)
	}

	// Piped: the trend's numbers after the seven existing columns.
	if code := h.run("failed", "--group", "--dsn", dsn, "--window", "30m"); code != ExitOK {
		t.Fatal(h.errOut.String())
	}
	for _, line := range strings.Split(strings.TrimSpace(h.out.String()), "\n") {
		cells := strings.Split(line, "\t")
		if len(cells) != 11 {
			t.Fatalf("piped record has %d cells: %q", len(cells), line)
		}
		if strings.Contains(cells[6], "Podcast") && strings.Join(cells[7:], ",") != "0,1,-1,false" {
			t.Errorf("podcast trend cells %v", cells[7:])
		}
	}
	if strings.ContainsAny(h.out.String(), "▁█") {
		t.Error("a sparkline in piped output")
	}

	// On a terminal: sparkline, change and the new mark, plain under NO_COLOR.
	h = newHarness(t, true)
	if code := h.run("failed", "--group", "--dsn", dsn, "--window", "30m", "--sort", "trend"); code != ExitOK {
		t.Fatal(h.errOut.String())
	}
	out := h.out.String()
	if !strings.Contains(out, "TREND 30m") || !strings.Contains(out, "▁▁▁▁▁▁█▁ +1 new") || !strings.Contains(out, "█▁▁▁▁▁▁▁ -1") ||
		strings.ContainsRune(out, '\x1b') {
		t.Errorf("TTY trend:\n%s", out)
	}
	if !strings.Contains(h.errOut.String(), "trend: the last 30m against the 30m before") {
		t.Errorf("stderr: %q", h.errOut.String())
	}
	if code := h.run("failed", "--group", "--dsn", dsn, "--new-since", "1m"); code != ExitOK || !strings.Contains(h.errOut.String(), "No signature first seen since 2026-11-30T11:59:00Z") {
		t.Errorf("empty --new-since: exit %d, %q", code, h.errOut.String())
	}
}

// TestFailedGroupTrendSameOnEveryDialect: the windows are the domain's,
// from the same rows, so every dialect gives the same document.
func TestFailedGroupTrendSameOnEveryDialect(t *testing.T) {
	var first string
	for _, d := range sqltest.Drivers() {
		dsn := seedDriver(t, d)
		h := newHarness(t, false)
		if code := h.run("failed", "--group", "--json", "--dsn", dsn, "--window", "45m", "--sort", "trend"); code != ExitOK {
			t.Fatalf("%s: %s", d, h.errOut.String())
		}
		doc := strings.Replace(h.out.String(), dsn, "DSN", 1) // the target differs by dialect
		if first == "" {
			first = doc
		} else if doc != first {
			t.Errorf("%s differs:\n%s\nfrom:\n%s", d, doc, first)
		}
	}
}
