package cmd

import (
	"context"
	"fmt"
	"io"
	"slices"
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

// The command, its flags and the run: a check (monitor_report.go), a watch or several contexts.

// MonitorOptions are the inputs of `jobtriage monitor`.
type MonitorOptions struct {
	IO      *IOStreams
	Service func(context.Context) (*triage.Service, error)
	Config  func() (appprofile.Config, error)
	Now     func() time.Time
	Getenv  func(string) string
	Getwd   func() (string, error)
	EnvFile string
	// Sleep waits between ticks; AlertKeys are the keys alert bodies mask
	// (zero: the default list); Notifiers are added to the flags' (tests record).
	Sleep     func(ctx context.Context, d time.Duration) error
	AlertKeys redact.Keys
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

	// Notify are the channel flags; the environment, the context and the
	// app's .env fill what they leave unset.
	Notify contexts.Notify
	// StateFile keeps alert state across restarts ("" the default file,
	// "none" memory only); BlindAfter is how long the watcher may fail to
	// read the database before it alerts about itself.
	StateFile  string
	BlindAfter time.Duration
	// AllContexts and Contexts check several contexts in one run, Parallel at once.
	AllContexts bool
	Contexts    []string
	Parallel    int
	// Listen serves /metrics and /healthz while watching; Listening is told the address.
	Listen    string
	Listening func(addr string)
	// Context is the context this check runs in (nil for none).
	Context *contexts.Context
	// contextList returns the contexts to check; forContext binds a copy
	// of the options to one of them, with its own streams.
	contextList func() ([]contexts.Context, error)
	forContext  func(c contexts.Context, out, errOut io.Writer) *MonitorOptions
	// multiFlags would replace every context's database: refused with several.
	multiFlags []string
	// metrics is the --listen exporter, shared by several contexts'
	// watchers; multiName names the context on their JSON lines.
	metrics   *metrics.Exporter
	multiName string
}

// NewCmdMonitor builds `jobtriage monitor`.
func NewCmdMonitor(f *Factory, runF func(context.Context, *MonitorOptions) error) *cobra.Command {
	opts := &MonitorOptions{IO: f.IO, Now: f.Now, Getenv: f.Getenv, Getwd: f.Getwd, Sleep: notify.Sleep}
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
			_, opts.AlertKeys, _ = f.redaction() // the root refused a bad one
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
			return runOr(c.Context(), opts, runF, monitorRun)
		},
	}
	fl := cmd.Flags()
	countVar(fl, &opts.MaxSize, "max", 0, 0, "unhealthy when a queue's size is ≥ `N` (0 = no limit)")
	durationVar(fl, &opts.MaxAge, "max-age", 0, "unhealthy when the oldest pending job has waited ≥ `DURATION`")
	countVar(fl, &opts.MaxFailed, "max-failed", 0, 0, "unhealthy (watch: alert) at ≥ `N` failures within --window")
	durationVar(fl, &opts.Window, "window", time.Minute, "the window failures are counted in (whole seconds, ≤ 7d)")
	durationVar(fl, &opts.For, "for", 0, "watch: fire only after the count held the threshold for `DURATION`")
	durationVar(fl, &opts.Repeat, "repeat", 0, "watch: remind every `DURATION` while firing (0 = never)")
	countVar(fl, &opts.ResolveBelow, "resolve-below", 0, -1, "watch: resolve when the count is ≤ `N` (default threshold/2; -1 = at 0)")
	durationVar(fl, &opts.RetryAfter, "retry-after", 0, "the queue's retry_after, for stuck jobs (default DB_QUEUE_RETRY_AFTER or 90s)")
	fl.BoolVar(&opts.Watch, "watch", false, "keep checking every --interval and alert; one watcher per database notifies")
	durationVar(fl, &opts.Interval, "interval", 15*time.Second, "watch: time between checks")
	fl.BoolVar(&opts.JSON, "json", false, "print the report as JSON (watch: one JSON object per tick)")
	fl.StringVar(&opts.Format, "format", "", "output `format`: table (default) or prometheus")
	fl.StringSliceVar(&opts.AlertPer, "alert-per", nil, "watch: also alert per `queue|class|signature` (repeatable)")
	fl.StringVar(&opts.Notify.SlackWebhook, "slack-webhook", "", "watch: Slack incoming webhook `URL` (env "+contexts.EnvSlackWebhook+")")
	fl.StringVar(&opts.Notify.WebhookURL, "webhook-url", "", "watch: POST each digest as JSON to `URL` (env "+contexts.EnvWebhookURL+")")
	fl.StringVar(&opts.Notify.PagerDutyRoutingKey, "pagerduty-routing-key", "", "watch: PagerDuty Events v2 routing `key` (env "+contexts.EnvPagerDutyKey+")")
	fl.StringVar(&opts.Notify.Command, "notify-command", "", "watch: run `PROGRAM [ARGS]` with each digest as JSON on stdin, no shell (env "+contexts.EnvNotifyCommand+")")
	fl.StringVar(&opts.StateFile, "state-file", "", "watch: keep alert state across restarts in `PATH` (default $XDG_STATE_HOME/jobtriage/watch-<app>.json; none = memory only)")
	durationVar(fl, &opts.BlindAfter, "blind-after", watch.DefaultBlindAfter, "watch: alert when the database could not be read for `DURATION`")
	fl.BoolVar(&opts.AllContexts, "all-contexts", false, "check every context of the configuration file, in parallel; one report, the worst exit code")
	fl.Var(nameList{&opts.Contexts}, "contexts", "check these contexts (comma-separated `NAMES`), as --all-contexts does")
	countVar(fl, &opts.Parallel, "parallel", defaultMonitorParallel, 1, "with several contexts: check at most `N` at once")
	addressVar(fl, &opts.Listen, "listen", "watch: serve Prometheus /metrics and /healthz on `HOST:PORT` (e.g. 127.0.0.1:9187)")
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
		if !slices.Contains([]string{"queue", "class", "signature"}, p) {
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
		if err := o.failureRule().Validate(); err != nil {
			return FlagErrorf("%v", err)
		}
	}
	return nil
}

// failureRule is the --max-failed rule of the app's key (and the --alert-per keys).
func (o *MonitorOptions) failureRule() alerts.Rule {
	return alerts.Rule{Key: watch.AppKey, Threshold: int(min(o.MaxFailed, int64(1<<31-1))), Window: o.Window, For: o.For,
		Repeat: o.Repeat, ResolveBelow: o.ResolveBelow}
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
		Connections: svc.MonitorConnections, DefaultConnection: svc.DefaultConnection, Pauses: svc.Pauses}
	if p.RetryAfter == 0 {
		cfg, err := opts.Config()
		if err != nil {
			return nil, p, err
		}
		p.RetryAfter = cfg.RetryAfter
	}
	return src, p, nil
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
	if err := triage.CheckMonitorNames(ctx, src, p, rep); err != nil {
		return err // a misspelled queue must fail the check, not pass it with zeros
	}
	switch {
	case opts.JSON:
		err = writeJSON(opts.IO.Out, reportJSON(rep, breaches))
	case opts.Format == "prometheus":
		err = metrics.WriteText(opts.IO.Out, metricsBuild(), metricsCheck(rep, len(breaches)))
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
