package cmd

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/MakeNowJust/heredoc"
	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/follow"
	"github.com/jobtriage/jobtriage/triage/sanitize"
)

// RetryOptions are the inputs of `jobtriage retry`.
type RetryOptions struct {
	IO      *IOStreams
	Service func(context.Context) (*triage.Service, error)
	Now     func() time.Time
	Audit   func(auditEntry) error

	IDs         []string
	All         bool
	Filter      FilterFlags
	Ranges      []string
	Limit       int
	ToQueue     string
	RetryUntil  time.Duration
	DBConns     []string
	refs        []triage.Ref // IDs parsed, or Ranges expanded
	DryRun      bool
	Yes         bool
	JSON        bool
	commandLine []string

	// Follow-through (retry --follow, --canary, --rate).
	Follow            bool
	FollowTimeout     time.Duration
	Canary            int
	CanarySuccess     string
	Rate              string
	StopAfterFailures int
	canaryShare       float64 // CanarySuccess parsed
	rate              float64 // Rate parsed, jobs per second; 0 unpaced
	// The follower's clock, look interval and settle grace; tests shorten them.
	followClock    follow.Clock
	followInterval time.Duration
	followGrace    time.Duration
	resolveWait    time.Duration // triage.RetryParams.ResolveWait; tests shorten it
}

// DefaultFollowTimeout is --follow-timeout's default.
const DefaultFollowTimeout = 10 * time.Minute

// followed reports whether the run follows jobs or paces them.
func (o *RetryOptions) followed() bool { return o.Follow || o.Canary > 0 || o.rate > 0 }

