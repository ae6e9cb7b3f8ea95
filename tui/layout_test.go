package tui

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/jobtriage/jobtriage/triage"
)

// TestNarrowTableKeepsClassAndMessage: at 80×24 the signatures show each
// job's class whole and its message before the trend and first-seen
// columns, which give way; at 100 columns the trend is back and the class
// is still whole.
func TestNarrowTableKeepsClassAndMessage(t *testing.T) {
	for _, tc := range []struct {
		width          int
		want, wantNone []string
	}{
		{80, []string{"COUNT", "LAST SEEN", `App\Jobs\SyncInvoice `, `App\Jobs\SendNewsletter `, "RequestException: HTTP"}, []string{"TREND", "…s\\SyncInvoice", "…endNewsletter"}},
		{100, []string{"TREND", `App\Jobs\SyncInvoice `, `App\Jobs\SendNewsletter `, "RequestException: HTTP"}, []string{"…endNewsletter"}},
	} {
		h := newHarness(t, seed(), nil, Options{}, tc.width, 24)
		v := ansi.Strip(h.view())
		for _, w := range tc.want {
			if !strings.Contains(v, w) {
				t.Errorf("%d columns: no %q in\n%s", tc.width, w, v)
			}
		}
		for _, w := range tc.wantNone {
			if strings.Contains(v, w) {
				t.Errorf("%d columns: %q in\n%s", tc.width, w, v)
			}
		}
	}
	// The column sorted by stays, whatever its rank.
	h := newHarness(t, seed(), nil, Options{}, 80, 24)
	h.keys("s", "s", "s") // count → last seen → first seen → trend
	if v := ansi.Strip(h.view()); !strings.Contains(v, "TREND▼") || !strings.Contains(v, `App\Jobs\SyncInvoice `) {
		t.Errorf("sorted by trend at 80 columns:\n%s", v)
	}
}

// TestNarrowJobsShowUniqueIDPrefixes: at 80 columns a job's id is its
// shortest unique prefix (never a cut with an ellipsis), and whole when the
// terminal has room for it.
func TestNarrowJobsShowUniqueIDPrefixes(t *testing.T) {
	f := seed()
	h := newHarness(t, f, nil, Options{}, 80, 24)
	h.keys("enter")
	lines := strings.Split(ansi.Strip(h.view()), "\n")
	seen := map[string]bool{}
	for _, l := range lines[3 : len(lines)-3] {
		fields := strings.Fields(strings.TrimLeft(l, "▌✓ "))
		if len(fields) == 0 || fields[0] == "more" {
			continue
		}
		id := fields[0]
		if strings.Contains(id, "…") || len(id) != minIDPrefix || seen[id] {
			t.Errorf("id cell %q is not a unique %d-character prefix:\n%s", id, minIDPrefix, strings.Join(lines, "\n"))
		}
		seen[id] = true
	}
	if len(seen) < 10 {
		t.Fatalf("only %d job rows at 80×24", len(seen))
	}
	h.send(tea.WindowSizeMsg{Width: 120, Height: 24})
	if v := ansi.Strip(h.view()); !strings.Contains(v, f.jobs[0].ID+" ") && !strings.Contains(v, uuidN(997)+" ") {
		t.Errorf("120 columns: ids are not whole:\n%s", v)
	}
	if got := uniquePrefixLen([]string{"abcdefgh12", "abcdefgh13", "zz"}); got != 10 {
		t.Errorf("uniquePrefixLen: %d, want 10", got)
	}
	if got := uniquePrefixLen([]string{"1042", "7"}); got != 4 {
		t.Errorf("uniquePrefixLen of row ids: %d, want 4 (the longest)", got)
	}
}

