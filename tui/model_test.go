package tui

import (
	"errors"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"

	"github.com/jobtriage/jobtriage/triage"
)

func TestOpensOnSignatures(t *testing.T) {
	f := seed()
	h := newHarness(t, f, f, Options{Connection: "sqlite:/srv/app/database.sqlite", Window: 15 * time.Minute, Threshold: 10}, 120, 40)

	if h.m.state != stateSignatures {
		t.Fatalf("state = %s, want signatures", h.m.state)
	}
	if len(f.groups) != 1 || !f.groups[0].Query.Empty() || f.groups[0].ProgressEvery != groupProgressEvery {
		t.Fatalf("Group calls = %+v, want one unfiltered call asking for snapshots", f.groups)
	}
	var got []string
	for _, s := range h.m.sigs.items {
		got = append(got, s.ID)
	}
	if diff := cmp.Diff([]string{sigInvoice, sigMailer, sigImport}, got); diff != "" {
		t.Fatalf("signature order (-want +got):\n%s", diff)
	}
	v := h.view()
	// 14 failures fall in the last 15 minutes (one a minute, inclusive).
	for _, want := range []string{"sqlite:/srv/app/database.sqlite", "123 failed", "last 15m: 15/10 ALERT", "App\\Jobs\\SyncInvoice"} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
}

func TestDrillDownAndBack(t *testing.T) {
	f := seed()
	h := newHarness(t, f, f, Options{}, 80, 24)

	h.keys("down", "up", "enter")
	if h.m.state != stateJobs {
		t.Fatalf("state = %s, want jobs", h.m.state)
	}
	last := f.lists[len(f.lists)-1]
	if last.Signature != sigInvoice || last.Limit != pageSize || last.Cursor != "" {
		t.Fatalf("List = %+v, want first page of %s", last, sigInvoice)
	}
	if n := len(h.m.jobs.items); n != pageSize {
		t.Fatalf("jobs loaded = %d, want %d", n, pageSize)
	}
	h.keys("down", "down", "enter")
	if h.m.state != stateDetail {
		t.Fatalf("state = %s, want detail", h.m.state)
	}
	want := f.jobs[4].ID // the mailer and importer come first in f.jobs
	if got := f.shows; len(got) != 1 || got[0] != want {
		t.Fatalf("Show calls = %v, want [%s]", got, want)
	}
	if !strings.Contains(h.view(), "Summary") {
		t.Fatalf("detail view:\n%s", h.view())
	}
	h.keys("tab")
	if p := h.m.detail; p.tabs[p.section] != "Payload" {
		t.Fatalf("tab %q after tab, want the model's second section, Payload", p.tabs[p.section])
	}
	h.keys("esc")
	if h.m.state != stateJobs || h.m.jobs.cursor != 2 {
		t.Fatalf("after esc: state %s cursor %d, want jobs at 2", h.m.state, h.m.jobs.cursor)
	}
	h.keys("backspace")
	if h.m.state != stateSignatures || h.m.sigs.cursor != 0 {
		t.Fatalf("after backspace: state %s cursor %d", h.m.state, h.m.sigs.cursor)
	}
}

func TestJobsPageLazily(t *testing.T) {
	f := seed()
	h := newHarness(t, f, f, Options{}, 80, 24)
	h.keys("enter")
	before := len(f.lists)
	h.keys("down", "down")
	if len(f.lists) != before {
		t.Fatalf("asked for a page with the cursor far from the end: %+v", f.lists[before:])
	}
	h.keys("end") // cursor 49 of 50: the next page is due
	if len(f.lists) != before+1 {
		t.Fatalf("List calls after end = %d, want %d", len(f.lists), before+1)
	}
	next := f.lists[len(f.lists)-1]
	if next.Cursor != "50" || next.Signature != sigInvoice {
		t.Fatalf("next page params = %+v", next)
	}
	if n := len(h.m.jobs.items); n != 100 {
		t.Fatalf("jobs = %d after one more page, want 100", n)
	}
	h.keys("end", "end")
	if n := len(h.m.jobs.items); n != 120 || h.m.jobs.next != "" {
		t.Fatalf("jobs = %d next %q, want all 120 and no next", n, h.m.jobs.next)
	}
	calls := len(f.lists)
	h.keys("end")
	if len(f.lists) != calls {
		t.Fatal("asked for a page past the end")
	}
}

