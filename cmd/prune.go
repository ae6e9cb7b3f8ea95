package cmd

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"strconv"
	"time"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/jobtriage/jobtriage/triage"
)

// PruneOptions are the inputs of `jobtriage prune` and `jobtriage flush`.
type PruneOptions struct {
	IO      *IOStreams
	Service func(context.Context) (*triage.Service, error)
	Now     func() time.Time
	Audit   func(auditEntry) error

	Flush    bool
	Hours    float64
	HoursSet bool
	DryRun   bool
	Yes      bool
	JSON     bool
	Archive  ArchiveFlag
}

// NewCmdPrune builds `jobtriage prune --hours N`.
func NewCmdPrune(f *Factory, runF func(context.Context, *PruneOptions) error) *cobra.Command {
	return newCmdPruneFlush(f, runF, false)
}

// NewCmdFlush builds `jobtriage flush [--hours N]`.
func NewCmdFlush(f *Factory, runF func(context.Context, *PruneOptions) error) *cobra.Command {
	return newCmdPruneFlush(f, runF, true)
}

// archiveHelp is --archive's paragraph in the help of prune, flush and forget.
const archiveHelp = `
With --archive PATH every row is first appended whole to PATH (NDJSON, gzip
when PATH ends in .gz, - for stdout) and fsynced; only then is its batch
deleted. jobtriage restore PATH puts the rows back.
`

func newCmdPruneFlush(f *Factory, runF func(context.Context, *PruneOptions) error, flush bool) *cobra.Command {
	opts := &PruneOptions{IO: f.IO, Now: f.Now, Flush: flush, Audit: func(e auditEntry) error { return audit(f, e) }}
	cmd := &cobra.Command{
		Use:   "prune",
		Short: "Delete failed jobs older than --hours (retention, for cron)",
		Long: heredoc.Doc(`
			Delete the failed jobs that failed more than --hours ago (default 24, as
			php artisan queue:prune-failed: failed_at < now − hours, in the app
			timezone). failed_jobs has no index on failed_at, so instead of scanning
			the table once per chunk it walks the primary key once, in short batches,
			whatever the order of failed_at. From cron, pass --yes.
		`) + archiveHelp,
		Example: "  $ jobtriage prune --hours 168 --yes\n  $ jobtriage prune --hours 48 --dry-run\n  $ jobtriage prune --hours 168 --archive failed-$(date +%F).ndjson.gz --yes",
		Args:    noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			opts.Service = f.Service
			opts.HoursSet = c.Flags().Changed("hours")
			switch {
			case !flush && opts.Hours <= 0:
				return FlagErrorf("--hours must be greater than 0 (got %s); to delete everything use flush", strconv.FormatFloat(opts.Hours, 'f', -1, 64))
			case flush && opts.HoursSet && opts.Hours <= 0:
				return FlagErrorf("--hours must be greater than 0 (got %s); without --hours flush deletes everything", strconv.FormatFloat(opts.Hours, 'f', -1, 64))
			}
			if err := opts.Archive.check(opts.JSON); err != nil {
				return err
			}
			return runOr(c.Context(), opts, runF, pruneRun)
		},
	}
	if flush {
		cmd.Use, cmd.Short = "flush", "Delete every failed job (or those at least --hours old)"
		cmd.Long = heredoc.Doc(`
			Delete all failed jobs, as php artisan queue:flush; with --hours N only those
			that failed at or before now − N hours (queue:flush --hours, <=). Deletes run
			in short batches. It asks first on a terminal and needs --yes otherwise.
		`) + archiveHelp
		cmd.Example = "  $ jobtriage flush --yes\n  $ jobtriage flush --hours 72\n  $ jobtriage flush --archive failed_jobs.ndjson.gz --yes"
		hoursVar(cmd.Flags(), &opts.Hours, "hours", 0, "only jobs that failed at least `N` hours ago")
	} else {
		hoursVar(cmd.Flags(), &opts.Hours, "hours", 24, "keep the failures of the last `N` hours")
	}
	writeFlags(cmd, &opts.DryRun, "count what would be deleted; change nothing", &opts.Yes, &opts.JSON)
	opts.Archive.register(cmd, true)
	return cmd
}

// writeFlags registers --dry-run (with its usage), --yes when yes is not nil,
// and --json, the flags of the commands that change jobs.
func writeFlags(cmd *cobra.Command, dryRun *bool, dryUsage string, yes, jsonOut *bool) {
	cmd.Flags().BoolVar(dryRun, "dry-run", false, dryUsage)
	if yes != nil {
		cmd.Flags().BoolVarP(yes, "yes", "y", false, "do not ask for confirmation")
	}
	cmd.Flags().BoolVar(jsonOut, "json", false, "print the result as JSON")
}

// pruneJSON is prune --json and flush --json.
type pruneJSON struct {
	SchemaVersion int   `json:"schema_version"`
	DryRun        bool  `json:"dry_run"`
	Deleted       int64 `json:"deleted"`
	// Before is the bound (prune: failed_at < before; flush --hours: <=);
	// null for a flush of everything.
	Before jsonTime `json:"before"`
	// Archive is where the rows went first (--archive); null without it.
	Archive *archiveDoc `json:"archive"`
	// Skipped are the rows failed_jobs refused to delete, kept.
	Skipped []triage.Skip `json:"skipped"`
}

