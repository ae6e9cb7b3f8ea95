package watch

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jobtriage/jobtriage/alerts"
	"github.com/jobtriage/jobtriage/alerts/notify"
	"github.com/jobtriage/jobtriage/triage/redact"
)

// maxKeys bounds the per-queue/class/signature/gauge keys tracked at once:
// keys come from database text, and a flood of distinct classes must not
// grow memory without limit. Failures beyond it still count under "app".
const maxKeys = 1000

// DefaultBlindAfter is how long the watcher may fail to read the database
// before it alerts about its own blindness (a zero Config.BlindAfter).
const DefaultBlindAfter = 2 * time.Minute

// firstRetry is the wait before the first retry after a failed tick; it
// doubles up to the interval, so an outage is retried quickly at first and
// never more often than a tick afterwards.
const firstRetry = time.Second

// minTickTimeout bounds one tick's database work when the interval is
// shorter: a frozen server must not hold the loop (and its blindness alert)
// for as long as it is frozen.
const minTickTimeout = 10 * time.Second

// Keys the watcher itself alerts on.
const (
	// BlindKey is the key of the watcher's alert about itself: it could
	// not read the database (or take its lock) for BlindAfter.
	BlindKey = "watcher:blind"
	// AppKey counts every failure of the app.
	AppKey = "app"
)

// Gauge measures, as alert bodies say them.
const (
	measureSize  = "jobs queued"
	measureAge   = "s waited by the oldest pending job"
	measureBlind = "s without reading the database"
)

// Config is what a watcher alerts on.
type Config struct {
	// Failures is the failure-rate rule of every failure key (its Key is
	// replaced per key); a zero Threshold turns failure alerts off. Its
	// Window, For and Repeat also apply to the gauge and blindness alerts.
	Failures alerts.Rule
	// PerQueue, PerClass and PerSignature add a key per queue
	// ("queue:<name>"), job class ("class:<Class>") and error signature
	// ("sig:<id>") to "app".
	PerQueue, PerClass, PerSignature bool
	// MaxSize and MaxAge alert per queue ("size:<queue>", "age:<queue>")
	// when a queue's size or oldest pending age reaches them; 0 is off.
	// They resolve at half the limit.
	MaxSize int64
	MaxAge  time.Duration
	// ReadGauges reads the gauges every tick even without MaxSize and
	// MaxAge (for a per-tick report).
	ReadGauges bool
	// ReadFailures reads the new failures every tick even without a
	// failure threshold (for a metrics endpoint that counts them).
	ReadFailures bool
	// Interval is the time between ticks.
	Interval time.Duration
	// BlindAfter: default DefaultBlindAfter.
	BlindAfter time.Duration
	// App is put on every digest.
	App alerts.App
	// StatePath is the state file; "" keeps alert state in memory only.
	StatePath string
	// FlushTimeout: default DefaultFlushTimeout.
	FlushTimeout time.Duration
	// Redact lists the keys whose values no alert body shows (the zero
	// value is redact.DefaultKeyNames): the example message under each key
	// is masked when it is read, so neither a channel, the printed line
	// nor the state file ever holds the value.
	Redact redact.Keys
}

// Tick is what one tick saw and did, for the caller's output.
type Tick struct {
	At time.Time
	// First is the watcher's first tick.
	First bool
	// Holding: this process holds the lock and notifies.
	Holding bool
	// StandingBy: another watcher holds the lock.
	StandingBy bool
	// Err is why this tick could not read; Blind is for how long the
	// watcher has not read (0 when this tick read).
	Err   error
	Blind time.Duration
	// Partial: Err is the gauges' alone (a queue connection down); the
	// failures were read and their alerts evaluated, the gauge alerts
	// hold their state.
	Partial bool
	// New is the number of failures read this tick; LastID the highest
	// failure id seen.
	New    int
	LastID int64
	// AppCount is the failures in the window over the whole app.
	AppCount int
	// Gauges are this tick's queue gauges, when read.
	Gauges []Gauge
	// Digest holds this tick's transitions (already queued for sending).
	Digest alerts.Digest
	// Firing lists the keys firing after this tick, sorted.
	Firing []string
	// Restored is the number of alert keys taken over from the state file
	// at this tick (after a restart, or from another watcher).
	Restored int
}

