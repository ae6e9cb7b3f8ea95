package watch

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/alerts"
	"github.com/jobtriage/jobtriage/alerts/notify"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// fakeSource is a failed_jobs table in memory with switchable faults.
type fakeSource struct {
	mu       sync.Mutex
	rows     []Failure
	down     bool // every call fails, as with a stopped server
	held     bool // another watcher holds the lock
	locked   bool
	lostLock bool // the lock's session dies at the next Check
	gauges   []Gauge
	afterIDs []int64 // the afterID of every After call
	// gaugesDown: only the gauges fail, as with a Redis queue
	// connection down beside a readable failed_jobs.
	gaugesDown bool
}

var errDown = errors.New("dial tcp 127.0.0.1:5432: connect: connection refused")

func (s *fakeSource) add(at time.Time, queue, class string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.rows = append(s.rows, Failure{ID: int64(len(s.rows) + 1), At: at, Queue: queue, Class: class, Message: "boom"})
	}
}

type fakeLock struct{ s *fakeSource }

func (l fakeLock) Check(context.Context) error {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	if l.s.down || l.s.lostLock {
		l.s.lostLock = false
		l.s.locked = false
		return errors.New("the watch lock's database session was lost")
	}
	return nil
}

func (l fakeLock) Release() error {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	l.s.locked = false
	return nil
}

func (s *fakeSource) Lock(context.Context) (Lock, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.down:
		return nil, errDown
	case s.held || s.locked:
		return nil, ErrLockHeld
	}
	s.locked = true
	return fakeLock{s}, nil
}

func (s *fakeSource) MaxID(context.Context) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return 0, errDown
	}
	return int64(len(s.rows)), nil
}

func (s *fakeSource) Window(_ context.Context, since time.Time, maxID int64, fn func(Failure)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return errDown
	}
	for _, f := range s.rows {
		if f.ID <= maxID && !f.At.Before(since) {
			fn(f)
		}
	}
	return nil
}

func (s *fakeSource) After(_ context.Context, after int64, fn func(Failure)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.afterIDs = append(s.afterIDs, after)
	if s.down {
		return errDown
	}
	for _, f := range s.rows {
		if f.ID > after {
			fn(f)
		}
	}
	return nil
}

func (s *fakeSource) Gauges(context.Context, time.Time) ([]Gauge, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down || s.gaugesDown {
		return nil, errDown
	}
	return append([]Gauge(nil), s.gauges...), nil
}

// recorder is a notifier keeping "event key" per notification.
type recorder struct {
	mu     sync.Mutex
	events []string
	last   alerts.Digest
}

func (r *recorder) Name() string { return "recorder" }
func (r *recorder) Notify(_ context.Context, d alerts.Digest) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range d.Notifications {
		r.events = append(r.events, n.Event.String()+" "+n.Rule.Key)
	}
	r.last = d
	return nil
}

func (r *recorder) got() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.events, "|")
}

// run drives a watcher on a fake clock: the clock moves by each sleep, then
// steps[i] runs; after the last step the watch ends. It returns the ticks.
func run(t *testing.T, w *Watcher, start time.Time, steps []func(now time.Time)) []Tick {
	t.Helper()
	now := start
	var mu sync.Mutex
	w.Now = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	i := 0
	w.Sleep = func(ctx context.Context, d time.Duration) error {
		if i == len(steps) {
			cancel()
			return ctx.Err()
		}
		mu.Lock()
		now = now.Add(d)
		cur := now
		mu.Unlock()
		steps[i](cur)
		i++
		return nil
	}
	var ticks []Tick
	w.OnTick = func(tk Tick) { ticks = append(ticks, tk) }
	if err := w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	return ticks
}

func newWatcher(src Source, rec notify.Notifier, cfg Config) *Watcher {
	if cfg.Interval == 0 {
		cfg.Interval = 15 * time.Second
	}
	if cfg.Failures.Window == 0 {
		cfg.Failures.Window = time.Minute
	}
	return &Watcher{Config: cfg, Source: src, Notifiers: []notify.Notifier{rec},
		Dispatcher: notify.Dispatcher{Sleep: func(context.Context, time.Duration) error { return nil }},
		LookCloser: func(k string) string { return "jobtriage look " + k }}
}