func TestRetryOneJobLeavesTheList(t *testing.T) {
	f := seed()
	h := newHarness(t, f, f, Options{}, 80, 24)
	h.keys("enter", "down")
	job := h.m.jobs.items[1]
	h.keys("r")
	if h.m.state != stateConfirm {
		t.Fatalf("state = %s, want confirm", h.m.state)
	}
	if want := "Retry 1 failed job " + job.ID + "?"; h.m.confirm.prompt != want {
		t.Fatalf("prompt = %q, want %q", h.m.confirm.prompt, want)
	}
	if len(f.retries) != 0 {
		t.Fatal("retried before confirmation")
	}
	h.keys("y")
	if len(f.retries) != 1 {
		t.Fatalf("Retry calls = %d, want 1", len(f.retries))
	}
	if diff := cmp.Diff([]triage.Ref{{UUID: job.UUID}}, f.retries[0].Refs); diff != "" {
		t.Fatalf("refs (-want +got):\n%s", diff)
	}
	if h.m.state != stateJobs {
		t.Fatalf("state = %s after retry, want jobs", h.m.state)
	}
	for _, j := range h.m.jobs.items {
		if j.ID == job.ID {
			t.Fatal("the retried job is still listed")
		}
	}
	if got := h.m.sigs.items[0].Count; got != 119 {
		t.Errorf("signature count after refresh = %d, want 119", got)
	}
	if !strings.Contains(h.view(), "Retried job "+job.ID+" onto default (1).") {
		t.Errorf("status line missing:\n%s", h.view())
	}
}

func TestRetrySignatureStatesTheCount(t *testing.T) {
	f := seed()
	f.counts[sigInvoice] = 1204
	h := newHarness(t, f, f, Options{}, 80, 24)
	h.keys("r")
	if want := "Retry 1,204 failed jobs of signature ab12cd34ef?"; h.m.confirm.prompt != want {
		t.Fatalf("prompt = %q, want %q", h.m.confirm.prompt, want)
	}
	h.keys("y")
	if len(f.retries) != 1 || f.retries[0].Query.Signature != sigInvoice || len(f.retries[0].Refs) != 0 {
		t.Fatalf("Retry = %+v, want the whole signature", f.retries)
	}
	if h.m.state != stateSignatures {
		t.Fatalf("state = %s", h.m.state)
	}
	for _, s := range h.m.sigs.items {
		if s.ID == sigInvoice {
			t.Fatal("the retried signature is still listed")
		}
	}
}

func TestForgetSignatureFromJobsUnderFilter(t *testing.T) {
	f := seed()
	h := newHarness(t, f, f, Options{}, 80, 24)
	h.m.query = triage.Query{Filter: triage.Filter{Queues: []string{"emails"}}}
	h.keys("enter", "F")
	if !strings.HasPrefix(h.m.confirm.prompt, "Forget ") {
		t.Fatalf("prompt = %q", h.m.confirm.prompt)
	}
	h.keys("y")
	want := triage.Query{Filter: triage.Filter{Queues: []string{"emails"}}, Signature: sigInvoice}
	if len(f.forgets) != 1 || !cmp.Equal(f.forgets[0].Query, want) {
		t.Fatalf("Forget = %+v, want query %+v", f.forgets, want)
	}
}

func TestConfirmationCancelled(t *testing.T) {
	f := seed()
	h := newHarness(t, f, f, Options{}, 80, 24)
	for _, no := range []string{"n", "esc"} {
		h.keys("f", no)
		if h.m.state != stateSignatures {
			t.Fatalf("%s: state = %s", no, h.m.state)
		}
	}
	if len(f.forgets) != 0 {
		t.Fatal("forgot after cancelling")
	}
}

func TestActionErrorShowsInStatus(t *testing.T) {
	f := seed()
	f.actionErr = errors.New("SQLSTATE[40001]: deadlock \x1b[31m")
	h := newHarness(t, f, f, Options{}, 80, 24)
	h.keys("r", "y")
	v := h.view()
	if !strings.Contains(v, "Retry of signature ab12cd34ef failed: SQLSTATE[40001]: deadlock") {
		t.Fatalf("status:\n%s", v)
	}
	if strings.Contains(v, "\x1b") {
		t.Fatal("escape from an error reached the screen")
	}
	if h.m.state != stateSignatures || len(h.m.sigs.items) != 3 {
		t.Fatalf("state %s with %d signatures", h.m.state, len(h.m.sigs.items))
	}
}

