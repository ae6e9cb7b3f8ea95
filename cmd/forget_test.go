package cmd

import (
	"reflect"
	"strings"
	"testing"

	"github.com/jobtriage/jobtriage/triage"
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

// TestForgetRun: on the in-memory store, forget by filter asks for --yes
// without a terminal (exit 3, nothing deleted), counts under --dry-run, and
// deletes exactly the selected jobs with --yes; an unknown id is exit 4.
func TestForgetRun(t *testing.T) {
	h, st := fakeHarness(t, false, 6)
	if code := h.run("forget", "--queue", "emails"); code != ExitCancelled || st.Len() != 6 || !strings.Contains(h.errOut.String(), "--yes") {
		t.Fatalf("no tty, no --yes: exit %d, %d left, %q", code, st.Len(), h.errOut.String())
	}
	if code := h.run("forget", "--queue", "emails", "--dry-run", "--json"); code != ExitOK || st.Len() != 6 ||
		!strings.Contains(h.out.String(), `"dry_run": true`) || !strings.Contains(h.out.String(), `"deleted": 3`) {
		t.Fatalf("--dry-run: exit %d, %d left, %s %s", code, st.Len(), h.out.String(), h.errOut.String())
	}
	if code := h.run("forget", "--queue", "emails", "--yes", "--json"); code != ExitOK || st.Len() != 3 || !strings.Contains(h.out.String(), `"deleted": 3`) {
		t.Fatalf("--yes: exit %d, %d left, %s %s", code, st.Len(), h.out.String(), h.errOut.String())
	}
	if _, err := st.GetFailed(t.Context(), triage.Ref{ID: 2}); err == nil {
		t.Error("job 2 (emails) is still there")
	}
	if _, err := st.GetFailed(t.Context(), triage.Ref{ID: 1}); err != nil {
		t.Errorf("job 1 (default) was deleted: %v", err)
	}
	if code := h.run("forget", fakeUUID(1), "--yes"); code != ExitOK || st.Len() != 2 {
		t.Errorf("by uuid: exit %d, %d left, %s", code, st.Len(), h.errOut.String())
	}
	if code := h.run("forget", fakeUUID(99), "--yes"); code != ExitNotFound || !strings.Contains(h.errOut.String(), "no failed job with id "+fakeUUID(99)) {
		t.Errorf("unknown uuid: exit %d %s", code, h.errOut.String())
	}
}