func repeat(n int, f func(time.Time)) []func(time.Time) {
	out := make([]func(time.Time), n)
	for i := range out {
		out[i] = f
	}
	return out
}

func quiet(time.Time) {}

func TestFiresOnceCarriesDetailAndResolves(t *testing.T) {
	src := &fakeSource{}
	rec := &recorder{}
	w := newWatcher(src, rec, Config{Failures: alerts.Rule{Threshold: 3}, PerQueue: true,
		App: alerts.App{Name: "shop", Environment: "production", Database: "postgres://db/shop"}})
	steps := []func(time.Time){
		func(now time.Time) { src.add(now, "emails", `App\Jobs\Mail`, 3) },
		quiet, quiet, quiet, quiet, quiet,
	}
	ticks := run(t, w, t0, steps)
	if got, want := rec.got(), "firing app|firing queue:emails|resolved app|resolved queue:emails"; got != want {
		t.Errorf("notifications %q, want %q", got, want)
	}
	if tk := ticks[1]; tk.New != 3 || tk.AppCount != 3 || strings.Join(tk.Firing, ",") != "app,queue:emails" {
		t.Errorf("tick 1: %+v", tk)
	}
	n := ticks[1].Digest.Notifications[1]
	want := alerts.Detail{Class: `App\Jobs\Mail`, Message: "boom", Command: "jobtriage look queue:emails"}
	if n.Detail != want || ticks[1].Digest.App.Label() != "shop (production)" {
		t.Errorf("detail %+v app %+v", n.Detail, ticks[1].Digest.App)
	}
}

// The database goes away for a while: the watcher keeps ticking with
// backoff, alerts about its blindness once it lasted BlindAfter, resolves
// that when it reads again, and resumes after the last id it saw, so the
// failures of the outage count once.
func TestOutageBackoffBlindnessAndResume(t *testing.T) {
	src := &fakeSource{}
	rec := &recorder{}
	var warnings []string
	w := newWatcher(src, rec, Config{Failures: alerts.Rule{Threshold: 5, Window: 5 * time.Minute}, BlindAfter: 30 * time.Second})
	w.Warn = func(s string) { warnings = append(warnings, s) }
	steps := []func(time.Time){
		func(now time.Time) { src.add(now, "q", "C", 2) },
		func(now time.Time) { src.mu.Lock(); src.down = true; src.mu.Unlock() },
	}
	steps = append(steps, repeat(6, quiet)...)
	steps = append(steps, func(now time.Time) {
		src.mu.Lock()
		src.down = false
		src.mu.Unlock()
		src.add(now, "q", "C", 3)
	}, quiet)
	ticks := run(t, w, t0, steps)
	var waits []time.Duration
	for i := 1; i < len(ticks); i++ {
		waits = append(waits, ticks[i].At.Sub(ticks[i-1].At))
	}
	// 15s ticks, then the outage: 1s, 2s, 4s, 8s, 15s (capped) …
	wantWaits := "[15s 15s 1s 2s 4s 8s 15s 15s 15s 15s]"
	if got := fmtDurations(waits); got != wantWaits {
		t.Errorf("waits between ticks %s, want %s", got, wantWaits)
	}
	if got, want := rec.got(), "firing watcher:blind|firing app|resolved watcher:blind"; got != want {
		t.Errorf("notifications %q, want %q", got, want)
	}
	// The outage's failures were read once, after the last id seen (2).
	last := ticks[len(ticks)-2]
	if last.AppCount != 5 || last.New != 3 {
		t.Errorf("after the outage: count %d, new %d; want 5 and 3", last.AppCount, last.New)
	}
	for _, id := range src.afterIDs {
		if id != 0 && id != 2 && id != 5 {
			t.Errorf("After(%d): resumed from an id never seen last", id)
		}
	}
	joined := strings.Join(warnings, "\n")
	if !strings.Contains(joined, "cannot read the database") || !strings.Contains(joined, "resuming after failure id 2") {
		t.Errorf("warnings:\n%s", joined)
	}
	if strings.Count(joined, "cannot read") != 1 {
		t.Errorf("the outage was reported more than once:\n%s", joined)
	}
}