func TestReadOnly(t *testing.T) {
	for name, tc := range map[string]struct {
		actions Actions
		opts    Options
	}{
		"nil actions": {nil, Options{}},
		"option":      {seed(), Options{ReadOnly: true}},
	} {
		t.Run(name, func(t *testing.T) {
			f := seed()
			h := newHarness(t, f, tc.actions, tc.opts, 80, 24)
			h.keys("r", "f", "enter", "r", "R", "f", "F", "enter", "r", "f")
			if h.m.state != stateDetail {
				t.Fatalf("state = %s, want detail (no confirmation)", h.m.state)
			}
			if a, ok := tc.actions.(*fakeBackend); ok && (len(a.retries)+len(a.forgets)) > 0 {
				t.Fatal("an action ran in read-only mode")
			}
			v := h.view()
			if !strings.Contains(v, "READ-ONLY") || strings.Contains(v, "retry ") || strings.Contains(v, "forget ") {
				t.Fatalf("view:\n%s", v)
			}
			h.keys("?")
			if v := h.view(); strings.Contains(v, "retry job") || strings.Contains(v, "forget job") || !strings.Contains(v, "Read-only") {
				t.Fatalf("help lists actions in read-only mode:\n%s", v)
			}
		})
	}
}

func TestFilter(t *testing.T) {
	f := seed()
	h := newHarness(t, f, f, Options{}, 80, 24)
	h.keys("/")
	if h.m.state != stateFilter {
		t.Fatalf("state = %s", h.m.state)
	}
	h.keys("s", "m", "t", "p", "tab", "emails, imports", "tab", "News", "backspace", "s")
	h.keys("enter")
	if h.m.state != stateSignatures {
		t.Fatalf("state = %s after apply", h.m.state)
	}
	want := triage.Query{Filter: triage.Filter{Search: "smtp", Queues: []string{"emails", "imports"}}, Class: "News"}
	last := f.groups[len(f.groups)-1].Query
	if !cmp.Equal(last, want) {
		t.Fatalf("Group query = %+v, want %+v", last, want)
	}
	if len(h.m.sigs.items) != 1 || h.m.sigs.items[0].ID != sigMailer {
		t.Fatalf("filtered signatures = %+v", h.m.sigs.items)
	}
	if v := h.view(); !strings.Contains(v, `filter: text "smtp", queue emails,imports, class News`) || !strings.Contains(v, "2 matching") {
		t.Fatalf("view:\n%s", v)
	}
	// The jobs list of a signature honours the filter too.
	h.keys("enter")
	if got := f.lists[len(f.lists)-1].Query; got.Class != "News" || got.Signature != sigMailer {
		t.Fatalf("List query = %+v", got)
	}
	// Esc leaves the filter form without changing anything.
	groups := len(f.groups)
	h.keys("/", "x", "esc")
	if len(f.groups) != groups || h.m.state != stateJobs {
		t.Fatal("esc applied the filter")
	}
}

func TestSignaturesStreamIn(t *testing.T) {
	f := seed()
	f.gate = make(chan struct{})
	h := &harness{t: t, m: New(t.Context(), f, f, Options{Now: fixedNow, NoColor: true}, nil)}
	h.m.tick = noTick
	h.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	if v := h.view(); !strings.Contains(v, "Scanning failed jobs") {
		t.Fatalf("first screen before any data:\n%s", v)
	}
	first, ok := h.m.Init()().(groupMsg) // the scan is Init's only command here
	if !ok {
		t.Fatal("Init did not start the scan")
	}
	mm, more := h.m.Update(first) // not run yet: it waits for the gate
	h.m = mm.(Model)
	if !h.m.sigs.loading || len(h.m.sigs.items) != 1 {
		t.Fatalf("after the first snapshot: loading %v, %d signatures", h.m.sigs.loading, len(h.m.sigs.items))
	}
	if v := h.view(); !strings.Contains(v, "scanning 25% · 120 jobs") || !strings.Contains(v, "≥120 failed") {
		t.Fatalf("streaming view:\n%s", v)
	}
	close(f.gate)
	h.run(more)
	if h.m.sigs.loading || len(h.m.sigs.items) != 3 || h.m.sigs.err != nil {
		t.Fatalf("after the scan: loading %v, %d signatures, err %v", h.m.sigs.loading, len(h.m.sigs.items), h.m.sigs.err)
	}
}