// NewCmdRetry builds `jobtriage retry`.
func NewCmdRetry(f *Factory, runF func(context.Context, *RetryOptions) error) *cobra.Command {
	opts := &RetryOptions{IO: f.IO, Now: f.Now, Audit: func(e auditEntry) error { return audit(f, e) }}
	cmd := &cobra.Command{
		Use:   "retry [<id>... | all]",
		Short: "Put failed jobs back on their queues",
		Long: heredoc.Doc(`
			Re-queue failed jobs through their own queue connection, as Laravel pushes
			them, on the job's recorded queue, with its uuid and payload bytes kept (only
			"attempts" is reset). Oldest first. A database connection's jobs go into its
			jobs table: each batch's insert and delete from failed_jobs commit together,
			and rows are locked (SKIP LOCKED on PostgreSQL, a waiting FOR UPDATE on
			MySQL/MariaDB, the write lock on SQLite). A Redis connection's jobs are pushed
			as RedisQueue does, marked by uuid so a re-run never pushes twice, and deleted
			from failed_jobs after. A crash or a second operator never loses or doubles a job.

			Skipped, with a reason, and left in failed_jobs: jobs of a connection
			jobtriage cannot write to (sqs, sync, unknown; the php artisan queue:retry
			command to use is printed), jobs whose retryUntil has passed (they would fail
			at once; --retry-until gives them a new deadline), payloads a worker cannot
			run, rows a jobs table cannot hold.

			Select by ids (uuid or row id), "all", --range (row ids), or filters.
			Bulk retries ask first on a terminal and need --yes otherwise.
		`),
		Example: examples(heredoc.Doc(`
			  $ jobtriage retry 4e44390e-5a8c-4b8f-9d3e-1f2a3b4c5d6e
			  $ jobtriage retry all --dry-run
			  $ jobtriage retry --queue emails --since 1h --yes
			  $ jobtriage retry --signature 3fa9c2d1e0 --canary 3 --follow   # 3 first, the rest if they run
			  $ jobtriage retry all --follow --rate 50/s --stop-after-failures 20
			  $ jobtriage retry --class ImportFeed --retry-until 30m
			  $ jobtriage retry --range 1-5 --range 9-9
		`)),
		RunE: func(c *cobra.Command, args []string) error {
			f.Conn.DatabaseConnections = opts.DBConns // read when the service is built
			opts.Service = f.Service
			opts.commandLine = append([]string{"retry"}, args...)
			opts.All = len(args) == 1 && args[0] == "all"
			filtered := !opts.Filter.empty() || len(opts.Ranges) > 0
			switch {
			case !opts.All && slices.Contains(args, "all"):
				return FlagErrorf(`"all" cannot be mixed with ids`)
			case !opts.All && len(args) > 0 && filtered:
				return FlagErrorf("give ids or filters, not both")
			case opts.All && filtered:
				return FlagErrorf(`"all" takes no filters; use the filters alone`)
			case len(args) == 0 && !filtered:
				return FlagErrorf(`name ids, "all", --range or a filter (see --help)`)
			case opts.RetryUntil < 0:
				return FlagErrorf("--retry-until must be a positive duration")
			}
			var err error
			if !opts.All {
				opts.IDs = args
				opts.refs, err = parseRefs(args)
			}
			if len(opts.Ranges) > 0 {
				// Row ids, which every failed_jobs table has, as `retry 7`
				// takes them on a table that addresses jobs by uuid.
				opts.refs, err = expandRanges(opts.Ranges)
			}
			if err != nil {
				return err // before the database is opened
			}
			if err := opts.checkFollowFlags(c); err != nil {
				return err
			}
			return runOr(c.Context(), opts, runF, retryRun)
		},
	}
	opts.Filter.register(cmd)
	fl := cmd.Flags()
	fl.StringArrayVar(&opts.Ranges, "range", nil, "row id `range` like 1-5 (repeatable)")
	countVarP(fl, &opts.Limit, "limit", "L", 0, 0, "retry only the `N` oldest matches (a canary before the rest)")
	nameVar(fl, &opts.ToQueue, "to-queue", "emails", "push to this `queue` instead of each job's own")
	durationVar(fl, &opts.RetryUntil, "retry-until", 0, "give jobs whose retryUntil has passed a new deadline `DURATION` from now (e.g. 30m)")
	fl.Var(nameList{&opts.DBConns}, "database-connection", "queue connection `names` that use the database driver, outside an app profile (default database; refused for a connection the app gives another driver)")
	writeFlags(cmd, &opts.DryRun, "show what would be retried and skipped; change nothing", &opts.Yes, &opts.JSON)
	fl.BoolVar(&opts.Follow, "follow", false, "follow the re-queued jobs until each ran (done) or failed again; exit 9 if any failed again, 10 on timeout")
	durationVar(fl, &opts.FollowTimeout, "follow-timeout", DefaultFollowTimeout, "how long jobs may stay unsettled after the last push (with --follow or --canary)")
	countVar(fl, &opts.Canary, "canary", 0, 1, "retry the `N` oldest first, follow them, and retry the rest only if --canary-success of them succeeded")
	fl.StringVar(&opts.CanarySuccess, "canary-success", "100%", "the `share` of canaries that must succeed for the rest to be retried (e.g. 80%)")
	fl.StringVar(&opts.Rate, "rate", "", "push at most `N/s` jobs (also N/m, N/h), in small steps")
	countVar(fl, &opts.StopAfterFailures, "stop-after-failures", 0, 1, "with --follow: stop pushing once `N` re-queued jobs have failed again")
	return cmd
}

// checkFollowFlags validates the follow-through flags.
func (o *RetryOptions) checkFollowFlags(c *cobra.Command) error {
	if o.StopAfterFailures > 0 && !o.Follow {
		return FlagErrorf("--stop-after-failures counts jobs that failed again, which needs --follow")
	}
	if c.Flags().Changed("canary-success") && o.Canary == 0 {
		return FlagErrorf("--canary-success needs --canary N")
	}
	if c.Flags().Changed("follow-timeout") && !o.Follow && o.Canary == 0 {
		return FlagErrorf("--follow-timeout needs --follow or --canary")
	}
	if o.FollowTimeout <= 0 {
		return FlagErrorf("--follow-timeout must be a positive duration")
	}
	share, err := follow.ParseShare(o.CanarySuccess)
	if err != nil {
		return FlagErrorf("--canary-success: %v", err)
	}
	o.canaryShare = share
	if o.Rate != "" {
		if o.rate, err = follow.ParseRate(o.Rate); err != nil {
			return FlagErrorf("%v", err)
		}
	}
	return nil
}

