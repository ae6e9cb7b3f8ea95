package cmd

import (
	"context"
	"errors"
	"time"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/archive"
	"github.com/jobtriage/jobtriage/tui"
)

// TUIOptions are the inputs of `jobtriage tui`.
type TUIOptions struct {
	IO *IOStreams
	// Audit records each retry and forget (auditedActions).
	Audit   func(auditEntry) error
	Service func(context.Context) (*triage.Service, error)
	Now     func() time.Time

	ReadOnly  bool
	Threshold int
	Window    time.Duration
	Refresh   time.Duration
	// TrendWindow and NewSince are failed --group's trend window and "new" bound.
	TrendWindow string
	NewSince    string
	DBConns     []string
	// Archive is --archive: forgets append each row to it first.
	Archive ArchiveFlag
}

// NewCmdTUI builds `jobtriage tui`.
func NewCmdTUI(f *Factory, runF func(context.Context, *TUIOptions) error) *cobra.Command {
	opts := &TUIOptions{IO: f.IO, Now: f.Now, Audit: func(e auditEntry) error { return audit(f, e) }}
	cmd := &cobra.Command{
		Use:   "tui",
		Short: "Browse failures by signature and act on them in a terminal UI",
		Long: heredoc.Doc(`
			A keyboard-first terminal UI. It opens on the error signatures (count, last
			and first seen, class, top exception, queues) with the failures of the last
			--window against --threshold in the header; Enter drills into a signature's
			jobs and then into one job's detail; / filters (esc clears it); s sorts by
			count, last seen, first seen or trend (the rise from the --trend-window
			before to the last one, drawn as a sparkline); a * marks signatures first
			seen since --new-since (default: within the last --trend-window); space
			marks rows; r retries and f forgets the
			marked rows, or the one under the cursor, after a confirmation that states
			the count (a retry's shows a dry run: what would be skipped, and why); y
			copies an id (OSC 52); ? shows every key. Counts stream in while a large
			table is scanned, and the list refreshes every --refresh. --read-only hides
			the actions. With --archive every row a forget deletes is first appended
			whole to the archive and fsynced, as forget --archive does (restore puts
			it back). Each retry and forget writes its intent and outcome lines to
			--audit-log, as the commands do.

			It needs a terminal: for scripts use failed, failed --group and show.
		`),
		Example: "  $ jobtriage tui\n  $ jobtriage tui --archive /var/backups/failed-jobs.ndjson.gz\n  $ jobtriage tui --read-only --dsn postgres://readonly@db/app",
		Args:    noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			f.Conn.DatabaseConnections = opts.DBConns // read when the service is built
			opts.Service = f.Service
			if !opts.IO.IsStdoutTTY() || !opts.IO.stdinTTY {
				return FlagErrorf("tui needs a terminal; in scripts use `jobtriage failed --group`, `jobtriage failed --json` or `jobtriage show <id>`")
			}
			if opts.Threshold < 0 || opts.Window < 0 || opts.Refresh < 0 {
				return FlagErrorf("--threshold, --window and --refresh must not be negative")
			}
			switch {
			case opts.Archive.Path == archive.Stdout:
				return FlagErrorf("--archive -: the terminal UI draws on stdout; give the archive a file")
			case opts.Archive.set() && opts.ReadOnly:
				return FlagErrorf("--archive archives what a forget deletes, and --read-only forgets nothing: drop one of them")
			}
			return runOr(c.Context(), opts, runF, tuiRun)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&opts.ReadOnly, "read-only", false, "browse only: no retry or forget")
	countVar(fl, &opts.Threshold, "threshold", 10, 0, "alert threshold the header's window count is shown against")
	durationVar(fl, &opts.Window, "window", time.Minute, "the failure-count window shown in the header")
	trendWindowVar(fl, &opts.TrendWindow, "trend-window", "1h", "the signatures' trend window (as failed --group --window)")
	timeVar(fl, &opts.NewSince, "new-since", "mark signatures first seen at or after `WHEN` as new (a duration back or a time; default: within --trend-window)")
	durationVar(fl, &opts.Refresh, "refresh", 10*time.Second, "re-read the database this often (0: never)")
	fl.Var(nameList{&opts.DBConns}, "database-connection", "queue connection `names` that use the database driver (default database)")
	opts.Archive.register(cmd, false)
	return cmd
}

// tuiActions is what the UI may do to jobs: nothing with --read-only,
// else the service's retry and forget, each recorded in the audit log.
func tuiActions(svc *triage.Service, opts *TUIOptions) tui.Actions {
	if opts.ReadOnly {
		return nil
	}
	return auditedActions{inner: tui.ServiceActions{Service: svc}, audit: opts.Audit,
		args: append([]string{"tui"}, opts.Archive.args()...), newID: newAuditRunID}
}

func tuiRun(ctx context.Context, opts *TUIOptions) error {
	svc, err := opts.Service(ctx)
	if err != nil {
		return err
	}
	trend, err := parseTrendWindow("--trend-window", opts.TrendWindow)
	if err != nil {
		return err
	}
	newSince, err := parseTimeBound(opts.NewSince, opts.Now(), svc.Location)
	if err != nil {
		return FlagErrorf("--new-since: %v", err)
	}
	actions := tuiActions(svc, opts)
	arch, archiveRows, err := opts.Archive.open(opts.IO, opts.Now)
	if err != nil {
		return err
	}
	defer arch.Close()
	err = tui.Run(ctx, svc, actions, tui.Options{
		Archive:     archiveRows,
		ArchivePath: opts.Archive.Path,
		ReadOnly:    opts.ReadOnly,
		Connection:  targetText(svc), // the context first, as the prompts name it
		Threshold:   opts.Threshold,
		Window:      opts.Window,
		Refresh:     opts.Refresh,
		TrendWindow: trend,
		NewSince:    newSince,
		NoColor:     !opts.IO.ColorEnabled(),
		Now:         opts.Now,
	}, opts.IO.In, opts.IO.Out)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