func fmtDurations(ds []time.Duration) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.String()
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// Losing the lock's session alone: the watcher takes the lock back, keeps
// its state (no second firing) and resumes from its last id.
func TestLostLockSessionKeepsState(t *testing.T) {
	src := &fakeSource{}
	rec := &recorder{}
	w := newWatcher(src, rec, Config{Failures: alerts.Rule{Threshold: 3}, StatePath: filepath.Join(t.TempDir(), "state.json")})
	steps := []func(time.Time){
		func(now time.Time) { src.add(now, "q", "C", 3) },
		func(time.Time) { src.mu.Lock(); src.lostLock = true; src.mu.Unlock() },
		func(now time.Time) { src.add(now, "q", "C", 1) },
		quiet,
	}
	ticks := run(t, w, t0, steps)
	if got := rec.got(); got != "firing app" {
		t.Errorf("notifications %q, want one firing", got)
	}
	if tk := ticks[3]; tk.Err != nil || tk.New != 1 || tk.AppCount != 4 {
		t.Errorf("after taking the lock back: %+v", tk)
	}
}

func TestStandsByWithoutNotifyingThenTakesOver(t *testing.T) {
	src := &fakeSource{held: true}
	rec := &recorder{}
	var warnings []string
	w := newWatcher(src, rec, Config{Failures: alerts.Rule{Threshold: 3}})
	w.Warn = func(s string) { warnings = append(warnings, s) }
	steps := []func(time.Time){
		func(now time.Time) { src.add(now, "q", "C", 4) },
		func(time.Time) { src.mu.Lock(); src.held = false; src.mu.Unlock() },
		quiet,
	}
	ticks := run(t, w, t0, steps)
	if !ticks[0].StandingBy || ticks[0].Holding || !ticks[2].Holding {
		t.Errorf("ticks: %+v", ticks)
	}
	if got := rec.got(); got != "firing app" {
		t.Errorf("notifications %q", got)
	}
	if j := strings.Join(warnings, "|"); j != "another watcher holds the lock for this database; standing by|took over the watch lock" {
		t.Errorf("warnings %q", j)
	}
}

// A restarted watcher neither fires again what is firing nor forgets it: it
// resolves it when the failures age out.
func TestStatePersistsAcrossRestarts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "watch.json")
	src := &fakeSource{}
	app := alerts.App{Name: "shop", Database: "sqlite:/x"}
	cfg := Config{Failures: alerts.Rule{Threshold: 3, Repeat: time.Hour}, PerClass: true, StatePath: path, App: app}

	rec1 := &recorder{}
	run(t, newWatcher(src, rec1, cfg), t0, []func(time.Time){func(now time.Time) { src.add(now, "q", `App\Jobs\A`, 4) }})
	if got := rec1.got(); got != "firing app|firing class:App\\Jobs\\A" {
		t.Fatalf("first run: %q", got)
	}
	src.mu.Lock()
	src.locked = false // the first process is gone
	src.mu.Unlock()

	// Restart 20 s later: still 4 in the window, still firing, no new page.
	rec2 := &recorder{}
	ticks := run(t, newWatcher(src, rec2, cfg), t0.Add(35*time.Second), repeat(4, quiet))
	if ticks[0].Restored != 2 || strings.Join(ticks[0].Firing, ",") != "app,class:App\\Jobs\\A" {
		t.Errorf("first tick after restart: %+v", ticks[0])
	}
	if got := rec2.got(); got != "resolved app|resolved class:App\\Jobs\\A" {
		t.Errorf("after restart: %q, want the two resolutions only", got)
	}
	rec2.mu.Lock()
	if d := rec2.last.Notifications[1]; d.Detail.Class != `App\Jobs\A` || d.Peak != 4 {
		t.Errorf("resolved notification lost its detail: %+v", d)
	}
	rec2.mu.Unlock()

	// Another app's state file is not taken for ours.
	src.add(t0.Add(200*time.Second), "q", `App\Jobs\A`, 3)
	other := cfg
	other.App = alerts.App{Name: "other", Database: "sqlite:/y"}
	if ticks := run(t, newWatcher(src, &recorder{}, other), t0.Add(200*time.Second), nil); ticks[0].Restored != 0 {
		t.Errorf("restored another app's state: %+v", ticks[0])
	}
}

