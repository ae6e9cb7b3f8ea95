package cmd

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestNewCmdPrune(t *testing.T) {
	p := parseWith(t, NewCmdPrune)
	if o := p.opts; p.code != ExitOK || o.Hours != 24 || o.Flush || o.DryRun || o.Yes || o.JSON || o.Archive.set() {
		t.Fatalf("defaults: exit %d %s %+v", p.code, p.err, o)
	}
	p = parseWith(t, NewCmdPrune, "--hours", "1.5", "--dry-run", "--yes", "--json", "--archive", "a.ndjson")
	if o := p.opts; p.code != ExitOK || o.Hours != 1.5 || !o.DryRun || !o.Yes || !o.JSON || o.Archive.Path != "a.ndjson" {
		t.Errorf("flags: exit %d %s %+v", p.code, p.err, o)
	}
	usageCases(t, NewCmdPrune, map[string][]string{
		"--hours must be greater than 0 (got 0)":  {"--hours", "0"},
		"--hours must be greater than 0 (got -2)": {"--hours", "-2"},
		"--archive - writes":                      {"--archive", "-", "--json"},
		"invalid argument":                        {"--hours", "a day"},
		"takes no arguments, got \"extra\"":       {"extra"},
	})
}

func TestNewCmdFlush(t *testing.T) {
	p := parseWith(t, NewCmdFlush)
	if o := p.opts; p.code != ExitOK || !o.Flush || o.HoursSet || o.Hours != 0 {
		t.Fatalf("defaults: exit %d %s %+v", p.code, p.err, o)
	}
	p = parseWith(t, NewCmdFlush, "--hours", "72", "-y")
	if o := p.opts; p.code != ExitOK || !o.HoursSet || o.Hours != 72 || !o.Yes {
		t.Errorf("--hours: exit %d %s %+v", p.code, p.err, o)
	}
	usageCases(t, NewCmdFlush, map[string][]string{
		"without --hours flush deletes everything": {"--hours", "0"},
		"--archive - writes":                       {"--archive", "-", "--json"},
	})
}

// TestPruneRun: prune on the in-memory store deletes what failed before
// now − hours, counts under --dry-run, and needs --yes without a terminal;
// flush empties the table.
func TestPruneRun(t *testing.T) {
	h, st := fakeHarness(t, false, 6) // failures at 10:01 … 10:06, now is 12:00
	cut := "--hours=" + strconv.FormatFloat(testNow.Sub(time.Date(testNow.Year(), testNow.Month(), testNow.Day(), 10, 4, 0, 0, time.UTC)).Hours(), 'f', -1, 64)
	if code := h.run("prune", cut); code != ExitCancelled || st.Len() != 6 {
		t.Fatalf("no --yes: exit %d, %d left", code, st.Len())
	}
	if code := h.run("prune", cut, "--dry-run", "--json"); code != ExitOK || st.Len() != 6 || !strings.Contains(h.out.String(), `"deleted": 3`) {
		t.Fatalf("--dry-run: exit %d, %d left %s %s", code, st.Len(), h.out.String(), h.errOut.String())
	}
	if code := h.run("prune", cut, "--yes", "--json"); code != ExitOK || st.Len() != 3 || !strings.Contains(h.out.String(), `"deleted": 3`) {
		t.Fatalf("--yes: exit %d, %d left %s %s", code, st.Len(), h.out.String(), h.errOut.String())
	}
	if code := h.run("flush", "--yes"); code != ExitOK || st.Len() != 0 {
		t.Errorf("flush: exit %d, %d left %s", code, st.Len(), h.errOut.String())
	}
}
