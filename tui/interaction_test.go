package tui

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/google/go-cmp/cmp"
	"github.com/muesli/termenv"

	"github.com/jobtriage/jobtriage/triage"
)

// cursorLine is the view's line holding the cursor mark.
func cursorLine(t *testing.T, view string) string {
	t.Helper()
	for _, l := range strings.Split(ansi.Strip(view), "\n") {
		if strings.HasPrefix(l, cursorMark) {
			return l
		}
	}
	t.Fatalf("no line starts with the cursor mark:\n%s", view)
	return ""
}

// The NO_COLOR screen is compared raw, escapes and all: it must have none,
// and the row r would act on must still be visible.
func TestGoldenNoColor(t *testing.T) {
	for _, tc := range []struct {
		name string
		keys []string
	}{
		{"signatures", nil},
		{"jobs_marked", []string{"enter", "down", "down", " "}},
		{"detail_tab", []string{"enter", "enter", "tab"}},
		{"filter_cursor", []string{"/", "smtp"}},
	} {
		keys := tc.keys
		t.Run(tc.name, func(t *testing.T) {
			f := seed()
			h := newHarness(t, f, f, Options{Connection: "sqlite:database/database.sqlite"}, 80, 24)
			h.keys(keys...)
			v := h.view()
			if strings.Contains(v, "\x1b") {
				t.Fatalf("escape sequence under NO_COLOR:\n%q", v)
			}
			golden.RequireEqual(t, []byte(v))
		})
	}
}

// Reverse video is one way to show the cursor; the mark is the one that
// every colour profile keeps.
func TestCursorMarkInEveryProfile(t *testing.T) {
	for _, p := range []termenv.Profile{termenv.Ascii, termenv.ANSI, termenv.ANSI256, termenv.TrueColor} {
		f := seed()
		h := newHarness(t, f, f, Options{}, 80, 24)
		r := newRenderer(io.Discard, false)
		r.SetColorProfile(p)
		h.m.st = newStyles(r)
		h.keys("down")
		if l := cursorLine(t, h.view()); !strings.Contains(l, "endNewsletter") {
			t.Errorf("profile %v: cursor line %q, want the second signature", p, l)
		}
	}
}

// A burst of runes in one message moves the cursor rune by rune: g j j j r
// asks about the fourth job, as typed.
func TestBurstOfRunesMovesTheCursor(t *testing.T) {
	f := seed()
	ctx := t.Context()
	m := New(ctx, f, f, Options{Now: fixedNow, NoColor: true}, nil)
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))
	waitFor(t, tm, "123 failed")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitFor(t, tm, "1 of 120 jobs")
	f.mu.Lock()            // the program's commands read and rewrite f.jobs concurrently
	fourth := f.jobs[5].ID // the mailer and importer come first in f.jobs
	f.mu.Unlock()
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("jjjjgjjjr")})
	waitFor(t, tm, "Retry 1 failed job "+fourth+"?")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("n")})
	waitFor(t, tm, "Cancelled.")
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(Model)
	if final.state != stateJobs || final.jobs.cursor != 3 {
		t.Fatalf("state %s cursor %d, want jobs at 3", final.state, final.jobs.cursor)
	}
	if len(f.retries) != 0 {
		t.Fatal("retried after n")
	}
}

// A paste (and the rest of a burst once the filter is open) is text.
func TestBurstAndPasteInTheFilter(t *testing.T) {
	f := seed()
	h := newHarness(t, f, f, Options{}, 80, 24)
	h.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("/smtp")})
	if h.m.state != stateFilter || h.m.filter.inputs[fieldText].Value() != "smtp" {
		t.Fatalf("state %s text %q, want the filter with smtp", h.m.state, h.m.filter.inputs[fieldText].Value())
	}
	h.keys("tab")
	h.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("emails"), Paste: true})
	if got := h.m.filter.inputs[fieldQueue].Value(); got != "emails" {
		t.Fatalf("pasted queue = %q", got)
	}
	// A paste on a list is not a string of commands.
	h.keys("esc")
	h.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("jjq"), Paste: true})
	if h.quit || h.m.sigs.cursor != 0 {
		t.Fatalf("a paste ran as keys: quit %v cursor %d", h.quit, h.m.sigs.cursor)
	}
}

