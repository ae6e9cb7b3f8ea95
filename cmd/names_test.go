package cmd

import (
	"strings"
	"testing"
)

// TestNamesThatMatchNothing: a queue, connection or class that nothing has
// fails the commands that act (and monitor, a CI gate) with exit 4 and the
// closest names, before any "Would retry 0 jobs"; failed, a search, warns
// on stderr and succeeds.
func TestNamesThatMatchNothing(t *testing.T) {
	dsn, _ := seed(t)
	h := newHarness(t, false)
	const hint = `no queue "emials": no failed job, no queued job and no configured queue has that name; did you mean emails?`
	for _, args := range [][]string{
		{"monitor", "emials"},
		{"retry", "--queue", "emials", "--yes"},
		{"retry", "--queue", "emials", "--dry-run"},
		{"forget", "--queue", "emials", "--yes"},
	} {
		if code := h.run(append(args, "--dsn", dsn)...); code != ExitNotFound || h.errOut.String() != "jobtriage: not found: "+hint+"\n" || h.out.Len() != 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, h.out.String(), h.errOut.String())
		}
	}
	if code := h.run("retry", "--connection", "redsi", "--dry-run", "--dsn", dsn); code != ExitNotFound ||
		!strings.Contains(h.errOut.String(), `no connection "redsi"`) || !strings.Contains(h.errOut.String(), "did you mean redis?") {
		t.Errorf("--connection redsi: exit %d %q", code, h.errOut.String())
	}
	if code := h.run("failed", "--class", "SendMial", "--group", "--dsn", dsn); code != ExitOK ||
		h.errOut.String() != "warning: no job class matches \"SendMial\": no failed job's class contains it; did you mean App\\Jobs\\SendMail?\n" {
		t.Errorf("failed --class SendMial: exit %d %q", code, h.errOut.String())
	}
	for _, args := range [][]string{{"monitor", "emails"}, {"retry", "--queue", "emails", "--dry-run"}, {"failed", "--class", "sendmail"}} {
		if code := h.run(append(args, "--dsn", dsn)...); code != ExitOK || strings.Contains(h.errOut.String(), "did you mean") {
			t.Errorf("%v: exit %d %q", args, code, h.errOut.String())
		}
	}
}
