package cmd

import "testing"

func TestNewCmdRestore(t *testing.T) {
	p := parseWith(t, NewCmdRestore, "old.ndjson.gz")
	if o := p.opts; p.code != ExitOK || o.Path != "old.ndjson.gz" || o.DryRun || o.JSON || o.Open == nil {
		t.Fatalf("defaults: exit %d %s %+v", p.code, p.err, o)
	}
	p = parseWith(t, NewCmdRestore, "-", "--dry-run", "--json")
	if o := p.opts; p.code != ExitOK || o.Path != "-" || !o.DryRun || !o.JSON {
		t.Errorf("flags: exit %d %s %+v", p.code, p.err, o)
	}
	usageCases(t, NewCmdRestore, map[string][]string{
		"name an archive file": {""},
		"accepts 1 arg(s)":     {},
		"received 2":           {"a", "b"},
	})
}