func TestMarkJobsAndRetryThem(t *testing.T) {
	f := seed()
	h := newHarness(t, f, f, Options{}, 80, 24)
	h.keys("enter", " ", "down", " ")
	marked := []string{h.m.jobs.items[0].ID, h.m.jobs.items[2].ID}
	if v := h.view(); !strings.Contains(v, "4 of 120 jobs · 2 marked") || strings.Count(v, markedMark) != 2 {
		t.Fatalf("view:\n%s", v)
	}
	h.keys("r")
	if want := "Retry 2 marked jobs?"; h.m.confirm.prompt != want {
		t.Fatalf("prompt %q, want %q", h.m.confirm.prompt, want)
	}
	h.keys("y")
	if len(f.retries) != 1 || len(f.retries[0].Refs) != 2 {
		t.Fatalf("retries = %+v, want one call with two refs", f.retries)
	}
	for _, j := range h.m.jobs.items {
		if j.ID == marked[0] || j.ID == marked[1] {
			t.Fatalf("retried job %s still listed", j.ID)
		}
	}
	if len(h.m.jobs.marked) != 0 {
		t.Fatal("marks survived the action")
	}
	if got := h.m.sigs.items[0].Count; got != 118 {
		t.Fatalf("signature count = %d, want 118", got)
	}
	if !strings.Contains(h.view(), "Retried 2 of 2 marked jobs onto default (2).") {
		t.Fatalf("status:\n%s", h.view())
	}
}

func TestMarkSignaturesAndForgetThem(t *testing.T) {
	f := seed()
	h := newHarness(t, f, f, Options{}, 80, 24)
	h.keys("down", " ", " ")
	if n := len(h.m.sigs.marked); n != 2 {
		t.Fatalf("marked %d, want 2", n)
	}
	h.keys("f")
	if want := "Forget 3 failed jobs of 2 signatures?"; h.m.confirm.prompt != want {
		t.Fatalf("prompt %q, want %q", h.m.confirm.prompt, want)
	}
	h.keys("y")
	var sigs []string
	for _, p := range f.forgets {
		sigs = append(sigs, p.Query.Signature)
	}
	if diff := cmp.Diff([]string{sigMailer, sigImport}, sigs); diff != "" {
		t.Fatalf("forgets (-want +got):\n%s", diff)
	}
	if len(h.m.sigs.items) != 1 || h.m.sigs.items[0].ID != sigInvoice {
		t.Fatalf("signatures left = %+v", h.m.sigs.items)
	}
	// esc unmarks first, then it is the filter's.
	h.keys(" ", "esc")
	if len(h.m.sigs.marked) != 0 || h.m.state != stateSignatures {
		t.Fatal("esc did not clear the marks")
	}
}

func TestSortSignatures(t *testing.T) {
	f := seed()
	h := newHarness(t, f, f, Options{}, 120, 40)
	order := func() []string {
		var ids []string
		for _, s := range h.m.sigs.items {
			ids = append(ids, s.ID)
		}
		return ids
	}
	for _, step := range []struct {
		want   []string
		header string
	}{
		{[]string{sigInvoice, sigMailer, sigImport}, "COUNT▼"},
		// The mailer failed last a minute ago, the importer two, the invoices three.
		{[]string{sigMailer, sigImport, sigInvoice}, "LAST SEEN▼"},
		// The importer started failing 2 minutes ago; the others 2 hours ago.
		{[]string{sigImport, sigInvoice, sigMailer}, "FIRST SEEN▼"},
		// Last hour against the hour before: the mailer and the importer
		// +1 each (the mailer has more failures), the invoices 58 against 60.
		{[]string{sigMailer, sigImport, sigInvoice}, "TREND▼"},
		{[]string{sigInvoice, sigMailer, sigImport}, "COUNT▼"},
	} {
		if diff := cmp.Diff(step.want, order()); diff != "" {
			t.Fatalf("order by %s (-want +got):\n%s", h.m.sigs.order, diff)
		}
		if v := h.view(); !strings.Contains(v, step.header) {
			t.Fatalf("header lacks %q:\n%s", step.header, v)
		}
		// A refresh keeps the order and the cursor's signature.
		h.keys("end", "ctrl+r")
		if diff := cmp.Diff(step.want, order()); diff != "" || h.m.sigs.cursor != 2 {
			t.Fatalf("after refresh by %s cursor %d (-want +got):\n%s", h.m.sigs.order, h.m.sigs.cursor, diff)
		}
		h.keys("s")
	}
}