var rangeRE = regexp.MustCompile(`^([0-9]+)-([0-9]+)$`)

// maxRangeIDs bounds --range expansion: a typo like 1-99999999 must not
// build a hundred-million-element list.
const maxRangeIDs = 100000

func expandRanges(ranges []string) ([]triage.Ref, error) {
	var refs []triage.Ref
	for _, r := range ranges {
		m := rangeRE.FindStringSubmatch(strings.TrimSpace(r))
		if m == nil {
			return nil, FlagErrorf("--range %q: want FROM-TO with integer ids, like 1-5", r)
		}
		from, _ := strconv.ParseInt(m[1], 10, 64)
		to, _ := strconv.ParseInt(m[2], 10, 64)
		if from < 1 || to < from {
			return nil, FlagErrorf("--range %q: FROM must be at least 1 and not above TO", r)
		}
		if to-from+1+int64(len(refs)) > maxRangeIDs {
			return nil, FlagErrorf("--range covers more than %d ids; use filters for large selections", maxRangeIDs)
		}
		for id := from; id <= to; id++ {
			refs = append(refs, triage.Ref{ID: id})
		}
	}
	return refs, nil
}

// parseRefs reads job ids as show, retry and forget take them.
func parseRefs(ids []string) ([]triage.Ref, error) {
	var refs []triage.Ref
	for _, id := range ids {
		r, err := triage.ParseRef(id)
		if err != nil {
			return nil, err
		}
		refs = append(refs, r)
	}
	return refs, nil
}

func retryRun(ctx context.Context, opts *RetryOptions) error {
	svc, q, err := opts.Filter.open(ctx, opts.Service, opts.Now())
	if err != nil {
		return err
	}
	p := triage.RetryParams{Query: q, Refs: opts.refs, All: opts.All, Limit: opts.Limit,
		ToQueue: opts.ToQueue, RetryUntil: opts.RetryUntil, ResolveWait: opts.resolveWait}
	bulk := len(p.Refs) == 0
	ids, skips := newSpool(), newSkipReport()
	defer ids.Close()
	defer skips.all.Close()
	// A canary run and the run of the rest walk the same selection: a
	// skip is reported once.
	skippedIDs := map[string]bool{}
	collect := func(id []string, sk []triage.Skip) error {
		if err := ids.AddIDs(id); err != nil {
			return err
		}
		if opts.Canary > 0 {
			fresh := sk[:0:0]
			for _, k := range sk {
				if !skippedIDs[k.ID] {
					skippedIDs[k.ID] = true
					fresh = append(fresh, k)
				}
			}
			sk = fresh
		}
		return skips.Add(sk)
	}
	var total int64 // what the dry run counted; 0 when there was none
	if opts.DryRun || (bulk && !opts.Yes) {
		// A dry run first: it is what --dry-run prints, and the count the
		// confirmation states.
		p.DryRun = true
		preview, err := retryDriver{collect: collect}.run(ctx, svc, p)
		if err != nil {
			return err
		}
		for _, b := range svc.UnrecordedTargets(preview.Targets) {
			fmt.Fprintf(opts.IO.ErrOut, "warning: %s keeps no push ledger: a crash (SIGKILL) between a push and its delete can queue a job twice; --jobs-ledger records pushes there\n", sanitize.Line(b))
		}
		if opts.DryRun || preview.Retried == 0 {
			return reportRetry(opts, svc, preview, ids, skips, dryRunPlan(opts, preview.Retried))
		}
		reportSkips(opts.IO, skips, "would skip")
		dryRunPlan(opts, preview.Retried).print(opts.IO.ErrOut)
		question := fmt.Sprintf("Retry %s on %s%s?", countNoun(preview.Retried, "failed job"), countNoun(len(preview.ByQueue), "queue"), onTarget(svc))
		if err := confirm(opts.IO, opts.Yes, question); err != nil {
			return err
		}
		p.DryRun = false
		// The real run records its own.
		if err := ids.reset(); err != nil {
			return err
		}
		if err := skips.reset(); err != nil {
			return err
		}
		total = int64(preview.Retried)
	}
	if opts.followed() && total == 0 {
		// The count the follow-through's progress, ETA and "not pushed" use.
		pp := p
		pp.DryRun = true
		preview, err := svc.Retry(ctx, pp)
		if err != nil {
			return err
		}
		total = int64(preview.Retried)
	}
	var res triage.RetryResult
	var fr *followReport
	err = audited(opts.Audit, auditEntry{Command: "retry", Args: opts.commandLine, Filter: q}, func(e *auditEntry) (err error) {
		if opts.followed() {
			res, fr, err = retryFollowed(ctx, opts, svc, p, retryDriver{collect: collect}, int(total))
		} else {
			pr := newMeter(opts.IO, "retried", total)
			res, err = retryDriver{collect: collect, progress: func(n int) { pr.update(int64(n)) }}.run(ctx, svc, p)
			pr.done()
		}
		e.Count, e.IDs, e.spooled, e.Skipped = int64(res.Retried), res.IDs, ids, skips.Len()+len(res.Skipped)
		return err
	})
	if err != nil {
		if res.Retried > 0 {
			fmt.Fprintf(opts.IO.ErrOut, "%s retried before the error (committed batches stay retried)\n", countNoun(res.Retried, "job"))
		}
		return err
	}
	warnPausedQueues(ctx, opts.IO, svc, res.Targets)
	return reportRetry(opts, svc, res, ids, skips, fr)
}