// Watcher runs the alert loop. Fill the exported fields, then Run.
type Watcher struct {
	Config
	Source    Source
	Notifiers []notify.Notifier
	// Dispatcher sets the timeouts and retries of every channel.
	Dispatcher notify.Dispatcher
	Now        func() time.Time
	Sleep      func(ctx context.Context, d time.Duration) error
	// LookCloser is the command that shows a key's failures; nil for none.
	LookCloser func(key string) string
	// OnTick runs after every tick, on the loop's goroutine, before the
	// digest goes out.
	OnTick func(Tick)
	// Warn receives status lines (standing by, took over, lost the
	// database, a channel that failed); calls are serialized, from any
	// goroutine.
	Warn func(string)

	id         string // this process in the state file
	seq        int64  // its last save
	keys       map[string]*alertKey
	blind      *alerts.Evaluator
	blindErr   string
	lock       Lock
	started    bool // the window was read under the current lock
	last       int64
	lastOK     time.Time
	outage     bool
	standingBy bool
	dropped    int
	saveWarned bool
	savedKeys  string // the keys of the last save: unchanged keys are not written again
	restored   int
	warnMu     sync.Mutex
}

// alertKey is one key's window (failure keys) and state machine.
type alertKey struct {
	window *alerts.Window // nil for gauge keys
	eval   *alerts.Evaluator
	detail alerts.Detail
}

func (w *Watcher) warn(msg string) {
	if w.Warn == nil {
		return
	}
	w.warnMu.Lock()
	defer w.warnMu.Unlock()
	w.Warn(msg)
}

// Validate reports the first thing wrong with the configuration.
func (c *Config) Validate() error {
	if c.Interval <= 0 {
		return errors.New("watch: the interval must be positive")
	}
	if c.Failures.Threshold <= 0 && c.MaxSize <= 0 && c.MaxAge <= 0 && !c.ReadGauges && !c.ReadFailures {
		return errors.New("watch: nothing to alert on")
	}
	if c.BlindAfter < 0 {
		return errors.New("watch: blind-after must not be negative")
	}
	r := c.Failures
	r.Key, r.Threshold = AppKey, max(r.Threshold, 1)
	return r.Validate()
}

func (w *Watcher) init() error {
	if err := w.Validate(); err != nil {
		return err
	}
	w.BlindAfter = cmp.Or(w.BlindAfter, DefaultBlindAfter) // never negative once valid
	w.FlushTimeout = cmp.Or(max(w.FlushTimeout, 0), DefaultFlushTimeout)
	w.id = rand.Text()
	return w.resetKeys()
}

// resetKeys forgets every key's state, the watcher's own alert's too.
func (w *Watcher) resetKeys() (err error) {
	w.keys = map[string]*alertKey{}
	w.blind, err = alerts.NewEvaluator(alerts.Rule{Key: BlindKey, Threshold: int(max(w.BlindAfter/time.Second, 1)),
		Window: w.Failures.Window, Repeat: w.Failures.Repeat, Measure: measureBlind, ResolveBelow: -1})
	return err
}

// Run watches until ctx ends, then releases the lock, gives queued
// digests FlushTimeout to go out, and returns nil. It returns an error only
// for a bad configuration: a lost database is retried, never fatal.
func (w *Watcher) Run(ctx context.Context) error {
	if err := w.init(); err != nil {
		return err
	}
	snd := startSenders(w.Notifiers, w.Dispatcher, w.warn)
	defer func() {
		if w.lock != nil {
			w.lock.Release()
			w.lock = nil
		}
		snd.stop(w.FlushTimeout)
	}()
	w.lastOK = w.Now()
	var backoff time.Duration
	for first := true; ; first = false {
		start := w.Now()
		t := w.tick(ctx, start)
		if ctx.Err() != nil {
			return nil
		}
		t.First = first
		if w.OnTick != nil {
			w.OnTick(t)
		}
		snd.send(t.Digest)
		wait := w.Interval
		if t.Err != nil {
			backoff = min(max(backoff*2, firstRetry), w.Interval)
			wait = backoff
		} else {
			backoff = 0
		}
		// Ticks keep their interval: the time the tick took is part of it.
		wait = max(wait-w.Now().Sub(start), 0)
		if w.Sleep(ctx, wait) != nil {
			return nil
		}
	}
}