func TestStatusClearsOnViewDialogAndResize(t *testing.T) {
	f := seed()
	h := newHarness(t, f, f, Options{}, 80, 24)
	say := func() {
		h.m.status = statusLine{text: "Forgot job x."}
		if !strings.Contains(h.view(), "Forgot job x.") {
			t.Fatal("status not shown")
		}
	}
	for _, step := range []struct {
		name string
		keys []string
	}{
		{"open jobs", []string{"enter"}}, {"open detail", []string{"enter"}}, {"back to jobs", []string{"esc"}},
		{"back to signatures", []string{"esc"}}, {"dialog", []string{"r"}}, {"dialog closed", []string{"esc"}},
		{"filter", []string{"/"}}, {"filter closed", []string{"esc"}}, {"help", []string{"?"}}, {"help closed", []string{"esc"}},
	} {
		say()
		h.keys(step.keys...)
		if strings.Contains(h.view(), "Forgot job x.") {
			t.Errorf("%s: status still shown", step.name)
		}
	}
	say()
	h.send(tea.WindowSizeMsg{Width: 100, Height: 30})
	if h.m.status.text != "" {
		t.Fatal("resize kept the status")
	}
	// Moving within a list keeps it.
	say()
	h.keys("down")
	if h.m.status.text == "" {
		t.Fatal("a cursor move cleared the status")
	}
}

// A status longer than the terminal wraps onto more lines instead of being
// cut at 80 columns.
func TestLongStatusWraps(t *testing.T) {
	f := seed()
	h := newHarness(t, f, f, Options{}, 80, 24)
	long := "Retried 1,180 jobs of signature ab12cd34ef onto default (1,100), emails (80); skipped 24: 20 on connection redis (not writable by jobtriage), 4 past retryUntil."
	h.m.status = statusLine{text: long}
	lines := strings.Split(h.view(), "\n")
	if len(lines) != 24 {
		t.Fatalf("%d lines, want 24", len(lines))
	}
	got := strings.Join(strings.Fields(strings.Join(lines[20:23], " ")), " ")
	if got != long || lines[20] == "" {
		t.Fatalf("status lines:\n%s", strings.Join(lines[20:23], "\n"))
	}
	for _, l := range lines {
		if ansi.StringWidth(l) > 80 {
			t.Fatalf("line wider than 80: %q", l)
		}
	}
}

// At 80 columns the header keeps the count, the alert ratio and READ-ONLY
// and cuts the app and database name.
func TestHeaderCutsTheConnectionFirst(t *testing.T) {
	conn := "app Billing (production) · pgsql://forge@db.internal:5432/billing table failed_jobs"
	f := seed()
	h := newHarness(t, f, nil, Options{Connection: conn, Window: 15 * time.Minute, Threshold: 50}, 80, 24)
	head := strings.Split(h.view(), "\n")[0]
	for _, want := range []string{"jobtriage · app Billing", "123 failed", "last 15m: 15/50", "READ-ONLY"} {
		if !strings.Contains(head, want) {
			t.Errorf("header lacks %q: %q", want, head)
		}
	}
	if w := ansi.StringWidth(head); w > 80 {
		t.Fatalf("header is %d wide", w)
	}
	golden.RequireEqual(t, []byte(head))
	// Too narrow for any useful cut of it: the connection goes.
	h.send(tea.WindowSizeMsg{Width: 50, Height: 24})
	head = strings.Split(h.view(), "\n")[0]
	if strings.Contains(head, "Billing") || !strings.Contains(head, "READ-ONLY") {
		t.Fatalf("50 columns: %q", head)
	}
}