// blocker never answers until its context ends.
type blocker struct{ calls chan struct{} }

func (b *blocker) Name() string { return "webhook" }
func (b *blocker) Notify(ctx context.Context, _ alerts.Digest) error {
	b.calls <- struct{}{}
	<-ctx.Done()
	return ctx.Err()
}

// A channel that never answers delays neither the ticks nor the other
// channels, and a stopping watcher gives it only FlushTimeout.
func TestHangingChannelBlocksNothing(t *testing.T) {
	src := &fakeSource{}
	rec := &recorder{}
	b := &blocker{calls: make(chan struct{}, 100)}
	// A reminder every tick: a digest for the hanging channel every tick.
	w := newWatcher(src, rec, Config{Failures: alerts.Rule{Threshold: 1, Repeat: 15 * time.Second}, FlushTimeout: 50 * time.Millisecond})
	w.Notifiers = append(w.Notifiers, b)
	w.Dispatcher.Timeout = time.Hour
	start := time.Now()
	ticks := run(t, w, t0, repeat(40, func(now time.Time) { src.add(now, "q", "C", 1) }))
	if len(ticks) != 41 {
		t.Errorf("%d ticks, want 41", len(ticks))
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("the watcher took %s with a hanging channel", el)
	}
	if got := rec.got(); !strings.HasPrefix(got, "firing app|reminder app") || strings.Count(got, "reminder") != 39 {
		t.Errorf("the healthy channel got %q", got)
	}
	if len(b.calls) != 1 {
		t.Errorf("the hanging channel was called %d times, want once (it never finished the first)", len(b.calls))
	}
}

func TestGaugesFireAndResolveWhenTheQueueDrains(t *testing.T) {
	src := &fakeSource{gauges: []Gauge{{Queue: "default", Size: 3}}}
	rec := &recorder{}
	w := newWatcher(src, rec, Config{MaxSize: 5})
	set := func(g []Gauge) func(time.Time) {
		return func(time.Time) { src.mu.Lock(); src.gauges = g; src.mu.Unlock() }
	}
	run(t, w, t0, []func(time.Time){set([]Gauge{{Queue: "default", Size: 5}}), set([]Gauge{{Queue: "default", Size: 6}}), set(nil), quiet})
	if got, want := rec.got(), "firing size:default|resolved size:default"; got != want {
		t.Errorf("notifications %q, want %q", got, want)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []Config{
		{},
		{Interval: time.Second},
		{Interval: time.Second, Failures: alerts.Rule{Threshold: 1}},
		{Interval: time.Second, MaxSize: 1, Failures: alerts.Rule{Window: time.Minute}, BlindAfter: -1},
	} {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}

// failing is a channel that always fails for good.
type failing struct{ name string }

func (f failing) Name() string { return f.name }
func (f failing) Notify(context.Context, alerts.Digest) error {
	return errors.New(f.name + ": answered HTTP 403 Forbidden")
}

// When several channels fail, each is named on its own line; the others
// still deliver.
func TestEveryFailingChannelIsNamed(t *testing.T) {
	src := &fakeSource{}
	rec := &recorder{}
	var mu sync.Mutex
	var warnings []string
	w := newWatcher(src, rec, Config{Failures: alerts.Rule{Threshold: 1}})
	w.Notifiers = append(w.Notifiers, failing{"slack"}, failing{"webhook"})
	w.Warn = func(s string) { mu.Lock(); warnings = append(warnings, s); mu.Unlock() }
	run(t, w, t0, []func(time.Time){func(now time.Time) { src.add(now, "q", "C", 1) }})
	if rec.got() != "firing app" {
		t.Errorf("the working channel got %q", rec.got())
	}
	joined := strings.Join(warnings, "\n")
	for _, name := range []string{"slack: not delivered after 1 attempt", "webhook: not delivered after 1 attempt"} {
		if strings.Count(joined, name) != 1 {
			t.Errorf("warnings do not name %q once:\n%s", name, joined)
		}
	}
}

// The state file is written when what it keeps changes, not every tick.
func TestStateFileWrittenOnlyOnChange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "watch.json")
	src := &fakeSource{}
	w := newWatcher(src, &recorder{}, Config{Failures: alerts.Rule{Threshold: 3, Window: time.Hour}, StatePath: path})
	run(t, w, t0, append([]func(time.Time){func(now time.Time) { src.add(now, "q", "C", 3) }}, repeat(5, func(now time.Time) { src.add(now, "q", "C", 0) })...))
	st, ok, err := loadState(path, alerts.App{})
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	// Tick 0 saved the empty state, tick 1 the firing key; five steady
	// ticks wrote nothing.
	if st.Seq != 2 || len(st.Keys) != 1 || st.Keys[0].State != "firing" {
		t.Errorf("state file: %+v", st)
	}
}

