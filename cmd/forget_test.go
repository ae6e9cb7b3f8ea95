package cmd

import (
	"reflect"
	"testing"
)

func TestNewCmdForget(t *testing.T) {
	p := parseWith(t, NewCmdForget, "11111111-1111-4111-8111-111111111111", "7")
	if o := p.opts; p.code != ExitOK || !reflect.DeepEqual(o.IDs, []string{"11111111-1111-4111-8111-111111111111", "7"}) ||
		o.DryRun || o.Yes || o.JSON || o.Archive.set() {
		t.Fatalf("ids: exit %d %s %+v", p.code, p.err, o)
	}
	p = parseWith(t, NewCmdForget, "--queue", "emails", "--class", "Mail", "--since", "1d", "--dry-run", "-y", "--json", "--archive", "x.ndjson.gz")
	if o := p.opts; p.code != ExitOK || len(o.IDs) != 0 || !reflect.DeepEqual(o.Filter.Queues, []string{"emails"}) || o.Filter.Class != "Mail" ||
		o.Filter.Since != "1d" || !o.DryRun || !o.Yes || !o.JSON || o.Archive.Path != "x.ndjson.gz" {
		t.Errorf("filters: exit %d %s %+v", p.code, p.err, o)
	}
	usageCases(t, NewCmdForget, map[string][]string{
		"ids or filters, not both":                 {"7", "--queue", "emails"},
		"to delete everything use flush":           {},
		"--archive - writes the archive to stdout": {"--queue", "q", "--archive", "-", "--json"},
		"is not a valid row id":                    {"0"},
		"unknown flag":                             {"--all"},
		"invalid argument":                         {"7", "--dry-run=maybe"},
	})
}