func pruneRun(ctx context.Context, opts *PruneOptions) error {
	svc, err := opts.Service(ctx)
	if err != nil {
		return err
	}
	name := "prune"
	if opts.Flush {
		name = "flush"
	}
	var before time.Time
	if opts.Hours > 0 {
		before = opts.Now().Add(-time.Duration(opts.Hours * float64(time.Hour)))
	}
	// scope follows a count of failed jobs: "221 failed jobs from before …".
	scope := ""
	what := "every failed job"
	if !before.IsZero() {
		scope = " from before " + before.In(cmp.Or(svc.Location, time.UTC)).Format("2006-01-02 15:04:05 MST")
		what = "the failed jobs" + scope
	}
	skips := newSkipReport()
	defer skips.all.Close()
	var total int64 // what the count before the confirmation found; 0 when there was none
	if opts.DryRun || !opts.Yes {
		// Counted first, on a terminal or not: a confirmation, and a
		// refusal without --yes, say how many jobs they are about.
		var n int64
		switch {
		case !opts.Flush:
			// The same primary-key walk the prune itself does.
			n, err = triage.PruneTotal(svc.Prune(ctx, opts.Hours, true, nil))
		default:
			n, err = svc.Store.Count(ctx, triage.Filter{Until: before}) // <=, as flush --hours; zero: all
		}
		if err != nil {
			return err
		}
		if opts.DryRun || n == 0 {
			return reportPrune(opts, svc, pruneJSON{DryRun: opts.DryRun, Deleted: n, Before: jsonTime(before), Archive: opts.Archive.doc(nil, n)}, scope, skips)
		}
		if err := confirm(opts.IO, false, fmt.Sprintf("%s %s%s%s?", archiveVerb(opts.Archive), countNoun(n, "failed job"), scope, onTarget(svc))); err != nil {
			return err
		}
		total = n
	} else if err := confirm(opts.IO, opts.Yes, archiveVerb(opts.Archive)+" "+what+onTarget(svc)+"?"); err != nil {
		return err
	}
	arch, archiver, err := opts.Archive.open(opts.IO, opts.Now)
	if err != nil {
		return err
	}
	defer arch.Close()
	pr := newMeter(opts.IO, "deleted", total)
	auditArgs := append([]string{name, "--hours", strconv.FormatFloat(opts.Hours, 'f', -1, 64)}, opts.Archive.args()...)
	var n int64
	err = audited(opts.Audit, auditEntry{Command: name, Args: auditArgs}, func(e *auditEntry) (err error) {
		var run iter.Seq2[triage.PruneBatch, error]
		if opts.Flush {
			run = svc.Flush(ctx, opts.Hours, archiver)
		} else {
			run = svc.Prune(ctx, opts.Hours, false, archiver)
		}
		for b, berr := range run {
			if n, err = b.Total, cmp.Or(berr, skips.Add(triage.KeptSkips(b.Kept))); err != nil {
				break
			}
			pr.update(n)
		}
		pr.done()
		e.Count, e.Skipped = n, skips.Len()
		return err
	})
	if err != nil {
		if n > 0 {
			fmt.Fprintf(opts.IO.ErrOut, "%s deleted before the error%s\n", countNoun(n, "failed job"), opts.Archive.doc(arch, 0).phrase(false))
		}
		return err
	}
	if err := arch.Close(); err != nil {
		return err
	}
	return reportPrune(opts, svc, pruneJSON{Deleted: n, Before: jsonTime(before), Archive: opts.Archive.doc(arch, 0)}, scope, skips)
}

// archiveVerb is what a confirmation asks to do.
func archiveVerb(a ArchiveFlag) string {
	if a.set() {
		return "Archive to " + a.Path + " and delete"
	}
	return "Delete"
}

// reportPrune prints "Deleted 221 failed jobs from before … on …." (scope
// "" for everything) after the rows kept (exit 7).
func reportPrune(opts *PruneOptions, svc *triage.Service, r pruneJSON, scope string, skips *skipReport) error {
	var err error
	if opts.JSON {
		r.SchemaVersion, r.Skipped = jsonSchemaVersion, []triage.Skip{}
		err = writeJSONSpliced(opts.IO.Out, r, map[string]*spool{"skipped": skips.all})
	} else {
		verb, kept := "Deleted", ""
		if r.DryRun {
			verb = "Would delete"
		}
		if n := skips.Len(); n > 0 {
			kept = fmt.Sprintf("; kept %d", n)
		}
		reportSkips(opts.IO, skips, "kept")
		_, err = fmt.Fprintf(opts.Archive.out(opts.IO), "%s %s%s%s%s%s.\n", verb, countNoun(r.Deleted, "failed job"), scope, kept, onTarget(svc), r.Archive.phrase(r.DryRun))
	}
	if err == nil && skips.Len() > 0 {
		return silentExit(ExitPartial)
	}
	return err
}