// tick reads what is new and evaluates every key.
func (w *Watcher) tick(ctx context.Context, now time.Time) Tick {
	t := Tick{At: now}
	resumeAfter := w.last
	tctx, cancel := context.WithTimeout(ctx, max(w.Interval, minTickTimeout))
	err := w.read(tctx, now, &t)
	cancel()
	if ctx.Err() != nil {
		return t
	}
	d := alerts.Digest{At: now, App: w.App}
	if err != nil {
		t.Err = err
		t.Blind = now.Sub(w.lastOK)
		w.blindErr = err.Error()
		if !w.outage {
			w.outage = true
			what := "the database"
			if t.Partial {
				what = "the queues (failures are still counted)"
			}
			w.warn("cannot read " + what + ": " + err.Error() + "; retrying")
		}
		if t.Holding && t.Partial {
			d.Notifications = w.evaluate(now, nil, false)
		}
	} else {
		if w.outage {
			w.outage = false
			w.warn(fmt.Sprintf("reading the database again after %s; resuming after failure id %d",
				now.Sub(w.lastOK).Truncate(time.Second), resumeAfter))
		}
		w.lastOK = now
		if t.Holding {
			d.Notifications = w.evaluate(now, t.Gauges, true)
		}
	}
	d.Notifications = append(d.Notifications, w.evaluateBlind(now, t.Blind)...)
	if t.Holding && (err == nil || t.Partial) {
		w.save(now)
	}
	if w.dropped > 0 {
		w.warn(fmt.Sprintf("%d failures not tracked per key: more than %d alert keys", w.dropped, maxKeys))
		w.dropped = 0
	}
	t.Digest, t.Firing, t.LastID = d, w.firing(), w.last
	if k, ok := w.keys[AppKey]; ok {
		t.AppCount = k.eval.Count()
	}
	t.Restored, w.restored = w.restored, 0
	return t
}

// read takes or checks the lock, then reads the failures and gauges; an
// error of the gauges alone makes the tick Partial.
func (w *Watcher) read(ctx context.Context, now time.Time, t *Tick) error {
	if w.lock == nil {
		lock, err := w.Source.Lock(ctx)
		if errors.Is(err, ErrLockHeld) {
			if !w.standingBy {
				w.warn("another watcher holds the lock for this database; standing by")
				w.standingBy = true
			}
			// Whoever holds the lock notifies; on taking over, its
			// state (the state file) is the truth, and the window is
			// read afresh.
			w.started = false
			t.StandingBy = true
			return nil
		}
		if err != nil {
			return fmt.Errorf("taking the watch lock: %w", err)
		}
		if w.standingBy {
			w.warn("took over the watch lock")
			w.standingBy = false
		}
		w.lock = lock
		w.adopt()
	} else if err := w.lock.Check(ctx); err != nil {
		w.lock.Release()
		w.lock = nil
		return err
	}
	t.Holding = true
	if w.Failures.Threshold > 0 || w.ReadFailures {
		if !w.started {
			maxID, err := w.Source.MaxID(ctx)
			if err != nil {
				return err
			}
			w.resetWindows()
			if err := w.Source.Window(ctx, now.Add(-w.Failures.Window), maxID, w.observe); err != nil {
				return err
			}
			w.last, w.started = maxID, true
		} else {
			err := w.Source.After(ctx, w.last, func(f Failure) {
				w.last = max(w.last, f.ID)
				t.New++
				w.observe(f)
			})
			if err != nil {
				return err
			}
		}
	}
	if w.MaxSize > 0 || w.MaxAge > 0 || w.ReadGauges {
		g, err := w.Source.Gauges(ctx, now)
		t.Gauges, t.Partial = g, err != nil
		return err
	}
	return nil
}