// retryDriver drives a retry run batch by batch: before each batch it
// asks stop (a breaker) and waits on pace (a pacer); each committed batch's
// ids and skips go to collect, its jobs to pushed (a follower), and the
// count so far to progress. Every field is optional.
type retryDriver struct {
	collect  func(ids []string, skips []triage.Skip) error
	pushed   func([]triage.Pushed)
	progress func(retried int)
	pace     func(ctx context.Context, retried int) error
	stop     func() bool
}

func (d retryDriver) run(ctx context.Context, svc *triage.Service, p triage.RetryParams) (triage.RetryResult, error) {
	run := svc.StartRetry(ctx, p)
	defer run.Close()
	for (d.stop == nil || !d.stop()) && run.More() {
		if d.pace != nil {
			if err := d.pace(ctx, run.Result().Retried); err != nil {
				return run.Result(), err
			}
		}
		if !run.Next(ctx) {
			break
		}
		b := run.Batch()
		if d.collect != nil {
			if err := d.collect(b.IDs, b.Skips); err != nil {
				return run.Result(), err
			}
		}
		if d.pushed != nil && len(b.Pushed) > 0 {
			d.pushed(b.Pushed)
		}
		if d.progress != nil {
			d.progress(b.Retried)
		}
	}
	return run.Result(), run.Err()
}

// checkDatabaseConnections refuses --database-connection for a connection
// the app profile says is not a database queue: its worker never reads the
// jobs table, so jobs written there would be stranded.
func checkDatabaseConnections(routes map[string]triage.Route, names []string) error {
	for _, n := range nonEmpty(names) {
		r, ok := routes[n]
		if ok && r.Driver != triage.DriverDatabase {
			return FlagErrorf("--database-connection %s: the app's config/queue.php gives connection %s the %s driver; its workers never read a jobs table, so jobs written there would be stranded",
				sanitize.Line(n), sanitize.Line(n), sanitize.Line(r.Driver))
		}
	}
	return nil
}

// reportSkips prints skipped jobs grouped by reason, a few ids each.
func reportSkips(io *IOStreams, r *skipReport, verb string) {
	for _, k := range r.order {
		g := r.groups[k]
		ids := sanitize.Line(strings.Join(g.ids, ", "))
		if g.n > len(g.ids) {
			ids += fmt.Sprintf(" and %d more (--json lists all)", g.n-len(g.ids))
		}
		fmt.Fprintf(io.ErrOut, "%s %s: %s\n  %s\n", verb, countNoun(g.n, "job"), sanitize.Line(g.reason), ids)
		if len(g.artisan) > 0 {
			cmd := triage.ArtisanRetry(g.artisan)
			if g.n > len(g.artisan) {
				cmd += fmt.Sprintf("   # and %d more: --json lists them", g.n-len(g.artisan))
			}
			fmt.Fprintf(io.ErrOut, "  run instead: %s\n", sanitize.Line(cmd))
		}
	}
}

