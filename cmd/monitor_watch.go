package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jobtriage/jobtriage/alerts"
	"github.com/jobtriage/jobtriage/alerts/metrics"
	"github.com/jobtriage/jobtriage/alerts/notify"
	"github.com/jobtriage/jobtriage/alerts/watch"
	"github.com/jobtriage/jobtriage/internal/contexts"
	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sanitize"
)

// monitor --watch: the alert engine (alerts/watch) on the store, and what it prints.

const (
	// heartbeatEvery is how often a watcher on a terminal says it is alive.
	heartbeatEvery = time.Minute
	// watchFlushTimeout is how long a stopping watcher lets queued alerts go
	// out: within interruptGrace, so a hung channel cannot force the stop.
	watchFlushTimeout = interruptGrace * 3 / 5
	// stateFileNone turns the state file off.
	stateFileNone = "none"
)

// notifiers builds the channels (contexts.ResolveNotify); a malformed one is
// a usage error without the secret. The watcher prints to stdout itself.
func (o *MonitorOptions) notifiers() ([]notify.Notifier, error) {
	n := contexts.ResolveNotify(o.Notify, o.Getenv, o.Context, o.EnvFile, o.Getwd)
	out, err := notify.Channels(n).Notifiers()
	if err != nil {
		return nil, FlagErrorf("%v", err)
	}
	return append(out, o.Notifiers...), nil
}

// watchRun runs the alert engine on the store until ctx ends: the engine
// owns the loop, the alert state and the sending; this prints what it does.
func watchRun(ctx context.Context, opts *MonitorOptions, src triage.MonitorSource, p triage.MonitorParams) error {
	nts, err := opts.notifiers()
	if err != nil {
		return err
	}
	if opts.Listen != "" && opts.metrics == nil {
		exp := newExporter(opts, opts.Context != nil)
		stop, err := serveMetrics(ctx, opts, exp)
		if err != nil {
			return err
		}
		defer stop()
		opts.metrics = exp
	}
	app := opts.app()
	statePath := opts.statePath(app)
	ws := &watchSource{src: src, p: p}
	if exp := opts.metrics; exp != nil {
		name := opts.contextName()
		exp.Register(name)
		ws.onFailure = func(connection, queue string) { exp.CountFailure(name, connection, queue) }
	}
	out := &watchOutput{opts: opts, src: ws, notifiers: nts, statePath: statePath, app: app}
	w := &watch.Watcher{
		Config: watch.Config{
			Redact:   opts.AlertKeys,
			Failures: opts.failureRule(),
			MaxSize:  opts.MaxSize, MaxAge: opts.MaxAge, ReadGauges: opts.JSON || opts.metrics != nil,
			ReadFailures: opts.metrics != nil,
			Interval:     opts.Interval, BlindAfter: opts.BlindAfter, App: app, StatePath: statePath,
			FlushTimeout: watchFlushTimeout,
		},
		Source:     ws,
		Notifiers:  nts,
		Dispatcher: notify.Dispatcher{Now: opts.Now},
		Now:        opts.Now,
		Sleep:      opts.Sleep,
		LookCloser: opts.lookCloser,
		OnTick:     out.tick,
		Warn: func(msg string) {
			fmt.Fprintln(opts.IO.ErrOut, "watch: "+sanitize.Line(sanitize.FirstLine(msg)))
		},
	}
	w.PerQueue, w.PerClass = slices.Contains(opts.AlertPer, "queue"), slices.Contains(opts.AlertPer, "class")
	w.PerSignature = slices.Contains(opts.AlertPer, "signature")
	return w.Run(ctx)
}

// app names the watched app in every alert: APP_NAME and APP_ENV (of a real
// app, as appTarget) and the failed-jobs store without its password.
func (o *MonitorOptions) app() alerts.App {
	cfg, err := o.Config()
	if err != nil {
		return alerts.App{}
	}
	var a alerts.App
	if cfg.Profile != nil && cfg.Profile.IsApp {
		a.Name, a.Environment = cfg.AppName, cfg.AppEnv
	}
	a.Database = cfg.Target.Redacted()
	if cfg.FailedTable != "" {
		a.Database += " table " + cfg.FailedTable
	}
	return a
}

