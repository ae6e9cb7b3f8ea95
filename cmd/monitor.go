package cmd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/jobtriage/jobtriage/alerts"
	"github.com/jobtriage/jobtriage/alerts/metrics"
	"github.com/jobtriage/jobtriage/alerts/notify"
	"github.com/jobtriage/jobtriage/alerts/watch"
	"github.com/jobtriage/jobtriage/internal/appprofile"
	"github.com/jobtriage/jobtriage/internal/contexts"
	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/redact"
	"github.com/jobtriage/jobtriage/triage/sanitize"
)

// Env names of the notification secrets; each is also read from the app's
// .env file, after the real environment.
const (
	envSlackWebhook  = "JOBTRIAGE_SLACK_WEBHOOK"
	envWebhookURL    = "JOBTRIAGE_WEBHOOK_URL"
	envPagerDutyKey  = "JOBTRIAGE_PAGERDUTY_ROUTING_KEY"
	envNotifyCommand = "JOBTRIAGE_NOTIFY_COMMAND"
)

// heartbeatEvery is how often a watcher on a terminal says it is alive.
const heartbeatEvery = time.Minute

// watchFlushTimeout is how long a stopping watcher lets queued alerts go
// out: well within the grace Main gives a command after SIGINT/SIGTERM
// (interruptGrace), so a channel that never answers cannot turn a clean stop
// (exit 0) into a forced one.
const watchFlushTimeout = interruptGrace * 3 / 5

// stateFileNone turns the state file off.
const stateFileNone = "none"

// MonitorOptions are the inputs of `jobtriage monitor`.
type MonitorOptions struct {
	IO      *IOStreams
	Service func(context.Context) (*triage.Service, error)
	Config  func() (appprofile.Config, error)
	Now     func() time.Time
	Getenv  func(string) string
	Getwd   func() (string, error)
	EnvFile string
	// Sleep waits between watch ticks; tests replace it with a tick they
	// control.
	Sleep func(ctx context.Context, d time.Duration) error
	// AlertRedaction gives the keys whose values alert bodies mask.
	AlertRedaction func() (bool, redact.Keys, error)
	// Notifiers are added to those the flags configure (tests record).
	Notifiers []notify.Notifier

	Queues       []string
	MaxSize      int64
	MaxAge       time.Duration
	MaxFailed    int64
	Window       time.Duration
	For          time.Duration
	Repeat       time.Duration
	ResolveBelow int
	RetryAfter   time.Duration
	Watch        bool
	Interval     time.Duration
	JSON         bool
	Format       string
	AlertPer     []string

	SlackWebhook  string
	WebhookURL    string
	PagerDutyKey  string
	NotifyCommand string

	// StateFile keeps alert state across restarts; "" picks the default
	// under the user state directory, "none" keeps it in memory.
	StateFile string
	// BlindAfter is how long the watcher may fail to read the database
	// before it alerts about its own blindness.
	BlindAfter time.Duration

	// AllContexts and Contexts check several contexts of the
	// configuration file in one run (at most Parallel at once).
	AllContexts bool
	Contexts    []string
	Parallel    int
	// Listen serves /metrics and /healthz on this address while watching.
	Listen string
	// Listening is told the address the metrics server listens on (tests
	// listen on port 0).
	Listening func(addr string)

	// Context is the context this check runs in (nil for none): its
	// notifiers come after the flags and the environment.
	Context *contexts.Context
	// contextList returns the contexts to check; forContext binds a copy
	// of the options to one of them, with its own streams.
	contextList func() ([]contexts.Context, error)
	forContext  func(c contexts.Context, ios *IOStreams) *MonitorOptions
	// multiFlags are the flags that would replace every context's
	// database: refused with several contexts.
	multiFlags []string
	// metrics is the exporter the watcher reports to (--listen), shared
	// by the watchers of several contexts; nil without --listen.
	metrics *metrics.Exporter
	// multiName is the context's name on each JSON line of a watch over
	// several contexts ("" otherwise).
	multiName string
}

