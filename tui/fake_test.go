package tui

import (
	"context"
	"errors"
	"io"
	"iter"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/exception"
	"github.com/jobtriage/jobtriage/triage/payload"
)

// clock is the fixed now of every test.
var clock = time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC)

func fixedNow() time.Time { return clock }

// fakeBackend is an in-memory Backend and Actions that records its calls.
// Retry and forget remove the jobs they touch, as the real ones do.
type fakeBackend struct {
	mu      sync.Mutex
	jobs    []triage.Job             // newest first
	counts  map[string]int           // a signature's count when it should differ from len(jobs)
	details map[string]triage.Detail // by job id; others are built from the job

	groupErr, listErr, showErr, actionErr error
	// skipConn: retries skip (SkipNotDatabase) jobs on this connection.
	skipConn string
	// gate, when set, makes Group send one snapshot and wait for it to be
	// closed before it finishes: a scan in flight.
	gate chan struct{}

	groups  []triage.GroupParams
	lists   []triage.ListParams
	shows   []string
	retries []triage.RetryParams // dry runs are in dryRuns
	dryRuns []triage.RetryParams
	forgets []triage.ForgetParams
}

func (f *fakeBackend) match(q triage.Query, j triage.Job) bool {
	if q.Signature != "" && j.Signature != q.Signature {
		return false
	}
	if q.Class != "" && !strings.Contains(strings.ToLower(j.Class), strings.ToLower(q.Class)) {
		return false
	}
	if s := q.Filter.Search; s != "" && !strings.Contains(j.ExceptionMessage, s) {
		return false
	}
	if len(q.Filter.Queues) > 0 {
		ok := false
		for _, qn := range q.Filter.Queues {
			ok = ok || qn == j.Queue
		}
		if !ok {
			return false
		}
	}
	if !q.Filter.Since.IsZero() && j.FailedAt.Before(q.Filter.Since) {
		return false
	}
	return true
}

// signatures folds the matching jobs with the grouper failed --group uses,
// at the test clock.
func (f *fakeBackend) signatures(p triage.GroupParams) []triage.Signature {
	g, err := triage.NewGrouper(triage.GroupOptions{Now: clock, Window: p.Window, NewSince: p.NewSince})
	if err != nil {
		panic(err)
	}
	for _, j := range f.jobs {
		if f.match(p.Query, j) {
			g.Add(j, func(s string) string { return s })
		}
	}
	out := g.Signatures(p.Sort, p.OnlyNew)
	for i, s := range out {
		if n, ok := f.counts[s.ID]; ok && p.Query.Empty() {
			out[i].Count = n
		}
	}
	triage.SortSignatures(out, p.Sort)
	return out
}

func (f *fakeBackend) GroupSnapshots(ctx context.Context, p triage.GroupParams) iter.Seq2[triage.GroupProgress, error] {
	return func(yield func(triage.GroupProgress, error) bool) {
		f.mu.Lock()
		f.groups = append(f.groups, p)
		err := f.groupErr
		sigs := f.signatures(p)
		gate := f.gate
		f.mu.Unlock()
		if err != nil {
			yield(triage.GroupProgress{}, err)
			return
		}
		if gate != nil && p.ProgressEvery > 0 && len(sigs) > 1 {
			if !yield(triage.GroupProgress{Scanned: sigs[0].Count, Fraction: 0.25, Signatures: sigs[:1]}, nil) {
				return
			}
			select {
			case <-gate:
			case <-ctx.Done():
				yield(triage.GroupProgress{}, ctx.Err())
				return
			}
		}
		yield(triage.GroupProgress{Scanned: total(sigs), Fraction: 1, Signatures: sigs, Done: true}, nil)
	}
}

func (f *fakeBackend) List(_ context.Context, p triage.ListParams) (triage.Page, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lists = append(f.lists, p)
	if f.listErr != nil {
		return triage.Page{}, f.listErr
	}
	var matched []triage.Job
	for _, j := range f.jobs {
		if f.match(p.Query, j) {
			matched = append(matched, j)
		}
	}
	start := 0
	if p.Cursor != "" {
		n, err := strconv.Atoi(p.Cursor)
		if err != nil {
			return triage.Page{}, errors.New("bad cursor")
		}
		start = n
	}
	if start > len(matched) {
		start = len(matched)
	}
	end := start + p.Limit
	var page triage.Page
	if end < len(matched) {
		page.Next = strconv.Itoa(end)
	} else {
		end = len(matched)
	}
	page.Jobs = append(page.Jobs, matched[start:end]...)
	return page, nil
}