// statePath is --state-file, else the app's file in the user state directory; "" for memory only.
func (o *MonitorOptions) statePath(app alerts.App) string {
	switch o.StateFile {
	case stateFileNone:
		return ""
	case "":
		return watch.DefaultStatePath(o.Getenv, app)
	}
	return o.StateFile
}

// lookCloser is the jobtriage command that lists what a key counts.
func (o *MonitorOptions) lookCloser(key string) string {
	since := " --since " + alerts.FormatDuration(o.Window)
	kind, value, _ := strings.Cut(key, ":")
	switch kind {
	case watch.AppKey:
		return "jobtriage failed --group" + since
	case "queue", "class":
		return "jobtriage failed --group --" + kind + " " + shellQuote(value) + since
	case "sig":
		return "jobtriage failed --signature " + shellQuote(value) + since
	case "size", "age":
		return "jobtriage monitor " + shellQuote(value)
	case "watcher":
		return "jobtriage doctor"
	}
	return ""
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@%+=,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// watchSource reads the store for the engine; Gauges keeps its report for the
// tick's JSON line; onFailure (or nil) counts each new failure for the metrics.
type watchSource struct {
	src       triage.MonitorSource
	p         triage.MonitorParams
	report    *triage.Report
	onFailure func(connection, queue string)
}

// lockAttempts is how many times Lock tries at once: after the server killed
// the sessions each idle pooled connection fails once before a fresh one is
// dialled; a refusing server fails at once.
const lockAttempts = 4

func (s *watchSource) Lock(ctx context.Context) (watch.Lock, error) {
	var err error
	for range lockAttempts {
		var l triage.WatchLock
		l, err = s.src.TryWatchLock(ctx)
		switch {
		case errors.Is(err, triage.ErrLockHeld):
			return nil, watch.ErrLockHeld
		case err == nil:
			return l, nil
		case ctx.Err() != nil:
			return nil, err
		}
	}
	return nil, err
}

func (s *watchSource) MaxID(ctx context.Context) (int64, error) { return s.src.MaxFailedID(ctx) }

func (s *watchSource) Window(ctx context.Context, since time.Time, maxID int64, fn func(watch.Failure)) error {
	return s.src.ScanRecentFailed(ctx, triage.RecentParams{Since: since, MaxID: maxID, Heads: true},
		func(r *triage.FailedRow) error {
			fn(failureOf(r))
			return nil
		})
}

func (s *watchSource) After(ctx context.Context, afterID int64, fn func(watch.Failure)) error {
	return s.src.ScanFailed(ctx, triage.ScanParams{AfterID: afterID, Ascending: true},
		func(r *triage.FailedRow) error {
			f := failureOf(r)
			if s.onFailure != nil {
				s.onFailure(r.Connection, f.Queue)
			}
			fn(f)
			return nil
		})
}

// Gauges reads the queues; a connection that cannot be read fails the gauges
// alone: the report kept for the JSON line still counts failed_jobs.
func (s *watchSource) Gauges(ctx context.Context, now time.Time) ([]watch.Gauge, error) {
	p := s.p
	p.Now, p.Partial = now, true
	rep, err := triage.Monitor(ctx, s.src, p)
	if err != nil {
		s.report = nil
		return nil, err
	}
	s.report = &rep
	if rep.Unread != nil {
		return nil, rep.Unread
	}
	out := make([]watch.Gauge, 0, len(rep.Queues))
	for _, q := range rep.Queues {
		out = append(out, watch.Gauge{Queue: triage.QueueRef{Connection: q.Connection, Queue: q.Queue}.String(),
			Size: q.Size, OldestPendingAge: q.OldestPendingAge})
	}
	return out, nil
}

func failureOf(r *triage.FailedRow) watch.Failure {
	j := triage.JobFromRow(r)
	msg := j.ExceptionMessage
	if j.ExceptionClass != "" {
		msg = j.ExceptionClass + ": " + msg
	}
	return watch.Failure{ID: r.ID, At: j.FailedAt, Queue: j.Queue, Class: j.Class,
		Signature: j.Signature, Message: msg}
}

// watchOutput prints a start line, each transition (or an object per tick
// with --json), --max/--max-age breaches as they come and go, a heartbeat.
type watchOutput struct {
	opts          *MonitorOptions
	src           *watchSource
	notifiers     []notify.Notifier
	statePath     string
	app           alerts.App
	lastBreaches  map[string]bool
	lastHeartbeat time.Time
}

// watchTickJSON is a line of --watch --json: the tick's report and alerts;
// healthy is false while a threshold is crossed or an alert fires.
type watchTickJSON struct {
	Context string `json:"context,omitempty"`
	reportJSONOut
	Holding       bool                      `json:"holding_lock"`
	Firing        []string                  `json:"firing"`
	Notifications []notify.BodyNotification `json:"notifications"`
	BlindSeconds  int64                     `json:"blind_seconds,omitempty"`
	Error         string                    `json:"error,omitempty"`
}

func (o *watchOutput) tick(t watch.Tick) {
	ios := o.opts.IO
	if t.First {
		fmt.Fprintln(ios.ErrOut, o.startLine(t))
	}
	if t.Restored > 0 {
		fmt.Fprintf(ios.ErrOut, "watch: carried on %d pending or firing %s from %s\n", t.Restored,
			alerts.Plural(t.Restored, "alert", "alerts"), sanitize.Line(o.statePath))
	}
	var breaches []triage.Breach
	if t.Holding && t.Err == nil && o.src.report != nil {
		breaches = o.src.report.Check(triage.Thresholds{MaxSize: o.opts.MaxSize, MaxAge: o.opts.MaxAge})
	}
	o.observe(t)
	if o.opts.JSON {
		if t.StandingBy {
			return
		}
		line := watchTickJSON{Context: o.opts.multiName, Holding: t.Holding, Firing: orEmpty(t.Firing), Notifications: notify.NewBody(t.Digest).Notifications,
			BlindSeconds: int64(t.Blind / time.Second)}
		if (t.Err != nil && !t.Partial) || o.src.report == nil {
			line.reportJSONOut = emptyReportJSON(t.At)
		} else {
			line.reportJSONOut = reportJSON(*o.src.report, breaches)
		}
		if t.Err != nil {
			line.Error = t.Err.Error()
		}
		line.Healthy = t.Err == nil && len(breaches) == 0 && len(t.Firing) == 0
		if err := writeJSONLine(ios.Out, line); err != nil {
			fmt.Fprintln(ios.ErrOut, "watch: "+sanitize.Line(err.Error()))
		}
		return
	}
	if t.Holding && t.Err == nil && (o.opts.MaxSize > 0 || o.opts.MaxAge > 0) {
		o.lastBreaches = printBreachChanges(ios.Out, t.At, o.lastBreaches, breaches)
	}
	var b strings.Builder
	for _, n := range t.Digest.Notifications {
		b.WriteString(n.At.UTC().Format(time.RFC3339) + " " + sanitize.Line(notify.Line(n)) + "\n")
	}
	io.WriteString(ios.Out, b.String())
	if ios.IsStderrTTY() && t.At.Sub(o.lastHeartbeat) >= heartbeatEvery {
		o.lastHeartbeat = t.At
		state := "watching"
		switch {
		case t.StandingBy:
			state = "standing by"
		case t.Err != nil:
			state = "blind for " + alerts.FormatDuration(t.Blind.Truncate(time.Second))
		}
		fmt.Fprintf(ios.ErrOut, "%s %s: %d %s in the last %s, %d firing, last failure id %d\n",
			t.At.Local().Format(time.TimeOnly), state, t.AppCount, alerts.Plural(t.AppCount, "failure", "failures"),
			alerts.FormatDuration(o.opts.Window), len(t.Firing), t.LastID)
	}
}

// observe reports the tick to the metrics exporter, if any.
func (o *watchOutput) observe(t watch.Tick) {
	exp := o.opts.metrics
	if exp == nil {
		return
	}
	name := o.opts.contextName()
	if t.Err != nil {
		exp.Failed(name)
		return
	}
	c := metrics.Check{Holding: t.Holding, Window: o.opts.Window}
	if t.Holding && o.src.report != nil {
		c = metricsCheck(*o.src.report, 0)
	}
	c.At, c.Firing = t.At, len(t.Firing)
	exp.Succeeded(name, c)
}

// startLine says what the watcher watches, how, where it tells, and whether it notifies.
func (o *watchOutput) startLine(t watch.Tick) string {
	opts := o.opts
	rules := []string{}
	if opts.MaxFailed > 0 {
		r := fmt.Sprintf("≥ %d failures in %s", opts.MaxFailed, alerts.FormatDuration(opts.Window))
		if len(opts.AlertPer) > 0 {
			r += " (app, per " + strings.Join(opts.AlertPer, ", per ") + ")"
		}
		rules = append(rules, r)
	}
	if opts.MaxSize > 0 {
		rules = append(rules, fmt.Sprintf("queue size ≥ %d", opts.MaxSize))
	}
	if opts.MaxAge > 0 {
		rules = append(rules, "oldest pending ≥ "+alerts.FormatDuration(opts.MaxAge))
	}
	timing := "every " + alerts.FormatDuration(opts.Interval)
	if opts.For > 0 {
		timing += ", for " + alerts.FormatDuration(opts.For)
	}
	if opts.Repeat > 0 {
		timing += ", reminders every " + alerts.FormatDuration(opts.Repeat)
	}
	names := []string{"stdout"}
	if opts.JSON {
		names = []string{"stdout (json)"}
	}
	for _, n := range o.notifiers {
		names = append(names, n.Name())
	}
	lock := "this process holds the notifier lock and notifies"
	switch {
	case t.StandingBy:
		lock = "another watcher holds the notifier lock: standing by"
	case t.Err != nil:
		lock = "cannot read the database yet: retrying"
	}
	state := "alert state in memory only"
	if o.statePath != "" {
		state = "alert state in " + o.statePath
	}
	target := o.app.Database
	if l := o.app.Label(); l != target && l != "" {
		target = "app " + l + " · " + target
	}
	alertOn := "alert on " + strings.Join(rules, ", ")
	if len(rules) == 0 {
		alertOn = "no alert rules (metrics only)"
	}
	if opts.Context != nil {
		target = opts.Context.Marker() + " · " + target
	}
	return sanitize.Line(fmt.Sprintf("watch: %s; %s (%s); notifiers: %s; %s; %s",
		target, alertOn, timing, strings.Join(names, ", "), state, lock))
}

// printBreachChanges prints the breaches that came and went since the last tick; it returns the set.
func printBreachChanges(w io.Writer, now time.Time, last map[string]bool, breaches []triage.Breach) map[string]bool {
	cur := map[string]bool{}
	ts := now.UTC().Format(time.RFC3339)
	for _, b := range breaches {
		key := b.Queue + "\x00" + b.Measure
		cur[key] = true
		if !last[key] {
			fmt.Fprintln(w, ts+" UNHEALTHY "+sanitize.Line(b.String()))
		}
	}
	var cleared []string
	for key := range last {
		if !cur[key] {
			cleared = append(cleared, key)
		}
	}
	sort.Strings(cleared)
	for _, key := range cleared {
		queue, measure, _ := strings.Cut(key, "\x00")
		fmt.Fprintln(w, ts+" HEALTHY "+sanitize.Line("queue "+queue+": "+measure+" back under its limit"))
	}
	return cur
}
