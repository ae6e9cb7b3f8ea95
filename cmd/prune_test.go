package cmd

import "testing"

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