func TestErrorAndRecovery(t *testing.T) {
	f := seed()
	f.groupErr = errors.New(`pq: relation "failed_jobs" does not exist`)
	h := newHarness(t, f, f, Options{}, 80, 24)
	if v := h.view(); !strings.Contains(v, "Could not read failed jobs") || !strings.Contains(v, `relation "failed_jobs" does not exist`) {
		t.Fatalf("error view:\n%s", v)
	}
	f.groupErr = nil
	h.keys("ctrl+r")
	if h.m.sigs.err != nil || len(h.m.sigs.items) != 3 {
		t.Fatalf("after refresh: err %v, %d signatures", h.m.sigs.err, len(h.m.sigs.items))
	}
}

func TestDetailErrorDoesNotCrash(t *testing.T) {
	f := seed()
	f.showErr = triage.ErrNotFound
	h := newHarness(t, f, f, Options{}, 80, 24)
	h.keys("enter", "enter")
	if v := h.view(); h.m.state != stateDetail || !strings.Contains(v, "not found") {
		t.Fatalf("state %s:\n%s", h.m.state, v)
	}
	h.keys("esc")
	if h.m.state != stateJobs {
		t.Fatalf("state = %s", h.m.state)
	}
}

func TestStaleAnswersAreDropped(t *testing.T) {
	f := seed()
	h := newHarness(t, f, f, Options{}, 80, 24)
	h.keys("enter")
	jobs := len(h.m.jobs.items)
	h.send(pageMsg{seq: h.m.jobs.seq - 1, page: triage.Page{}})
	h.send(groupMsg{seq: h.m.sigs.seq - 1, progress: triage.GroupProgress{Done: true}})
	h.send(detailMsg{seq: h.m.detail.seq - 1, err: errors.New("late")})
	if len(h.m.jobs.items) != jobs || len(h.m.sigs.items) != 3 || h.m.detail.err != nil {
		t.Fatal("a stale answer changed the model")
	}
}

