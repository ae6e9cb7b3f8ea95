package cmd

import (
	"reflect"
	"strings"
	"testing"
)

// TestNewCmdFailed: every flag of failed reaches FailedOptions, the
// defaults are the documented ones, and contradictory or malformed flags
// are usage errors (exit 2) before anything runs.
func TestNewCmdFailed(t *testing.T) {
	p := parseWith(t, NewCmdFailed)
	if p.code != ExitOK || p.opts == nil {
		t.Fatalf("no flags: exit %d %s", p.code, p.err)
	}
	if o := p.opts; o.Limit != 30 || o.LimitSet || o.Window != "1h" || o.Sort != "count" || o.Group || o.JSON || o.NDJSON || o.CSV || o.Full || o.After != "" || !o.Filter.empty() {
		t.Errorf("defaults: %+v", *o)
	}

	p = parseWith(t, NewCmdFailed, "--queue", "emails,high", "--queue", `a\,b`, "--connection", "redis", "--class", "Podcast",
		"--search", "SMTP", "--since", "2h", "--until", "1h", "--signature", "0f494f9f16", "-L", "5", "--json", "--full")
	if p.code != ExitOK {
		t.Fatalf("exit %d: %s", p.code, p.err)
	}
	want := FilterFlags{Queues: []string{"emails", "high", "a,b"}, Connections: []string{"redis"}, Class: "Podcast", Search: "SMTP",
		Since: "2h", Until: "1h", Signature: "0f494f9f16"}
	if o := p.opts; !reflect.DeepEqual(o.Filter, want) || o.Limit != 5 || !o.LimitSet || !o.JSON || !o.Full {
		t.Errorf("flags: %+v", *o)
	}

	p = parseWith(t, NewCmdFailed, "--group", "--new-since", "1d", "--window", "6h", "--sort", "trend")
	if o := p.opts; p.code != ExitOK || !o.Group || o.NewSince != "1d" || o.Window != "6h" || o.Sort != "trend" {
		t.Errorf("--group flags: exit %d %s %+v", p.code, p.err, o)
	}
	p = parseWith(t, NewCmdFailed, "--ndjson")
	if o := p.opts; p.code != ExitOK || !o.NDJSON || o.LimitSet {
		t.Errorf("--ndjson: exit %d %+v", p.code, o)
	}
	p = parseWith(t, NewCmdFailed, "--csv", "--limit", "3")
	if o := p.opts; p.code != ExitOK || !o.CSV || o.Limit != 3 {
		t.Errorf("--csv: exit %d %s", p.code, p.err)
	}

	usageCases(t, NewCmdFailed, map[string][]string{
		`--limit" flag: must not be negative`: {"--limit", "-1"},
		"--csv is an export":                  {"--csv", "--json"},
		"alternatives":                        {"--json", "--ndjson"},
		"--group takes neither":               {"--group", "--ndjson"},
		"--window goes with --group":          {"--window", "2h"},
		"does not combine with --since":       {"--group", "--new-since", "1d", "--since", "2h"},
		`--sort "sideways"`:                   {"--group", "--sort", "sideways"},
		"--full goes with":                    {"--full"},
		"--after":                             {"--after", "not-a-cursor"},
		"takes no arguments":                  {"1234"},
		"invalid argument":                    {"--limit", "many"},
		"unknown flag":                        {"--frobnicate"},
	})
}

// TestFailedRun: failed on the in-memory store lists newest first, pages
// with --limit and the printed cursor, and filters by queue.
func TestFailedRun(t *testing.T) {
	h, _ := fakeHarness(t, false, 5)
	if code := h.run("failed", "--queue", "emails"); code != ExitOK {
		t.Fatalf("exit %d %s", code, h.errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(h.out.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], fakeUUID(4)+"\t") || !strings.HasPrefix(lines[1], fakeUUID(2)+"\t") {
		t.Errorf("--queue emails:\n%s", h.out.String())
	}
	if code := h.run("failed", "--limit", "2", "--json"); code != ExitOK || strings.Count(h.out.String(), `"uuid"`) != 2 ||
		strings.Index(h.out.String(), fakeUUID(5)) > strings.Index(h.out.String(), fakeUUID(4)) {
		t.Errorf("--limit 2 --json: exit %d %s", code, h.out.String())
	}
	if code := h.run("failed", "--group", "--json"); code != ExitOK || !strings.Contains(h.out.String(), `"count": 5`) {
		t.Errorf("--group: exit %d %s %s", code, h.out.String(), h.errOut.String())
	}
}