// NewCmdMonitor builds `jobtriage monitor`.
func NewCmdMonitor(f *Factory, runF func(context.Context, *MonitorOptions) error) *cobra.Command {
	opts := &MonitorOptions{IO: f.IO, Now: f.Now, Getenv: f.Getenv, Getwd: f.Getwd, Sleep: notify.Sleep, AlertRedaction: f.redaction}
	cmd := &cobra.Command{
		Use:   "monitor [queue...]",
		Short: "Check queue health once (exit 8 when a threshold is crossed), or --watch and alert",
		Long: heredoc.Doc(`
			Report each queue's health from the jobs and failed_jobs tables. A queue is
			"name" or "connection:name" as in php artisan queue:monitor (comma-separated
			lists work too); without queues every queue present is reported.

			Per queue: size (every row, Laravel's measure), pending (ready now), delayed,
			reserved, stuck (reserved at or before now − retry_after, which Laravel will
			hand to a worker again), the age of the oldest pending job (since it became
			available), and the failures of the last --window. A connection narrows only
			the failure count: the jobs table has no connection column.

			Thresholds (all inclusive; 0 disables one):
			  --max N           size ≥ N on any queue (queue:monitor's rule)
			  --max-age D       oldest pending job waiting ≥ D on any queue
			  --max-failed N    ≥ N failures within --window over the monitored queues

			Exit codes: 0 healthy, 8 a threshold was crossed (each breach is named on
			stderr), 1 error, 2 usage, 5 database unreachable or bad config, 6 a Laravel
			table is missing. Data goes to stdout: a table (TSV when piped), --json, or
			--format prometheus for node_exporter's textfile collector.

			--watch checks every --interval and alerts on failure rates: the rule
			(--max-failed within --window) applies to the whole app and, with
			--alert-per, to each queue, job class or error signature. A key fires after
			holding the threshold for --for, reminds every --repeat, and resolves when its
			count falls to --resolve-below (default half the threshold). Transitions are
			printed on stdout and sent, one digest per tick, to Slack, a webhook,
			PagerDuty and/or a command, each on its own queue, so a channel that hangs
			never delays a check. Every alert names the app, the latest failure's class
			and message, and the jobtriage command to look closer. A tick reads only the
			failed_jobs rows added since the last one (by id). Only one watcher per
			database notifies: it holds a lock (PostgreSQL advisory lock, MySQL
			GET_LOCK, a file lock beside a SQLite file) and the others stand by. --max
			and --max-age alert the same way in watch mode, per queue ("size:<queue>",
			"age:<queue>"): they fire when the limit is reached and resolve at half of it.

			A lost database is retried with backoff; the watcher resumes after the last
			failure id it saw and alerts about its own blindness after --blind-after.
			Pending and firing alerts are kept in --state-file, so a restarted watcher
			neither fires them again nor forgets to resolve them.

			Secrets come from the flags, the environment, the context's notify table or
			the app's .env file: JOBTRIAGE_SLACK_WEBHOOK, JOBTRIAGE_WEBHOOK_URL,
			JOBTRIAGE_PAGERDUTY_ROUTING_KEY, JOBTRIAGE_NOTIFY_COMMAND. They are never
			printed. The command gets each digest as JSON on stdin.

			--listen HOST:PORT (with --watch) serves Prometheus /metrics and /healthz
			(200 while the last successful check is within --blind-after, else 503);
			thresholds are then optional. docs/monitor.md lists the metrics.

			--all-contexts (or --contexts a,b) checks every app of the configuration
			file in one run, --parallel at a time: one report with a section per app
			(a CONTEXT column when piped, one object per context with --json) and the
			worst exit code; with --watch, one watcher per app and one --listen endpoint
			whose series carry a context label.
		`),
		Example: examples(heredoc.Doc(`
			# CI or cron: fail when a queue is backed up or jobs are failing
			$ jobtriage monitor default,emails --max 1000 --max-age 10m --max-failed 20 --window 5m

			# node_exporter textfile collector (every minute from cron)
			$ jobtriage monitor --format prometheus > /var/lib/node_exporter/jobtriage.prom.tmp; mv /var/lib/node_exporter/jobtriage.prom.tmp /var/lib/node_exporter/jobtriage.prom

			# every app of the configuration file, one report, the worst exit code
			$ jobtriage monitor --all-contexts --max 1000 --max-age 10m

			# a Prometheus exporter for every app, alerting on nothing
			$ jobtriage monitor --watch --all-contexts --listen 127.0.0.1:9187

			# page on 100 failures a minute per queue, held for 2 minutes, reminders hourly
			$ JOBTRIAGE_SLACK_WEBHOOK=https://hooks.slack.com/services/… \
			    jobtriage monitor --watch --max-failed 100 --window 1m --for 2m --repeat 1h --alert-per queue
		`)),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Service = f.Service
			opts.Config = f.Config
			opts.EnvFile = f.Conn.EnvFile
			opts.Queues = args
			bindMonitorContexts(f, c, opts)
			if err := opts.validate(); err != nil {
				return err
			}
			if !opts.multiContext() {
				var err error
				if opts.Context, err = f.Context(); err != nil {
					return err
				}
			}
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return monitorRun(c.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.Int64Var(&opts.MaxSize, "max", 0, "unhealthy when a queue's size is ≥ `N` (0 = no limit)")
	fl.DurationVar(&opts.MaxAge, "max-age", 0, "unhealthy when the oldest pending job has waited ≥ `DURATION`")
	fl.Int64Var(&opts.MaxFailed, "max-failed", 0, "unhealthy (watch: alert) at ≥ `N` failures within --window")
	fl.DurationVar(&opts.Window, "window", time.Minute, "the window failures are counted in (whole seconds, ≤ 7d)")
	fl.DurationVar(&opts.For, "for", 0, "watch: fire only after the count held the threshold this `long`")
	fl.DurationVar(&opts.Repeat, "repeat", 0, "watch: remind every `DURATION` while firing (0 = never)")
	fl.IntVar(&opts.ResolveBelow, "resolve-below", 0, "watch: resolve when the count is ≤ `N` (default threshold/2; -1 = at 0)")
	fl.DurationVar(&opts.RetryAfter, "retry-after", 0, "the queue's retry_after, for stuck jobs (default DB_QUEUE_RETRY_AFTER or 90s)")
	fl.BoolVar(&opts.Watch, "watch", false, "keep checking every --interval and alert; one watcher per database notifies")
	fl.DurationVar(&opts.Interval, "interval", 15*time.Second, "watch: time between checks")
	fl.BoolVar(&opts.JSON, "json", false, "print the report as JSON (watch: one JSON object per tick)")
	fl.StringVar(&opts.Format, "format", "", "output `format`: table (default) or prometheus")
	fl.StringSliceVar(&opts.AlertPer, "alert-per", nil, "watch: also alert per `queue|class|signature` (repeatable)")
	fl.StringVar(&opts.SlackWebhook, "slack-webhook", "", "watch: Slack incoming webhook `URL` (env "+envSlackWebhook+")")
	fl.StringVar(&opts.WebhookURL, "webhook-url", "", "watch: POST each digest as JSON to `URL` (env "+envWebhookURL+")")
	fl.StringVar(&opts.PagerDutyKey, "pagerduty-routing-key", "", "watch: PagerDuty Events v2 routing `key` (env "+envPagerDutyKey+")")
	fl.StringVar(&opts.NotifyCommand, "notify-command", "", "watch: run `PROGRAM [ARGS]` with each digest as JSON on stdin, no shell (env "+envNotifyCommand+")")
	fl.StringVar(&opts.StateFile, "state-file", "", "watch: keep alert state across restarts in `PATH` (default $XDG_STATE_HOME/jobtriage/watch-<app>.json; none = memory only)")
	fl.DurationVar(&opts.BlindAfter, "blind-after", watch.DefaultBlindAfter, "watch: alert when the database could not be read for this `long`")
	fl.BoolVar(&opts.AllContexts, "all-contexts", false, "check every context of the configuration file, in parallel; one report, the worst exit code")
	fl.StringSliceVar(&opts.Contexts, "contexts", nil, "check these contexts (comma-separated `NAMES`), as --all-contexts does")
	fl.IntVar(&opts.Parallel, "parallel", defaultMonitorParallel, "with several contexts: check at most `N` at once")
	fl.StringVar(&opts.Listen, "listen", "", "watch: serve Prometheus /metrics and /healthz on `HOST:PORT` (e.g. 127.0.0.1:9187)")
	return cmd
}

func (o *MonitorOptions) validate() error {
	if err := o.validateContexts(); err != nil {
		return err
	}
	switch {
	case o.MaxSize < 0 || o.MaxFailed < 0 || o.MaxAge < 0:
		return FlagErrorf("--max, --max-age and --max-failed must not be negative")
	case o.Window < time.Second || o.Window > alerts.MaxWindow || o.Window%time.Second != 0:
		return FlagErrorf("--window must be a whole number of seconds between 1s and %s", alerts.MaxWindow)
	case o.RetryAfter < 0:
		return FlagErrorf("--retry-after must not be negative")
	case o.For < 0 || o.Repeat < 0:
		return FlagErrorf("--for and --repeat must not be negative")
	case o.Format != "" && o.Format != "table" && o.Format != "prometheus":
		return FlagErrorf("--format must be table or prometheus, got %q", o.Format)
	case o.JSON && o.Format == "prometheus":
		return FlagErrorf("--json and --format prometheus are alternatives: pick one")
	}
	for _, p := range o.AlertPer {
		switch p {
		case "queue", "class", "signature":
		default:
			return FlagErrorf("--alert-per takes queue, class or signature, got %q", p)
		}
	}
	if _, err := triage.ParseQueueRefs(o.Queues); err != nil {
		return FlagErrorf("%v", err)
	}
	if !o.Watch {
		return nil
	}
	switch {
	case o.Interval < time.Second:
		return FlagErrorf("--interval must be at least 1s")
	case o.Format == "prometheus":
		return FlagErrorf("--format prometheus is for one check at a time (cron); drop --watch, or serve metrics with --listen")
	case o.MaxFailed == 0 && o.MaxSize == 0 && o.MaxAge == 0 && o.Listen == "":
		return FlagErrorf("--watch needs something to alert on: --max-failed (with --window), --max or --max-age (or metrics to serve: --listen)")
	case o.BlindAfter < time.Second:
		return FlagErrorf("--blind-after must be at least 1s")
	}
	if o.MaxFailed > 0 {
		if _, err := o.rule("app"); err != nil {
			return FlagErrorf("%v", err)
		}
	}
	return nil
}

// rule is the failure-rate rule of one alert key.
func (o *MonitorOptions) rule(key string) (alerts.Rule, error) {
	r := alerts.Rule{Key: key, Threshold: int(min(o.MaxFailed, int64(1<<31-1))), Window: o.Window, For: o.For,
		Repeat: o.Repeat, ResolveBelow: o.ResolveBelow}
	return r, r.Validate()
}

// monitorSetup opens the store and settles retry_after.
func monitorSetup(ctx context.Context, opts *MonitorOptions) (triage.MonitorSource, triage.MonitorParams, error) {
	refs, _ := triage.ParseQueueRefs(opts.Queues)
	svc, err := opts.Service(ctx)
	if err != nil {
		return nil, triage.MonitorParams{}, err
	}
	src, ok := svc.MonitorSource()
	if !ok {
		return nil, triage.MonitorParams{}, fmt.Errorf("%w: monitor reads failed jobs from a database; this app's failed jobs are in %s (the file failed-job driver): use failed, failed --group and show there",
			triage.ErrInvalidInput, sanitize.Line(svc.Store.Schema().FailedTable))
	}
	p := triage.MonitorParams{Queues: refs, Window: opts.Window, RetryAfter: opts.RetryAfter,
		Connections: svc.MonitorConnections, DefaultConnection: svc.DefaultConnection}
	if p.RetryAfter == 0 {
		cfg, err := opts.Config()
		if err != nil {
			return nil, p, err
		}
		p.RetryAfter = cfg.RetryAfter
	}
	return src, p, nil
}

func (o *MonitorOptions) thresholds() triage.Thresholds {
	return triage.Thresholds{MaxSize: o.MaxSize, MaxAge: o.MaxAge, MaxFailed: o.MaxFailed}
}

func monitorRun(ctx context.Context, opts *MonitorOptions) error {
	if opts.multiContext() {
		return monitorContextsRun(ctx, opts)
	}
	src, p, err := monitorSetup(ctx, opts)
	if err != nil {
		return err
	}
	if opts.Watch {
		return watchRun(ctx, opts, src, p)
	}
	rep, breaches, err := monitorCheck(ctx, opts, src, p)
	if err != nil {
		return err
	}
	switch {
	case opts.JSON:
		err = writeJSON(opts.IO.Out, reportJSON(rep, breaches))
	case opts.Format == "prometheus":
		err = writePrometheus(opts.IO.Out, rep, breaches)
	default:
		err = printReport(opts.IO, rep)
	}
	if err != nil {
		return err
	}
	if len(breaches) == 0 {
		return nil
	}
	for _, b := range breaches {
		fmt.Fprintln(opts.IO.ErrOut, "unhealthy: "+sanitize.Line(b.String()))
	}
	return silentExit(ExitUnhealthy)
}

// monitorCheck runs one check and says on stderr what it could not see.
func monitorCheck(ctx context.Context, opts *MonitorOptions, src triage.MonitorSource, p triage.MonitorParams) (triage.Report, []triage.Breach, error) {
	p.Now = opts.Now()
	rep, err := triage.Monitor(ctx, src, p)
	if err != nil {
		return rep, nil, err
	}
	breaches := rep.Check(opts.thresholds())
	if rep.NoJobsTable && len(p.Connections) == 0 {
		fmt.Fprintln(opts.IO.ErrOut, "warning: no jobs table: sizes are 0 and only failures were counted")
	}
	for _, b := range rep.Blind {
		fmt.Fprintln(opts.IO.ErrOut, "note: cannot see the queues of connection "+sanitize.Line(b)+" (failures still counted)")
	}
	return rep, breaches, nil
}

func printReport(ios *IOStreams, rep triage.Report) error {
	t := newTable(ios, -1, "QUEUE", "SIZE", "PENDING", "DELAYED", "RESERVED", "STUCK", "OLDEST PENDING", "FAILED/"+alerts.FormatDuration(rep.Window))
	for _, q := range rep.Queues {
		oldest := ""
		switch {
		case q.OldestPendingAt.IsZero():
		case ios.IsStdoutTTY():
			oldest = alerts.FormatDuration(q.OldestPendingAge.Truncate(time.Second))
		default:
			// Piped, a duration is a number of seconds a script can compare.
			oldest = strconv.FormatInt(int64(q.OldestPendingAge/time.Second), 10)
		}
		name := q.Queue
		if q.Connection != "" {
			name = q.Connection + ":" + q.Queue
		}
		t.add(name, i64(q.Size), i64(q.Pending), i64(q.Delayed), i64(q.Reserved), i64(q.Stuck), oldest, i64(q.Failed))
	}
	if len(rep.Queues) == 0 && ios.IsStdoutTTY() {
		fmt.Fprintln(ios.ErrOut, "no queued jobs and no failures in the window")
	}
	return t.render()
}

func i64(n int64) string { return strconv.FormatInt(n, 10) }

// monitorSchemaVersion is the version of monitor's JSON (docs/json.md).
const monitorSchemaVersion = 1

// queueJSON is one queue of monitor --json: counts as numbers, times as
// RFC 3339 in seconds or null, durations in seconds.
type queueJSON struct {
	Connection              string  `json:"connection,omitempty"`
	Queue                   string  `json:"queue"`
	Size                    int64   `json:"size"`
	Pending                 int64   `json:"pending"`
	Delayed                 int64   `json:"delayed"`
	Reserved                int64   `json:"reserved"`
	Stuck                   int64   `json:"stuck"`
	OldestPendingAt         *string `json:"oldest_pending_at"`
	OldestPendingAgeSeconds *int64  `json:"oldest_pending_age_seconds"`
	Failed                  int64   `json:"failed"`
}

type reportJSONOut struct {
	SchemaVersion     int             `json:"schema_version"`
	At                string          `json:"at"`
	Healthy           bool            `json:"healthy"`
	WindowSeconds     int64           `json:"window_seconds"`
	RetryAfterSeconds int64           `json:"retry_after_seconds"`
	Failed            int64           `json:"failed"`
	JobsTable         bool            `json:"jobs_table"`
	Queues            []queueJSON     `json:"queues"`
	Breaches          []triage.Breach `json:"breaches"`
	// Blind names the connections whose queues could not be counted.
	Blind []string `json:"blind,omitempty"`
}

// rfc3339 is a time as the JSON outputs write it: UTC, whole seconds.
func rfc3339(t time.Time) string { return t.UTC().Truncate(time.Second).Format(time.RFC3339) }

func emptyReportJSON(at time.Time) reportJSONOut {
	return reportJSONOut{SchemaVersion: monitorSchemaVersion, At: rfc3339(at), Queues: []queueJSON{}, Breaches: []triage.Breach{}}
}

func reportJSON(rep triage.Report, breaches []triage.Breach) reportJSONOut {
	out := emptyReportJSON(rep.At)
	out.Healthy = len(breaches) == 0
	out.WindowSeconds = int64(rep.Window / time.Second)
	out.RetryAfterSeconds = int64(rep.RetryAfter / time.Second)
	out.Failed, out.JobsTable, out.Blind = rep.Failed, !rep.NoJobsTable, rep.Blind
	if breaches != nil {
		out.Breaches = breaches
	}
	for _, q := range rep.Queues {
		qj := queueJSON{Connection: q.Connection, Queue: q.Queue, Size: q.Size, Pending: q.Pending, Delayed: q.Delayed,
			Reserved: q.Reserved, Stuck: q.Stuck, Failed: q.Failed}
		if !q.OldestPendingAt.IsZero() {
			at, age := rfc3339(q.OldestPendingAt), int64(q.OldestPendingAge/time.Second)
			qj.OldestPendingAt, qj.OldestPendingAgeSeconds = &at, &age
		}
		out.Queues = append(out.Queues, qj)
	}
	return out
}

// promLabel is a label value for the text exposition format: backslash,
// quote and newline escaped as the format defines, and any other character
// a terminal would act on (a queue name from the database may hold escapes,
// NUL, bidi controls) replaced by U+FFFD, since the format has no escape
// for them.
func promLabel(s string) string {
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch r {
		case '\\':
			b.WriteString(`\\`)
		case '"':
			b.WriteString(`\"`)
		case '\n':
			b.WriteString(`\n`)
		default:
			if _, _, ok := sanitize.Inert(string(r)); !ok {
				r = '\uFFFD'
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}

func writePrometheus(w io.Writer, rep triage.Report, breaches []triage.Breach) error {
	var b strings.Builder
	gauge := func(name, help string, value func(triage.QueueHealth) int64) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name)
		for _, q := range rep.Queues {
			labels := `queue="` + promLabel(q.Queue) + `"`
			if q.Connection != "" {
				labels = `connection="` + promLabel(q.Connection) + `",` + labels
			}
			fmt.Fprintf(&b, "%s{%s} %d\n", name, labels, value(q))
		}
	}
	gauge("jobtriage_queue_size", "Rows in the jobs table for the queue (Laravel's queue size).", func(q triage.QueueHealth) int64 { return q.Size })
	gauge("jobtriage_queue_pending", "Jobs ready to run now.", func(q triage.QueueHealth) int64 { return q.Pending })
	gauge("jobtriage_queue_delayed", "Jobs available later.", func(q triage.QueueHealth) int64 { return q.Delayed })
	gauge("jobtriage_queue_reserved", "Jobs reserved by a worker.", func(q triage.QueueHealth) int64 { return q.Reserved })
	gauge("jobtriage_queue_stuck", "Reserved jobs whose retry_after expired.", func(q triage.QueueHealth) int64 { return q.Stuck })
	gauge("jobtriage_queue_oldest_pending_age_seconds", "Seconds the oldest pending job has been available (0 when none).",
		func(q triage.QueueHealth) int64 { return int64(q.OldestPendingAge / time.Second) })
	gauge("jobtriage_queue_failed_window", "Failed jobs of the queue within the window.", func(q triage.QueueHealth) int64 { return q.Failed })
	healthy := 1
	if len(breaches) > 0 {
		healthy = 0
	}
	fmt.Fprintf(&b, "# HELP jobtriage_failed_window Failed jobs of the monitored queues within the window.\n# TYPE jobtriage_failed_window gauge\njobtriage_failed_window{window_seconds=\"%d\"} %d\n",
		int64(rep.Window/time.Second), rep.Failed)
	fmt.Fprintf(&b, "# HELP jobtriage_healthy 1 when no threshold was crossed.\n# TYPE jobtriage_healthy gauge\njobtriage_healthy %d\n", healthy)
	fmt.Fprintf(&b, "# HELP jobtriage_monitor_timestamp_seconds When the check ran.\n# TYPE jobtriage_monitor_timestamp_seconds gauge\njobtriage_monitor_timestamp_seconds %d\n", rep.At.Unix())
	_, err := io.WriteString(w, b.String())
	return err
}

// secret reads a notification setting: the flag, else the environment, else
// the context, else the app's .env file.
func (o *MonitorOptions) secret(flag, env, fromContext string, dotenv map[string]string) string {
	if flag != "" {
		return flag
	}
	if v := o.Getenv(env); v != "" {
		return v
	}
	if fromContext != "" {
		return fromContext
	}
	v, _ := appprofile.Cast(dotenv[env])
	return v
}

// dotenv reads the app's .env for the notification settings; a missing or
// unreadable file only means there are none there.
func (o *MonitorOptions) dotenv() map[string]string {
	path := o.EnvFile
	if path == "" && o.Context != nil {
		path = o.Context.EnvFile
		if path == "" && o.Context.App != "" {
			path = filepath.Join(o.Context.App, ".env")
		}
	}
	if path == "" {
		dir, err := o.Getwd()
		if err != nil {
			return nil
		}
		path = filepath.Join(dir, ".env")
	}
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		return nil
	}
	vars, err := appprofile.LoadDotenv(path)
	if err != nil {
		return nil
	}
	return vars
}

// notifiers builds the channels; errors never contain the secrets (the
// notify constructors redact them). The watcher prints every transition
// itself, so there is no log notifier here.
func (o *MonitorOptions) notifiers() ([]notify.Notifier, error) {
	env := o.dotenv()
	var cn contexts.Notify
	if o.Context != nil {
		cn = o.Context.Notify
	}
	var out []notify.Notifier
	if u := o.secret(o.SlackWebhook, envSlackWebhook, cn.SlackWebhook, env); u != "" {
		n, err := notify.NewSlack(notify.SlackConfig{WebhookURL: u})
		if err != nil {
			return nil, FlagErrorf("%v", err)
		}
		out = append(out, n)
	}
	if u := o.secret(o.WebhookURL, envWebhookURL, cn.WebhookURL, env); u != "" {
		n, err := notify.NewWebhook(notify.WebhookConfig{URL: u})
		if err != nil {
			return nil, FlagErrorf("%v", err)
		}
		out = append(out, n)
	}
	if k := o.secret(o.PagerDutyKey, envPagerDutyKey, cn.PagerDutyRoutingKey, env); k != "" {
		n, err := notify.NewPagerDuty(notify.PagerDutyConfig{RoutingKey: k})
		if err != nil {
			return nil, FlagErrorf("%v", err)
		}
		out = append(out, n)
	}
	if c := o.secret(o.NotifyCommand, envNotifyCommand, cn.Command, env); c != "" {
		fields := strings.Fields(c)
		n, err := notify.NewCommand(notify.CommandConfig{Path: fields[0], Args: fields[1:]})
		if err != nil {
			return nil, FlagErrorf("%v", err)
		}
		out = append(out, n)
	}
	return append(out, o.Notifiers...), nil
}

// watchRun runs the alert engine (alerts/watch) on the store until ctx
// ends: the engine owns the loop, the alert state and the sending; this
// prints what it does.
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
	var alertKeys redact.Keys // zero: the default list
	if opts.AlertRedaction != nil {
		if _, alertKeys, err = opts.AlertRedaction(); err != nil {
			return err
		}
	}
	w := &watch.Watcher{
		Config: watch.Config{
			Redact: alertKeys,
			Failures: alerts.Rule{Threshold: int(min(opts.MaxFailed, int64(1<<31-1))), Window: opts.Window,
				For: opts.For, Repeat: opts.Repeat, ResolveBelow: opts.ResolveBelow},
			MaxSize: opts.MaxSize, MaxAge: opts.MaxAge, ReadGauges: opts.JSON || opts.metrics != nil,
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
			fmt.Fprintln(opts.IO.ErrOut, "watch: "+sanitize.Line(oneLine(msg)))
		},
	}
	for _, per := range opts.AlertPer {
		switch per {
		case "queue":
			w.PerQueue = true
		case "class":
			w.PerClass = true
		case "signature":
			w.PerSignature = true
		}
	}
	return w.Run(ctx)
}