// The lists drop what an action took away before the refresh answers.
func TestActionAppliesAtOnce(t *testing.T) {
	f := seed()
	h := newHarness(t, f, f, Options{}, 80, 24)
	h.keys("enter")
	j := h.m.jobs.items[0]
	act := action{kind: actionForget, object: "job " + j.ID, single: true, parts: []actionPart{{sig: sigInvoice, refs: []triage.Ref{refOf(j)}}}}
	msg := runAction(t.Context(), f, act, func(int) {})
	mm, refresh := h.m.Update(msg) // the refresh is not run
	m := mm.(Model)
	if refresh == nil {
		t.Fatal("no refresh after the action")
	}
	if got := m.sigs.items[0].Count; got != 119 {
		t.Fatalf("count before the refresh = %d, want 119", got)
	}
	if m.jobs.items[0].ID == j.ID || m.jobs.sig.Count != 119 {
		t.Fatalf("jobs before the refresh: first %s, count %d", m.jobs.items[0].ID, m.jobs.sig.Count)
	}
	if v := m.View(); !strings.Contains(v, "122 failed") || !strings.Contains(v, "Forgot job "+j.ID+".") {
		t.Fatalf("view before the refresh:\n%s", v)
	}
	// A whole signature leaves the list at once.
	mm, _ = m.Update(runAction(t.Context(), f, action{kind: actionRetry, object: "signature " + sigMailer, whole: true,
		parts: []actionPart{{sig: sigMailer, query: triage.Query{Signature: sigMailer}}}}, func(int) {}))
	for _, s := range mm.(Model).sigs.items {
		if s.ID == sigMailer {
			t.Fatal("retried signature still listed before the refresh")
		}
	}
}

// The retry dialog of a signature runs a dry run and shows what would be
// skipped; the action then leaves the skipped jobs listed.
func TestRetryDialogShowsTheDryRun(t *testing.T) {
	f := seed()
	f.skipConn = "redis"
	for i := range f.jobs[2:7] {
		f.jobs[2+i].Connection = "redis"
	}
	h := newHarness(t, f, f, Options{}, 80, 24)
	h.keys("r")
	if len(f.dryRuns) != 1 || len(f.retries) != 0 || f.dryRuns[0].Signature != sigInvoice {
		t.Fatalf("dry runs %+v retries %+v", f.dryRuns, f.retries)
	}
	v := h.view()
	for _, want := range []string{"Dry run: 115 would be retried onto default (115).",
		"Would skip 5: 5 on connection redis (not writable by jobtriage)."} {
		if !strings.Contains(strings.Join(strings.Fields(v), " "), want) {
			t.Fatalf("dialog lacks %q:\n%s", want, v)
		}
	}
	golden.RequireEqual(t, []byte(v))
	h.keys("y")
	if len(f.retries) != 1 || f.retries[0].DryRun {
		t.Fatalf("retries = %+v", f.retries)
	}
	if s := h.m.sigs.items; len(s) != 3 || s[0].ID != sigInvoice || s[0].Count != 5 {
		t.Fatalf("signatures after the retry = %+v", s)
	}
	if want := "Retried 115 jobs of signature ab12cd34ef onto default (115); skipped 5: 5 on connection redis (not writable by jobtriage)."; h.m.status.text != want {
		t.Fatalf("status %q, want %q", h.m.status.text, want)
	}
}

// A dialog closed before its dry run answers ignores the late answer.
func TestLateDryRunIsDropped(t *testing.T) {
	f := seed()
	h := newHarness(t, f, f, Options{}, 80, 24)
	h.keys("r")
	seq := h.m.confirm.previewSeq
	h.keys("n", "r")
	h.send(previewMsg{seq: seq, res: triage.RetryResult{Retried: 99}})
	if p := h.m.confirm.preview; p == nil || p.Retried != 120 {
		t.Fatalf("preview = %+v, want the second dialog's", p)
	}
}

// detailHarness opens the detail of the first invoice job on a terminal
// height rows high.
func detailHarness(t *testing.T, height int) *harness {
	f := seed()
	f.details = map[string]triage.Detail{}
	for _, j := range f.jobs {
		if j.Signature == sigInvoice {
			f.details[j.ID] = goldenDetail(t, j)
		}
	}
	h := newHarness(t, f, f, Options{}, 80, height)
	h.keys("enter", "enter")
	return h
}

func TestDetailTopAndBottom(t *testing.T) {
	h := detailHarness(t, 24)
	h.keys("tab")
	for _, k := range []string{"G", "g", "end", "home"} {
		h.keys(k)
		top := k == "g" || k == "home"
		if top && !h.m.detail.vp.AtTop() || !top && !h.m.detail.vp.AtBottom() {
			t.Fatalf("%s: offset %d of %d lines", k, h.m.detail.vp.YOffset, h.m.detail.vp.TotalLineCount())
		}
	}
}