func (f *fakeBackend) Show(_ context.Context, id string) (triage.Detail, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.shows = append(f.shows, id)
	if f.showErr != nil {
		return triage.Detail{}, f.showErr
	}
	if d, ok := f.details[id]; ok {
		return d, nil
	}
	for _, j := range f.jobs {
		if j.ID == id {
			raw := []byte(`{"displayName":"` + strings.ReplaceAll(j.Class, `\`, `\\`) + `"}`)
			env, err := payload.Parse(raw)
			return triage.Detail{Job: j, Payload: raw, Envelope: env, PayloadErr: err,
				Chain: exception.Parse(j.ExceptionClass + ": " + j.ExceptionMessage), Command: triage.CommandNone}, nil
		}
	}
	return triage.Detail{}, triage.ErrNotFound
}

// take removes the jobs a retry or forget selects and returns their ids.
func (f *fakeBackend) take(q triage.Query, refs []triage.Ref) []string {
	var ids []string
	kept := f.jobs[:0:0]
	for _, j := range f.jobs {
		hit := false
		if len(refs) > 0 {
			for _, r := range refs {
				hit = hit || (r.UUID != "" && r.UUID == j.UUID) || (r.ID != 0 && r.ID == j.RowID)
			}
		} else {
			hit = f.match(q, j)
		}
		if hit {
			ids = append(ids, j.ID)
		} else {
			kept = append(kept, j)
		}
	}
	f.jobs = kept
	return ids
}

// archiveFunc is a func as a triage.Archiver.
type archiveFunc func(rows []triage.RawRow) error

func (a archiveFunc) Write(rows []triage.RawRow) error { return a(rows) }

func (f *fakeBackend) Retry(_ context.Context, p triage.RetryParams, progress func(int)) (triage.RetryResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p.DryRun {
		f.dryRuns = append(f.dryRuns, p)
	} else {
		f.retries = append(f.retries, p)
	}
	if f.actionErr != nil {
		return triage.RetryResult{}, f.actionErr
	}
	if p.DryRun {
		kept := f.jobs
		defer func() { f.jobs = kept }()
	}
	// Jobs on skipConn stay, as the real retry leaves jobs on connections
	// it cannot write.
	var skipped []triage.Skip
	if f.skipConn != "" {
		var rest []triage.Job
		for _, j := range f.jobs {
			if j.Connection == f.skipConn && f.selects(p.Query, p.Refs, j) {
				skipped = append(skipped, triage.Skip{ID: j.ID, Connection: j.Connection, Queue: j.Queue,
					Code: triage.SkipNotDatabase, Reason: "connection " + j.Connection + " is not a database queue"})
			}
		}
		for _, j := range f.jobs {
			if !(j.Connection == f.skipConn && f.selects(p.Query, p.Refs, j)) {
				rest = append(rest, j)
			}
		}
		kept := f.jobs
		f.jobs = rest
		ids := f.take(p.Query, p.Refs)
		taken := map[string]bool{}
		for _, id := range ids {
			taken[id] = true
		}
		f.jobs = kept[:0:0]
		for _, j := range kept {
			if !taken[j.ID] {
				f.jobs = append(f.jobs, j)
			}
		}
		return triage.RetryResult{DryRun: p.DryRun, Retried: len(ids), IDs: ids, Skipped: skipped,
			ByQueue: map[string]int{"default": len(ids)}}, nil
	}
	ids := f.take(p.Query, p.Refs)
	if progress != nil && !p.DryRun {
		progress(len(ids))
	}
	return triage.RetryResult{DryRun: p.DryRun, Retried: len(ids), IDs: ids, ByQueue: map[string]int{"default": len(ids)}}, nil
}

// selects reports whether a retry or forget of q or refs takes j.
func (f *fakeBackend) selects(q triage.Query, refs []triage.Ref, j triage.Job) bool {
	if len(refs) > 0 {
		for _, r := range refs {
			if (r.UUID != "" && r.UUID == j.UUID) || (r.ID != 0 && r.ID == j.RowID) {
				return true
			}
		}
		return false
	}
	return f.match(q, j)
}

func (f *fakeBackend) Forget(_ context.Context, p triage.ForgetParams, progress func(int)) (triage.ForgetResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forgets = append(f.forgets, p)
	if f.actionErr != nil {
		return triage.ForgetResult{}, f.actionErr
	}
	if p.DryRun {
		kept := f.jobs
		defer func() { f.jobs = kept }()
	}
	ids := f.take(p.Query, p.Refs)
	if p.Archive != nil && !p.DryRun && len(ids) > 0 {
		// As the store does: the rows go to the archive before the delete.
		rows := make([]triage.RawRow, len(ids))
		for i := range ids {
			rows[i] = triage.RawRow{UUID: &ids[i]}
		}
		if err := p.Archive.Write(rows); err != nil {
			return triage.ForgetResult{}, err
		}
	}
	if progress != nil && !p.DryRun {
		for n := 50; n < len(ids); n += 50 {
			progress(n) // in batches, as the store reports
		}
		progress(len(ids))
	}
	return triage.ForgetResult{DryRun: p.DryRun, Deleted: len(ids), IDs: ids}, nil
}

// Signature ids of the seed data.
const (
	sigInvoice = "ab12cd34ef"
	sigMailer  = "9f8e7d6c5b"
	sigImport  = "0011223344"
)

func uuidN(n int) string {
	return leftPad(strconv.Itoa(n*7919), 8) + "-9b2f-4c1e-8000-00000000" + leftPad(strconv.Itoa(n), 4)
}

func leftPad(s string, n int) string { return strings.Repeat("0", n-len(s)) + s }

// seed is 120 failures of SyncInvoice (for paging), 2 of SendNewsletter and
// 1 of ImportFeed, one minute apart, newest first.
func seed() *fakeBackend {
	f := &fakeBackend{counts: map[string]int{}}
	n := 0
	add := func(sig, class, queue, exc, msg string) {
		n++
		f.jobs = append(f.jobs, triage.Job{RowID: int64(1000 - n), ID: uuidN(1000 - n), UUID: uuidN(1000 - n),
			Connection: "database", Queue: queue, Class: class, ExceptionClass: exc, ExceptionMessage: msg,
			FailedAt: clock.Add(-time.Duration(n) * time.Minute), Signature: sig})
	}
	add(sigMailer, `App\Jobs\SendNewsletter`, "emails", `Symfony\Component\Mailer\Exception\TransportException`,
		`Connection could not be established with host "smtp.example.com:587"`)
	add(sigImport, `App\Jobs\ImportFeed`, "imports", `ErrorException`, `Undefined array key "price"`)
	for i := 0; i < 120; i++ {
		add(sigInvoice, `App\Jobs\SyncInvoice`, "default", `Illuminate\Http\Client\RequestException`,
			`HTTP request returned status code 503`)
	}
	add(sigMailer, `App\Jobs\SendNewsletter`, "emails", `Symfony\Component\Mailer\Exception\TransportException`,
		`Connection could not be established with host "smtp.example.com:587"`)
	return f
}

// harness drives a Model the way bubbletea does, but synchronously: every
// returned Cmd runs at once and its message goes back into Update.
type harness struct {
	t    *testing.T
	m    Model
	quit bool
}

func newHarness(t *testing.T, b Backend, a Actions, opts Options, w, h int) *harness {
	t.Helper()
	if opts.Now == nil {
		opts.Now = fixedNow
	}
	opts.NoColor = true
	m := New(context.Background(), b, a, opts, io.Discard)
	m.tick = noTick
	hs := &harness{t: t, m: m}
	hs.send(tea.WindowSizeMsg{Width: w, Height: h})
	hs.run(hs.m.Init())
	return hs
}

func (h *harness) send(msg tea.Msg) {
	h.t.Helper()
	mm, cmd := h.m.Update(msg)
	h.m = mm.(Model)
	h.run(cmd)
}

func (h *harness) run(cmd tea.Cmd) {
	h.t.Helper()
	queue := []tea.Cmd{cmd}
	for steps := 0; len(queue) > 0; steps++ {
		if steps > 10000 {
			h.t.Fatal("commands never settle")
		}
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		switch msg := c().(type) {
		case nil:
		case tea.BatchMsg:
			queue = append(queue, msg...)
		case tea.QuitMsg:
			h.quit = true
		default:
			mm, next := h.m.Update(msg)
			h.m = mm.(Model)
			queue = append(queue, next)
		}
	}
}

// keys sends each key in turn: names like "enter", "esc", "ctrl+r", or
// runes.
func (h *harness) keys(keys ...string) {
	h.t.Helper()
	for _, k := range keys {
		h.send(keyMsg(k))
	}
}

func keyMsg(k string) tea.KeyMsg {
	named := map[string]tea.KeyType{
		"enter": tea.KeyEnter, "esc": tea.KeyEsc, "backspace": tea.KeyBackspace, "tab": tea.KeyTab,
		"shift+tab": tea.KeyShiftTab, "up": tea.KeyUp, "down": tea.KeyDown, "ctrl+r": tea.KeyCtrlR,
		"ctrl+c": tea.KeyCtrlC, "ctrl+u": tea.KeyCtrlU, "pgdown": tea.KeyPgDown, "pgup": tea.KeyPgUp, "end": tea.KeyEnd, "home": tea.KeyHome,
		" ": tea.KeySpace,
	}
	if t, ok := named[k]; ok {
		return tea.KeyMsg{Type: t}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
}

func (h *harness) view() string { return h.m.View() }