func TestAutoRefreshPicksUpNewFailures(t *testing.T) {
	f := seed()
	var ticks []time.Duration
	opts := Options{Refresh: 30 * time.Second, Now: fixedNow, NoColor: true}
	m := New(t.Context(), f, f, opts, nil)
	m.tick = func(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd {
		ticks = append(ticks, d)
		return nil
	}
	h := &harness{t: t, m: m}
	h.run(h.m.Init())
	if !containsDuration(ticks, 30*time.Second) {
		t.Fatalf("Init scheduled %v, want a 30s refresh", ticks)
	}
	f.mu.Lock()
	f.jobs = append([]triage.Job{{ID: "new-1", UUID: "new-1", Queue: "default", Class: `App\Jobs\Fresh`,
		ExceptionClass: "LogicException", ExceptionMessage: "boom", FailedAt: clock, Signature: "ffff0000"}}, f.jobs...)
	f.mu.Unlock()
	ticks = nil
	h.send(refreshMsg{})
	if len(h.m.sigs.items) != 4 {
		t.Fatalf("signatures after refresh = %d, want 4", len(h.m.sigs.items))
	}
	if !containsDuration(ticks, 30*time.Second) {
		t.Fatal("refresh did not re-arm its tick")
	}
}

func containsDuration(list []time.Duration, d time.Duration) bool {
	for _, x := range list {
		if x == d {
			return true
		}
	}
	return false
}

func TestHelpIsDrivenByTheKeyMap(t *testing.T) {
	f := seed()
	h := newHarness(t, f, f, Options{}, 120, 40)
	footer := h.view()
	for _, b := range h.m.keys.helpFor(stateSignatures).ShortHelp() {
		if !strings.Contains(footer, b.Help().Desc) {
			t.Errorf("footer lacks %q", b.Help().Desc)
		}
	}
	h.keys("?")
	if h.m.state != stateHelp {
		t.Fatalf("state = %s", h.m.state)
	}
	v := h.view()
	for _, group := range h.m.keys.helpFor(stateSignatures).FullHelp() {
		for _, b := range group {
			if !strings.Contains(v, b.Help().Desc) {
				t.Errorf("help lacks %q:\n%s", b.Help().Desc, v)
			}
		}
	}
	h.keys("esc")
	if h.m.state != stateSignatures {
		t.Fatalf("state = %s", h.m.state)
	}
}

func TestQuit(t *testing.T) {
	for _, k := range []string{"q", "ctrl+c"} {
		h := newHarness(t, seed(), nil, Options{}, 80, 24)
		h.keys(k)
		if !h.quit {
			t.Errorf("%s did not quit", k)
		}
	}
	// In the filter form, q is a letter.
	h := newHarness(t, seed(), nil, Options{}, 80, 24)
	h.keys("/", "q")
	if h.quit || h.m.filter.inputs[fieldText].Value() != "q" {
		t.Fatal("q quit from the filter form")
	}
}

func TestHostileTextIsInert(t *testing.T) {
	f := seed()
	f.jobs[0].ExceptionMessage = "pwned \x1b]0;title\x07 \x1b[2J \u202eevil\r\n"
	f.jobs[0].Class = "App\\Jobs\\\x1b[31mRed"
	h := newHarness(t, f, f, Options{}, 120, 40)
	for _, keys := range [][]string{nil, {"down", "enter"}, {"enter"}, {"tab"}, {"tab"}} {
		h.keys(keys...)
		v := h.view()
		if strings.ContainsAny(v, "\x1b\x07\r\u202e") {
			t.Fatalf("control characters reached the screen in %s:\n%q", h.m.state, v)
		}
	}
}

func TestResizeKeepsEveryLineInside(t *testing.T) {
	f := seed()
	h := newHarness(t, f, f, Options{Connection: strings.Repeat("x", 200), Window: time.Hour, Threshold: 5}, 120, 40)
	for _, size := range [][2]int{{80, 24}, {20, 8}, {200, 60}, {5, 2}} {
		h.send(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		for _, keys := range [][]string{nil, {"enter"}, {"enter"}, {"tab"}, {"esc", "esc", "/"}, {"esc", "r"}, {"n"}} {
			h.keys(keys...)
			lines := strings.Split(h.view(), "\n")
			if len(lines) != h.m.height {
				t.Fatalf("%v %s: %d lines, want %d", size, h.m.state, len(lines), h.m.height)
			}
			for _, l := range lines {
				if ansi.StringWidth(l) > h.m.width {
					t.Fatalf("%v %s: line wider than %d: %q", size, h.m.state, h.m.width, l)
				}
			}
		}
	}
}

// With an archive (tui --archive), a forget hands every row to it before
// the delete, and the dialog and the status line say where they went;
// without one the dialog says a forget cannot be undone.
func TestForgetArchivesWhenAsked(t *testing.T) {
	f := seed()
	h := newHarness(t, f, f, Options{}, 100, 24)
	h.keys("f")
	if v := h.view(); !strings.Contains(v, "y forget (cannot be undone)") || strings.Contains(v, "archived") {
		t.Fatalf("dialog without an archive:\n%s", v)
	}
	h.keys("n")

	var archived []string
	opts := Options{ArchivePath: "/var/archive/failed.ndjson.gz", Archive: archiveFunc(func(rows []triage.RawRow) error {
		for _, r := range rows {
			archived = append(archived, *r.UUID)
		}
		return nil
	})}
	f = seed()
	h = newHarness(t, f, f, opts, 100, 24)
	h.keys("enter", "f")
	if v := h.view(); !strings.Contains(v, "y forget (each row archived to /var/archive/failed.ndjson.gz first)") {
		t.Fatalf("dialog with an archive:\n%s", v)
	}
	h.keys("y")
	if len(f.forgets) != 1 || len(archived) != 1 || f.forgets[0].Archive == nil {
		t.Fatalf("forgets %+v, archived %v", f.forgets, archived)
	}
	if v := h.view(); !strings.Contains(v, "; archived to /var/archive/failed.ndjson.gz first.") {
		t.Fatalf("status after the forget:\n%s", v)
	}

	// A failing archive stops the forget, and the status says so.
	f = seed()
	opts.Archive = archiveFunc(func([]triage.RawRow) error { return errors.New("archive: no space left on device") })
	h = newHarness(t, f, f, opts, 100, 24)
	h.keys("f", "y")
	if v := h.view(); !strings.Contains(v, "no space left on device") {
		t.Fatalf("status after a failed archive:\n%s", v)
	}
}