// TestFooterKeepsHelpAndQuit: however narrow, each page's footer ends with
// ? help and q quit; page keys give way from the right.
func TestFooterKeepsHelpAndQuit(t *testing.T) {
	for _, width := range []int{60, 70, 80, 100} {
		for name, keys := range map[string][]string{"signatures": nil, "jobs": {"enter"}, "detail": {"enter", "enter"}} {
			f := seed()
			h := newHarness(t, f, f, Options{}, width, 24)
			h.keys(keys...)
			lines := strings.Split(ansi.Strip(h.view()), "\n")
			foot := lines[len(lines)-1]
			if !strings.HasSuffix(foot, "? help • q quit") || strings.Contains(foot, "…") || ansi.StringWidth(foot) > width {
				t.Errorf("%s at %d columns: footer %q", name, width, foot)
			}
		}
	}
}

// TestHeaderCutsTheConnectionAtAWord: at every width the connection is
// shown whole or cut after a whole word, never inside one ("…tabl…").
func TestHeaderCutsTheConnectionAtAWord(t *testing.T) {
	conn := "app Billing (production) · pgsql://forge@db.internal:5432/billing table failed_jobs"
	words := map[string]bool{}
	for _, w := range strings.Fields(conn) {
		words[w] = true
	}
	for width := 50; width <= 140; width++ {
		h := newHarness(t, seed(), nil, Options{Connection: conn, Window: 15 * time.Minute, Threshold: 50}, width, 24)
		head := strings.Split(ansi.Strip(h.view()), "\n")[0]
		end := strings.Index(head, " · 123 failed")
		if !strings.HasPrefix(head, "jobtriage · ") || end < len("jobtriage · ") {
			continue // the connection is dropped
		}
		shown := head[len("jobtriage · "):end]
		if !strings.HasSuffix(shown, "…") && shown != conn {
			t.Errorf("%d columns: the connection is cut without an ellipsis: %q", width, head)
		}
		for _, w := range strings.Fields(strings.TrimSuffix(shown, "…")) {
			if !words[w] {
				t.Errorf("%d columns: the connection is cut inside %q: %q", width, w, head)
			}
		}
	}
}

// TestSpaceDoesWhatItsHelpSays: space marks the row and moves to the next
// one, on both lists, and the help says so.
func TestSpaceDoesWhatItsHelpSays(t *testing.T) {
	f := seed()
	h := newHarness(t, f, f, Options{}, 100, 30)
	h.keys("?")
	spaceHelp := regexp.MustCompile(`space +mark, next`)
	if v := ansi.Strip(h.view()); !spaceHelp.MatchString(v) {
		t.Errorf("signatures help does not say space moves on:\n%s", v)
	}
	h.keys("esc", " ")
	if _, marked := h.m.sigs.marked[h.m.sigs.items[0].ID]; h.m.sigs.cursor != 1 || !marked {
		t.Errorf("space on signatures: cursor %d, marked %v", h.m.sigs.cursor, h.m.sigs.marked)
	}
	h.keys("esc", "enter", " ")
	if _, marked := h.m.jobs.marked[h.m.jobs.items[0].ID]; h.m.jobs.cursor != 1 || !marked {
		t.Errorf("space on jobs: cursor %d, marked %v", h.m.jobs.cursor, h.m.jobs.marked)
	}
	h.keys("?")
	if v := ansi.Strip(h.view()); !spaceHelp.MatchString(v) {
		t.Errorf("jobs help does not say space moves on:\n%s", v)
	}
}