func countsLine(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		// Queue names and classes come from the database: made one safe line.
		parts = append(parts, sanitize.Line(k)+" "+humanize.Comma(int64(m[k])))
	}
	return strings.Join(parts, ", ")
}

// reportRetry prints the result and picks the exit code: 4 when every id
// was unknown, 7 when something was skipped or not found.
func reportRetry(opts *RetryOptions, svc *triage.Service, res triage.RetryResult, ids *spool, skips *skipReport, fr *followReport) error {
	io := opts.IO
	res.Skipped = []triage.Skip{} // each batch's went to skips
	skipped := skips.Len()
	if len(res.NotFound) > 0 && res.Retried == 0 && skipped == 0 && !opts.JSON {
		return notFoundError(res.NotFound)
	}
	if opts.Filter.Signature != "" && res.Retried == 0 && skipped == 0 && !opts.JSON {
		return opts.Filter.errNoSuchSignature() // the error alone, not "Would retry 0 jobs" first
	}
	if opts.JSON {
		doc := newRetryDoc(res)
		doc.Follow = fr.doc()
		if fr != nil {
			doc.Plan = fr.Plan
		}
		if err := writeJSONSpliced(io.Out, doc, map[string]*spool{"ids": ids, "skipped": skips.all}); err != nil {
			return err
		}
	} else {
		verb, skipVerb := "Retried", "skipped"
		if res.DryRun {
			verb, skipVerb = "Would retry", "would skip"
		}
		reportSkips(io, skips, skipVerb)
		printNotFound(io.ErrOut, res.NotFound)
		for _, n := range res.FailsOver {
			fmt.Fprintln(io.ErrOut, "note: "+sanitize.Line(n))
		}
		if res.DryRun && len(res.ByClass) > 0 {
			fmt.Fprintf(io.Out, "by queue: %s\nby class: %s\n", countsLine(res.ByQueue), countsLine(res.ByClass))
		}
		line := verb + " " + countNoun(res.Retried, "job")
		if len(res.ByQueue) > 0 {
			line += " (" + countsLine(res.ByQueue) + ")"
		}
		if skipped > 0 {
			line += fmt.Sprintf("; %s %d", skipVerb, skipped)
		}
		if n := len(res.NotFound); n > 0 {
			line += fmt.Sprintf("; %d not found", n)
		}
		if n := len(res.AlreadyQueued); n > 0 {
			line += fmt.Sprintf("; %d already queued (not pushed again, only deleted from failed_jobs)", n)
		}
		fmt.Fprintln(io.Out, line+onTarget(svc)+".")
		if n := res.DeleteWhenMissingModels; res.DryRun && n > 0 {
			have := " have"
			if n == 1 {
				have = " has"
			}
			fmt.Fprintln(io.Out, countNoun(n, "job")+have+" deleteWhenMissingModels: on Laravel 13 a worker deletes such a job whose model is gone, with no new failed_jobs row.")
		}
		fr.print(io.Out)
	}
	if code, ok := fr.exitCode(); ok {
		return silentExit(code)
	}
	switch {
	case opts.Filter.Signature != "" && res.Retried == 0 && skipped == 0:
		return opts.Filter.errNoSuchSignature()
	case len(res.NotFound) > 0 && res.Retried == 0 && skipped == 0:
		return silentExit(ExitNotFound)
	case len(res.NotFound) > 0 || skipped > 0:
		return silentExit(ExitPartial)
	}
	return nil
}

// notFoundError is the one-line error for ids that match no failed job.
func notFoundError(ids []string) error {
	list := strings.Join(ids[:min(3, len(ids))], ", ")
	if len(ids) > 3 {
		list += fmt.Sprintf(" and %d more", len(ids)-3)
	}
	return fmt.Errorf("%w: no failed job with id %s", triage.ErrNotFound, list)
}