// The scroll keys move the detail by a line or a page; the viewport's own
// defaults (d, u, b, l) are not bindings of the UI and do nothing.
func TestDetailScrollKeys(t *testing.T) {
	h := detailHarness(t, 10)
	h.keys("shift+tab") // the payload's JSON, the longest tab
	page, bottom := h.m.detail.vp.Height, h.m.detail.vp.TotalLineCount()-h.m.detail.vp.Height
	if bottom < 1+2*page {
		t.Fatalf("%d lines: too few to page through twice", h.m.detail.vp.TotalLineCount())
	}
	for _, step := range []struct {
		key  string
		want int
	}{{"j", 1}, {"down", 2}, {"k", 1}, {"d", 1}, {"u", 1}, {"b", 1}, {"l", 1}, {"pgdown", 1 + page}, {" ", 1 + 2*page}, {"pgup", 1 + page}, {"up", page}, {"end", bottom}} {
		h.keys(step.key)
		if got := h.m.detail.vp.YOffset; got != step.want {
			t.Fatalf("after %q: offset %d, want %d (of %d lines)", step.key, got, step.want, h.m.detail.vp.TotalLineCount())
		}
	}
}

func TestEscClearsTheFilter(t *testing.T) {
	f := seed()
	h := newHarness(t, f, f, Options{}, 80, 24)
	h.keys("/", "smtp", "enter")
	if len(h.m.sigs.items) != 1 {
		t.Fatalf("filtered to %d signatures", len(h.m.sigs.items))
	}
	h.keys("esc")
	if !h.m.query.Empty() || len(h.m.sigs.items) != 3 || !f.groups[len(f.groups)-1].Query.Empty() {
		t.Fatalf("after esc: query %+v, %d signatures", h.m.query, len(h.m.sigs.items))
	}
	if !strings.Contains(h.view(), "Filter cleared.") {
		t.Fatalf("view:\n%s", h.view())
	}
}

func TestCopyID(t *testing.T) {
	f := seed()
	h := newHarness(t, f, f, Options{}, 80, 24)
	var clip bytes.Buffer
	h.m.clipboard = &clip
	h.keys("y")
	if got, want := clip.String(), ansi.SetSystemClipboard(sigInvoice); got != want {
		t.Fatalf("clipboard write %q, want %q", got, want)
	}
	h.keys("enter", "down")
	clip.Reset()
	id := h.m.jobs.items[1].ID
	h.keys("y")
	if clip.String() != ansi.SetSystemClipboard(id) || !strings.Contains(h.view(), "Copied job id "+id) {
		t.Fatalf("clipboard %q, view:\n%s", clip.String(), h.view())
	}
	h.keys("enter")
	clip.Reset()
	h.keys("y")
	if clip.String() != ansi.SetSystemClipboard(id) {
		t.Fatalf("detail copied %q", clip.String())
	}
}

// While an action runs the status says what, how far and how long is
// left, instead of "Working…".
func TestActionProgress(t *testing.T) {
	f := seed()
	f.counts[sigInvoice] = 1204
	now := clock
	h := newHarness(t, f, f, Options{Now: func() time.Time { return now }}, 100, 24)
	h.keys("r")
	// Confirm without running the action, to step through its progress.
	mm, _ := h.m.Update(keyMsg("y"))
	h.m = mm.(Model)
	status := func() string { return strings.Split(h.view(), "\n")[22] }
	// The dry run counted 120 jobs the retry will move: that is the total.
	if got := status(); !strings.Contains(got, "Retrying 120 jobs of signature ab12cd34ef…") {
		t.Fatalf("status before progress: %q", got)
	}
	now = now.Add(10 * time.Second)
	h.send(actionProgressMsg{seq: h.m.running.seq, done: 40})
	if got := status(); !strings.Contains(got, "Retrying signature ab12cd34ef: 40 of 120 (33%), about 21s left") {
		t.Fatalf("status during progress: %q", got)
	}
	h.send(actionProgressMsg{seq: h.m.running.seq - 1, done: 99}) // another action's
	if h.m.running.done != 40 {
		t.Fatal("a stale progress report was applied")
	}
	h.send(runAction(t.Context(), f, h.m.running.act, func(int) {}))
	if got := status(); !strings.Contains(got, "Retried 120 jobs of signature ab12cd34ef onto default (120).") || h.m.status.busy {
		t.Fatalf("status after the action: %q", got)
	}
}