// TestRetryDialogWithNothingToRetry: when the dry run finds every job
// skipped, the dialog says nothing would be retried, offers no y (neither
// in its text nor in the footer, and y does nothing), and offers the artisan
// command for the skipped jobs, which c copies whole.
func TestRetryDialogWithNothingToRetry(t *testing.T) {
	f := seed()
	f.skipConn = "redis"
	var ids []string
	for i := range f.jobs {
		if f.jobs[i].Signature == sigInvoice {
			f.jobs[i].Connection = "redis"
			ids = append(ids, f.jobs[i].ID)
		}
	}
	h := newHarness(t, f, f, Options{}, 80, 24)
	var clip bytes.Buffer
	h.m.clipboard = &clip
	h.keys("r")
	v := ansi.Strip(h.view())
	flat := strings.Join(strings.Fields(strings.ReplaceAll(v, "│", "")), " ")
	for _, want := range []string{"Nothing would be retried: all 120 would be skipped, 120 on connection redis (not writable by jobtriage).",
		"Artisan can retry the skipped jobs (c copies the command):", "php artisan queue:retry " + ids[0], "n close"} {
		if !strings.Contains(flat, want) {
			t.Errorf("dialog lacks %q:\n%s", want, v)
		}
	}
	lines := strings.Split(v, "\n")
	if foot := lines[len(lines)-1]; strings.Contains(flat, "y confirm") || strings.Contains(foot, "y yes") || !strings.Contains(foot, "c copy artisan command") {
		t.Errorf("the dialog still offers y, or not c:\n%s", v)
	}
	h.keys("y")
	if len(f.retries) != 0 || h.m.state != stateConfirm {
		t.Fatalf("y retried %+v (state %v)", f.retries, h.m.state)
	}
	h.keys("c")
	if want := ansi.SetSystemClipboard(triage.ArtisanRetry(ids)); clip.String() != want {
		t.Errorf("clipboard %q, want the command with every skipped id %q", clip.String(), want)
	}
	// The next dialog, with something to retry, offers y again and no c.
	h.keys("n", "down", "r")
	foot := strings.Split(ansi.Strip(h.view()), "\n")
	if f := foot[len(foot)-1]; !strings.Contains(f, "y yes") || strings.Contains(f, "c copy") {
		t.Errorf("next dialog's footer %q", f)
	}
}

// A retry confirmed before its dry run answered, which retried nothing,
// says so instead of "Retried 0 jobs".
func TestRetryOfNothingSaysSo(t *testing.T) {
	msg := actionMsg{act: action{kind: actionRetry, whole: true, object: "signature ab12cd34ef"},
		retry: triage.RetryResult{Skipped: []triage.Skip{{ID: "u1", Connection: "redis", Code: triage.SkipNotDatabase}}}}
	if got, want := actionSummary(msg), "Retried nothing of signature ab12cd34ef; skipped 1: 1 on connection redis (not writable by jobtriage)."; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
}

// TestFailedRefreshSaysTheListIsStale: after a failed refresh the rows
// stay, the header says STALE and the status line says since when and why,
// through other keys, until a refresh succeeds.
func TestFailedRefreshSaysTheListIsStale(t *testing.T) {
	f := seed()
	h := newHarness(t, f, f, Options{Window: time.Minute, Threshold: 10}, 80, 24)
	f.groupErr = errors.New("dial tcp 10.0.0.5:5432: connect: connection refused")
	h.keys("ctrl+r")
	golden.RequireEqual(t, []byte(ansi.Strip(h.view())))
	h.keys("down", "?", "esc")
	v := ansi.Strip(h.view())
	head := strings.Split(v, "\n")[0]
	if !strings.Contains(head, "STALE") || !strings.Contains(strings.Join(strings.Fields(v), " "), "Stale: rows as of 15:00:00; the refresh failed: dial tcp 10.0.0.5:5432: connect: connection refused (ctrl+r tries again)") ||
		!strings.Contains(v, `App\Jobs\SyncInvoice`) {
		t.Errorf("after other keys the list no longer says it is stale, or lost its rows:\n%s", v)
	}
	f.groupErr = nil
	h.keys("ctrl+r")
	if v := ansi.Strip(h.view()); strings.Contains(v, "STALE") || strings.Contains(v, "Stale") {
		t.Errorf("a successful refresh still says stale:\n%s", v)
	}
}

// TestGoldenSignatures100: at 100 columns the trend is back and no class
// is cut.
func TestGoldenSignatures100(t *testing.T) {
	h := newHarness(t, seed(), nil, Options{Connection: "pgsql://forge@db.internal:5432/app", Window: 15 * time.Minute, Threshold: 50}, 100, 30)
	golden.RequireEqual(t, []byte(ansi.Strip(h.view())))
}