// adopt loads the state file when another watcher (or an earlier run) saved
// it since this one did: its pending and firing keys carry on, so a restart
// neither fires again what was firing nor forgets to resolve it.
func (w *Watcher) adopt() {
	if w.StatePath == "" {
		return
	}
	st, ok, err := loadState(w.StatePath, w.App)
	if err != nil {
		w.warn("alert state not restored: " + err.Error())
		return
	}
	if !ok || (st.Writer == w.id && st.Seq == w.seq) {
		return // nothing saved, or this process saved it last: memory is current
	}
	_ = w.resetKeys() // the rule was valid in init
	w.started, w.seq, w.savedKeys = false, 0, ""
	for _, e := range st.Keys {
		if e.Key == BlindKey {
			if w.blind.Restore(e.Saved) {
				w.restored++
			}
			continue
		}
		// nil: a key this configuration no longer alerts on.
		if k := w.newKey(e.Key); k != nil && k.eval.Restore(e.Saved) {
			k.detail = e.Detail
			w.keys[e.Key] = k
			w.restored++
		}
	}
}

// save writes the pending and firing keys to the state file; a failure is
// said once, and the watcher carries on.
func (w *Watcher) save(now time.Time) {
	if w.StatePath == "" {
		return
	}
	st := stateFile{Version: stateVersion, App: w.App, Writer: w.id, Seq: w.seq + 1, SavedAt: now.UTC(), LastID: w.last,
		Keys: []stateEntry{}}
	for _, name := range w.sortedKeys() {
		if s, ok := w.keys[name].eval.Save(); ok {
			st.Keys = append(st.Keys, stateEntry{Saved: s, Detail: w.keys[name].detail})
		}
	}
	if s, ok := w.blind.Save(); ok {
		st.Keys = append(st.Keys, stateEntry{Saved: s})
	}
	// Most ticks change nothing worth keeping: skip the write (and its
	// fsync) then. Count moves with every failure, so it is left out.
	var sig strings.Builder
	for _, e := range st.Keys {
		fmt.Fprintf(&sig, "%s\x00%s\x00%d\x00%d\x00%d\x00%s\x00%s\x00%s\n", e.Key, e.State, e.Peak,
			e.Since.UnixNano(), e.LastNotified.UnixNano(), e.Detail.Class, e.Detail.Message, e.Detail.Command)
	}
	if w.seq > 0 && sig.String() == w.savedKeys {
		return
	}
	if err := saveState(w.StatePath, st); err != nil {
		if !w.saveWarned {
			w.warn("alert state not saved (a restart will forget what is firing): " + err.Error())
			w.saveWarned = true
		}
		return
	}
	w.seq, w.saveWarned, w.savedKeys = st.Seq, false, sig.String()
}

// newKey makes the window and state machine of a key, or nil when the
// configuration has no rule for it (its threshold is 0, which no rule
// validates with). Gauge keys take the failure rule's window, for and
// repeat.
func (w *Watcher) newKey(name string) *alertKey {
	r, gauge := w.Failures, true
	switch {
	case strings.HasPrefix(name, "size:"):
		r.Threshold, r.Measure, r.ResolveBelow = int(min(w.MaxSize, maxInt32)), measureSize, 0
	case strings.HasPrefix(name, "age:"):
		r.Threshold, r.Measure, r.ResolveBelow = int(min(int64(w.MaxAge/time.Second), maxInt32)), measureAge, 0
	default:
		gauge = false
	}
	r.Key = name
	e, err := alerts.NewEvaluator(r)
	if err != nil {
		return nil
	}
	k := &alertKey{eval: e}
	if !gauge {
		k.window, _ = alerts.NewWindow(r.Window)
	}
	if w.LookCloser != nil {
		k.detail.Command = w.LookCloser(name)
	}
	return k
}

// maxInt32 caps thresholds read from int64 flags.
const maxInt32 = 1<<31 - 1