// Progress reports reach the model through the Cmd chain, newest first.
func TestActionCmdStreamsProgress(t *testing.T) {
	f := seed()
	act := action{kind: actionForget, object: "signature " + sigInvoice, whole: true,
		parts: []actionPart{{sig: sigInvoice, query: triage.Query{Signature: sigInvoice}}}}
	var reports []int
	msg := actionCmd(t.Context(), f, act, 7)()
	for {
		p, ok := msg.(actionProgressMsg)
		if !ok {
			break
		}
		if p.seq != 7 {
			t.Fatalf("seq %d", p.seq)
		}
		reports = append(reports, p.done)
		msg = p.more()
	}
	if a, ok := msg.(actionMsg); !ok || a.forget.Deleted != 120 {
		t.Fatalf("final message %#v", msg)
	}
	if len(reports) == 0 || reports[len(reports)-1] > 120 {
		t.Fatalf("progress reports %v", reports)
	}
}

// Until the dry run answers, the dialog says it is checking.
func TestRetryDialogWhileTheDryRunRuns(t *testing.T) {
	f := seed()
	h := newHarness(t, f, f, Options{}, 80, 24)
	mm, cmd := h.m.Update(keyMsg("r")) // the dry run is not run
	h.m = mm.(Model)
	if cmd == nil || !h.m.loading() {
		t.Fatal("no dry run started, or the spinner would not turn")
	}
	if v := h.view(); !strings.Contains(v, "Dry run: checking what would be retried and what skipped…") {
		t.Fatalf("dialog:\n%s", v)
	}
	h.run(cmd)
	if v := h.view(); !strings.Contains(v, "Dry run: 120 would be retried onto default (120).") {
		t.Fatalf("dialog:\n%s", v)
	}
}

// TestNewSignaturesMarked: the gutter's * flags signatures first seen
// since Options.NewSince (default: within the trend window), and the scan
// is asked for the TUI's trend window and NewSince.
func TestNewSignaturesMarked(t *testing.T) {
	marks := func(opts Options) map[string]bool {
		f := seed()
		h := newHarness(t, f, f, opts, 120, 40)
		got := map[string]bool{}
		for _, line := range strings.Split(h.view(), "\n") {
			for _, name := range []string{"SyncInvoice", "SendNewsletter", "ImportFeed"} {
				if strings.Contains(line, name) {
					r := []rune(line) // the gutter: cursor, marked, new
					got[name] = len(r) > 2 && string(r[2]) == newMark
				}
			}
		}
		if len(f.groups) == 0 || f.groups[0].Window != opts.TrendWindow || !f.groups[0].NewSince.Equal(opts.NewSince) {
			t.Errorf("group params %+v, want window %s new since %v", f.groups, opts.TrendWindow, opts.NewSince)
		}
		return got
	}
	// The importer started 2 minutes ago; the others about 2 hours ago.
	if got := marks(Options{}); !got["ImportFeed"] || got["SyncInvoice"] || got["SendNewsletter"] {
		t.Errorf("default marks %v", got)
	}
	if got := marks(Options{NewSince: clock.Add(-3 * time.Hour)}); !got["ImportFeed"] || !got["SyncInvoice"] || !got["SendNewsletter"] {
		t.Errorf("since 3h: marks %v", got)
	}
	if got := marks(Options{TrendWindow: time.Minute}); got["ImportFeed"] || got["SyncInvoice"] || got["SendNewsletter"] {
		t.Errorf("1m window: marks %v", got)
	}
}

// TestFilterByTag: the filter's Tag field sets the query's Horizon tags
// (comma separated, every one), the header names them, and the form
// reopens with them.
func TestFilterByTag(t *testing.T) {
	f := seed()
	h := newHarness(t, f, f, Options{}, 120, 40)
	h.keys("/", "tab", "tab", "tab", `App\Models\Order:1,urgent`, "enter")
	want := []string{`App\Models\Order:1`, "urgent"}
	if got := f.groups[len(f.groups)-1].Query.Tags; !slices.Equal(got, want) || h.m.query.Empty() {
		t.Fatalf("grouped with tags %q, want %q", got, want)
	}
	if v := h.view(); !strings.Contains(v, `filter: tag App\Models\Order:1,urgent`) {
		t.Errorf("header does not name the tags:\n%s", v)
	}
	h.keys("/")
	if got := h.m.filter.inputs[fieldTag].Value(); got != `App\Models\Order:1,urgent` {
		t.Errorf("reopened Tag field = %q", got)
	}
}