// A metrics-only watcher (no threshold) reads new failures and gauges every
// tick and alerts on nothing.
func TestReadFailuresAndGaugesWithoutRules(t *testing.T) {
	src := &fakeSource{gauges: []Gauge{{Queue: "default", Size: 9}}}
	src.add(t0.Add(-time.Second), "q", "C", 2)
	rec := &recorder{}
	w := newWatcher(src, rec, Config{ReadFailures: true, ReadGauges: true})
	ticks := run(t, w, t0, []func(time.Time){func(now time.Time) { src.add(now, "q", "C", 3) }, quiet})
	if len(ticks) != 3 || ticks[0].LastID != 2 || ticks[1].New != 3 || ticks[1].LastID != 5 || ticks[2].New != 0 {
		t.Fatalf("ticks %+v", ticks)
	}
	if len(ticks[1].Gauges) != 1 || ticks[1].Gauges[0].Size != 9 || len(ticks[1].Firing) != 0 {
		t.Errorf("tick %+v", ticks[1])
	}
	if rec.got() != "" {
		t.Errorf("alerted %q", rec.got())
	}
	if err := (&Config{Interval: time.Second}).Validate(); err == nil || !strings.Contains(err.Error(), "nothing to alert on") {
		t.Errorf("a watcher reading nothing: %v", err)
	}
}

// TestQueuesDownStillCountsFailures: with a queue connection down (the
// gauges fail) and failed_jobs readable, only watcher:blind fired, never
// the failure rate. The failures are counted and alert as ever; a gauge
// alert holds its state while its queue cannot be counted (it neither
// resolves nor fires again), and resolves once the queue is read drained.
func TestQueuesDownStillCountsFailures(t *testing.T) {
	src := &fakeSource{gauges: []Gauge{{Queue: "redis:default", Size: 9}}}
	rec := &recorder{}
	var warnings []string
	w := newWatcher(src, rec, Config{Failures: alerts.Rule{Threshold: 3}, MaxSize: 5, BlindAfter: 30 * time.Second})
	w.Warn = func(s string) { warnings = append(warnings, s) }
	set := func(down bool, gauges []Gauge) {
		src.mu.Lock()
		src.gaugesDown, src.gauges = down, gauges
		src.mu.Unlock()
	}
	steps := []func(time.Time){
		func(time.Time) { set(true, nil) },
		func(now time.Time) { src.add(now, "default", "C", 3) },
		quiet, quiet, quiet,
		func(time.Time) { set(false, nil) },
		quiet, quiet, quiet, quiet, quiet,
	}
	ticks := run(t, w, t0, steps)
	if got, want := rec.got(), "firing size:redis:default|firing app|firing watcher:blind|resolved size:redis:default|resolved watcher:blind|resolved app"; got != want {
		t.Errorf("notifications %q, want %q", got, want)
	}
	if tk := ticks[2]; !tk.Partial || tk.Err == nil || tk.New != 3 || tk.AppCount != 3 {
		t.Errorf("a tick with the queues down: %+v, want the failures read and the gauges' error", tk)
	}
	if j := strings.Join(warnings, "|"); !strings.Contains(j, "cannot read the queues (failures are still counted)") {
		t.Errorf("warnings %q", j)
	}
}