// app names the watched app in every alert: APP_NAME, APP_ENV and the
// failed-jobs store without its password.
func (o *MonitorOptions) app() alerts.App {
	cfg, err := o.Config()
	if err != nil {
		return alerts.App{}
	}
	// Like describeTarget: a name only for a real app profile (with --dsn
	// alone APP_NAME is Laravel's default and names nothing).
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

// statePath is --state-file, else a file per app under the user state
// directory ($XDG_STATE_HOME, else ~/.local/state), so watchers of two apps
// on one machine keep apart; "" when there is none (memory only).
func (o *MonitorOptions) statePath(app alerts.App) string {
	switch o.StateFile {
	case stateFileNone:
		return ""
	case "":
	default:
		return o.StateFile
	}
	dir := o.Getenv("XDG_STATE_HOME")
	if dir == "" {
		home := o.Getenv("HOME")
		if home == "" {
			return ""
		}
		dir = filepath.Join(home, ".local", "state")
	}
	sum := sha256.Sum256([]byte(app.ID()))
	return filepath.Join(dir, "jobtriage", "watch-"+hex.EncodeToString(sum[:6])+".json")
}

// lookCloser is the jobtriage command that lists what a key counts.
func (o *MonitorOptions) lookCloser(key string) string {
	since := " --since " + alerts.FormatDuration(o.Window)
	kind, value, _ := strings.Cut(key, ":")
	switch kind {
	case watch.AppKey:
		return "jobtriage failed --group" + since
	case "queue":
		return "jobtriage failed --group --queue " + shellQuote(value) + since
	case "class":
		return "jobtriage failed --group --class " + shellQuote(value) + since
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

// watchSource reads the store for the engine. Gauges runs the one-check
// report, kept for the tick's JSON line.
type watchSource struct {
	src    triage.MonitorSource
	p      triage.MonitorParams
	report *triage.Report
	// onFailure is told the connection and queue of every new failure
	// (the metrics' counter); nil for none.
	onFailure func(connection, queue string)
}

// lockAttempts is how many times Lock tries at once: the lock takes a
// dedicated connection from the pool, and after the server killed the
// sessions (a restart, pg_terminate_backend) each idle connection fails
// once before the pool dials a fresh one. A server that refuses
// connections fails every attempt at once, so this costs nothing then.
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

func (s *watchSource) Gauges(ctx context.Context, now time.Time) ([]watch.Gauge, error) {
	p := s.p
	p.Now = now
	rep, err := triage.Monitor(ctx, s.src, p)
	if err != nil {
		s.report = nil
		return nil, err
	}
	s.report = &rep
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

// watchOutput prints what the engine does: a start line, each transition
// (text) or one object per tick (--json), breaches of --max/--max-age as
// they appear and clear, and a heartbeat on a terminal.
type watchOutput struct {
	opts          *MonitorOptions
	src           *watchSource
	notifiers     []notify.Notifier
	statePath     string
	app           alerts.App
	lastBreaches  map[string]bool
	lastHeartbeat time.Time
}

// watchTickJSON is one NDJSON line of --watch --json: the report of the
// tick plus the alerts. healthy is false while a threshold is crossed or an
// alert fires.
type watchTickJSON struct {
	// Context names the context with several (monitor --watch
	// --all-contexts); absent otherwise.
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
			pluralWord(t.Restored, "alert", "alerts"), sanitize.Line(o.statePath))
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
		line := watchTickJSON{Context: o.opts.multiName, Holding: t.Holding, Firing: t.Firing, Notifications: notify.NewBody(t.Digest).Notifications,
			BlindSeconds: int64(t.Blind / time.Second)}
		if line.Firing == nil {
			line.Firing = []string{}
		}
		if t.Err != nil || o.src.report == nil {
			line.reportJSONOut = emptyReportJSON(t.At)
			if t.Err != nil {
				line.Error = t.Err.Error()
			}
		} else {
			line.reportJSONOut = reportJSON(*o.src.report, breaches)
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
			t.At.Local().Format(time.TimeOnly), state, t.AppCount, pluralWord(t.AppCount, "failure", "failures"),
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
	c := metrics.Check{At: t.At, Holding: t.Holding, Firing: len(t.Firing), Window: o.opts.Window}
	if t.Holding && o.src.report != nil {
		rep := o.src.report
		c.FailedWindow = rep.Failed
		for _, q := range rep.Queues {
			c.Queues = append(c.Queues, metrics.Queue{Connection: q.Connection, Queue: q.Queue, Pending: q.Pending,
				Delayed: q.Delayed, Reserved: q.Reserved, Stuck: q.Stuck, OldestPendingAge: q.OldestPendingAge,
				FailedWindow: q.Failed})
		}
	}
	exp.Succeeded(name, c)
}

// startLine says what the watcher watches, how, where it tells, and
// whether this process notifies.
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
	if mark := opts.contextMarker(); mark != "" {
		target = mark + " · " + target
	}
	return sanitize.Line(fmt.Sprintf("watch: %s; %s (%s); notifiers: %s; %s; %s",
		target, alertOn, timing, strings.Join(names, ", "), state, lock))
}

func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// writeJSONLine prints v as one line of JSON (NDJSON), escaped as writeJSON is.
func writeJSONLine(w io.Writer, v any) error {
	b, err := marshalLine(v)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// printBreachChanges prints breaches that appeared and cleared since the
// last tick, and returns the current set.
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