// resetWindows empties every failure window before the window is read
// (again): a read cut short by a lost database must not count twice.
func (w *Watcher) resetWindows() {
	for _, k := range w.keys {
		if k.window != nil {
			k.window, _ = alerts.NewWindow(w.Failures.Window)
		}
	}
}

// failureKeys are the keys a failure counts under.
func (w *Watcher) failureKeys(f Failure) []string {
	keys := []string{AppKey}
	if w.PerQueue {
		keys = append(keys, "queue:"+f.Queue)
	}
	if w.PerClass && f.Class != "" {
		keys = append(keys, "class:"+f.Class)
	}
	if w.PerSignature && f.Signature != "" {
		keys = append(keys, "sig:"+f.Signature)
	}
	return keys
}

func (w *Watcher) observe(f Failure) {
	for _, name := range w.failureKeys(f) {
		k, ok := w.keys[name]
		if !ok {
			if len(w.keys) >= maxKeys && name != AppKey {
				w.dropped++
				continue
			}
			if k = w.newKey(name); k == nil {
				continue
			}
			w.keys[name] = k
		}
		k.window.Add(f.At)
		k.detail.Class, k.detail.Message = f.Class, w.Redact.Text(f.Message)
	}
}

// sortedKeys is "app" first, then by name.
func (w *Watcher) sortedKeys() []string {
	names := slices.Sorted(maps.Keys(w.keys))
	if i := slices.Index(names, AppKey); i > 0 {
		names = slices.Insert(slices.Delete(names, i, i+1), 0, AppKey)
	}
	return names
}

// evaluate advances every key: failure keys by their window, gauge keys by
// this tick's gauges (a queue gone from the report counts 0, so its alert
// resolves) when they were read, and not at all when not (gaugesRead
// false: a queue that could not be counted is not a queue that drained).
// Quiet keys are forgotten, so the keys follow what is failing.
func (w *Watcher) evaluate(now time.Time, gauges []Gauge, gaugesRead bool) []alerts.Notification {
	values := map[string]int64{}
	for _, g := range gauges {
		if w.MaxSize > 0 {
			values["size:"+g.Queue] = g.Size
		}
		if w.MaxAge > 0 {
			values["age:"+g.Queue] = int64(g.OldestPendingAge / time.Second)
		}
	}
	for name, v := range values {
		if _, ok := w.keys[name]; ok || len(w.keys) >= maxKeys {
			continue
		}
		// Nothing to track until it crosses.
		if k := w.newKey(name); k != nil && v >= int64(k.eval.Rule().Threshold) {
			w.keys[name] = k
		}
	}
	var out []alerts.Notification
	for _, name := range w.sortedKeys() {
		k := w.keys[name]
		count := int(min(values[name], maxInt32)) // a gauge key's
		if k.window != nil {
			count = k.window.Count(now)
		} else if !gaugesRead {
			continue
		}
		if n, ok := k.eval.Evaluate(now, count); ok {
			n.Detail = k.detail
			// Again here: a state file written before redaction existed
			// may hold an unmasked example.
			n.Detail.Message = w.Redact.Text(n.Detail.Message)
			out = append(out, n)
		}
		if k.eval.State() == alerts.StateOK && (k.window == nil || k.eval.Count() == 0) {
			delete(w.keys, name)
		}
	}
	return out
}

// evaluateBlind advances the watcher's own alert: its count is the seconds
// it has been blind.
func (w *Watcher) evaluateBlind(now time.Time, blind time.Duration) []alerts.Notification {
	n, ok := w.blind.Evaluate(now, int(min(int64(blind/time.Second), maxInt32)))
	if !ok {
		return nil
	}
	n.Detail = alerts.Detail{Message: w.Redact.Text(w.blindErr)}
	if w.LookCloser != nil {
		n.Detail.Command = w.LookCloser(BlindKey)
	}
	return []alerts.Notification{n}
}

func (w *Watcher) firing() []string {
	var out []string
	for _, name := range w.sortedKeys() {
		if w.keys[name].eval.State() == alerts.StateFiring {
			out = append(out, name)
		}
	}
	if w.blind.State() == alerts.StateFiring {
		out = append(out, BlindKey)
	}
	return out
}
