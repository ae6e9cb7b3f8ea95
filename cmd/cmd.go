// Package cmd is jobtriage's command line: flags, IO streams, output formats
// and exit codes. It never writes SQL; it wires a triage.Store lazily.
package cmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobtriage/jobtriage/cmd/internal/earlysignal"
	"github.com/jobtriage/jobtriage/internal/buildinfo"
	"github.com/jobtriage/jobtriage/triage/redact"
	"github.com/jobtriage/jobtriage/triage/redisqueue"
	"github.com/jobtriage/jobtriage/triage/sanitize"
)

// ExitCode is the process exit status; README documents every value.
type ExitCode int

// interruptGrace is how long a command has, after the first SIGINT or
// SIGTERM, to end by itself: cancel its statement, roll back, write its audit
// outcome. Past it (a frozen server, a blocked read) the process exits 130
// anyway; the server rolls back the closed connection's transaction, so every
// job stays exactly once in one table.
const interruptGrace = 500 * time.Millisecond

// Main runs the command line with the process's arguments and streams.
// SIGINT, SIGTERM and SIGHUP end it with exit 130: at once at a [y/N] prompt
// (nothing done yet) or on a second signal, within interruptGrace otherwise.
func Main() ExitCode {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := earlysignal.C // taken since start-up, never released
	f := NewFactory()
	// go-redis's own lines (a pool that could not dial repeats the error
	// jobtriage reports) are notes for --verbose, never bare stderr.
	redisqueue.RouteLog(func(msg string) {
		if f.IO.Verbose() {
			fmt.Fprintln(f.IO.ErrOut, "note: "+sanitize.Line(msg))
		}
	})
	go func() {
		<-sigs
		cancel()
		prompting := atPrompt.Load()
		if !prompting {
			select {
			case <-sigs:
			case <-time.After(interruptGrace):
			}
		}
		exitInterrupted(f.IO.ErrOut, prompting)
	}()
	return Run(ctx, f, os.Args[1:])
}

// exitInterrupted ends a command that did not end by itself; deferred
// clean-ups do not run, so its temporary files are removed here.
func exitInterrupted(errOut io.Writer, prompting bool) {
	removeSpools()
	if prompting {
		fmt.Fprintln(errOut) // end the question's line
	}
	fmt.Fprintln(errOut, "jobtriage: interrupted")
	os.Exit(int(ExitInterrupted))
}

// Run executes one command line and returns its exit code; it prints an error once, as one line.
func Run(ctx context.Context, f *Factory, args []string) ExitCode {
	defer f.Close()
	f.Args = args
	f.file = nil // the configuration file is read once per command line
	root := NewCmdRoot(f)
	root.SetArgs(args)
	root.SetIn(f.IO.In)
	root.SetErr(f.IO.ErrOut) // NewCmdRoot set the output
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitOK
	}
	code := exitCodeFor(err)
	interrupted := ctx.Err() != nil || errors.Is(err, context.Canceled)
	if interrupted {
		// However the cancellation surfaced (context.Canceled, the server's
		// "canceling statement", a closed connection), it exits 130.
		code = ExitInterrupted
	}
	if msg := err.Error(); msg != "" || interrupted {
		if interrupted {
			msg = "interrupted"
		}
		fmt.Fprintln(f.IO.ErrOut, "jobtriage: "+sanitize.Line(errorLine(msg)))
	}
	var fe *FlagError
	if !interrupted && (errors.As(err, &fe) || isCobraUsageError(err)) {
		fmt.Fprintf(f.IO.ErrOut, "Run '%s --help' for usage.\n", cmp.Or(cmd, root).CommandPath())
		code = ExitUsage
	}
	return code
}

// runOr runs a command's options through runF (tests), else through run.
func runOr[O any](ctx context.Context, opts *O, runF, run func(context.Context, *O) error) error {
	if runF != nil {
		return runF(ctx, opts)
	}
	return run(ctx, opts)
}

// minStatementTimeout is the smallest --statement-timeout: PostgreSQL and
// MySQL count it in whole milliseconds, and 0 ms switches the limit off.
const minStatementTimeout = time.Millisecond

// checkStatementTimeout refuses a --statement-timeout sent as 0 ms, which means "no limit".
func checkStatementTimeout(c *cobra.Command, d time.Duration) error {
	if fl := c.Flags().Lookup("statement-timeout"); fl != nil && fl.Changed && d < minStatementTimeout {
		return FlagErrorf("--statement-timeout %s: must be at least %s (0 or less would switch the server's limit off)", d, minStatementTimeout)
	}
	return nil
}

// destructiveCommands change jobs and write the audit log (tui unless --read-only).
var destructiveCommands = map[string]bool{"retry": true, "forget": true, "prune": true, "flush": true, "restore": true, "tui": true,
	"pause": true, "resume": true}

// writesJobs reports whether c may change jobs: a destructive command, not a --dry-run.
func writesJobs(c *cobra.Command) bool {
	if !destructiveCommands[c.Name()] || c.Parent() == nil || c.Parent().Parent() != nil {
		return false
	}
	for _, name := range []string{"dry-run", "read-only"} {
		if fl := c.Flags().Lookup(name); fl != nil && fl.Value.String() == "true" {
			return false
		}
	}
	return true
}

// isCobraUsageError recognises cobra's own argument and flag errors, which are not typed.
func isCobraUsageError(err error) bool {
	var ee *exitError
	if errors.As(err, &ee) {
		return false
	}
	return exitCodeFor(err) == ExitError && cobraUsageRE.MatchString(err.Error())
}

// NewCmdRoot builds the command tree. It reads no configuration itself.
func NewCmdRoot(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "jobtriage <command>",
		Short: "Triage a Laravel app's failed queue jobs directly in its database",
		Long: `jobtriage lists, groups, shows, retries and forgets the failed jobs of a Laravel
application, and monitors its queues, by reading the app's own jobs and failed_jobs
tables on PostgreSQL, MySQL/MariaDB or SQLite. No PHP, no migration, no extra table.

Run it anywhere inside a Laravel app: it reads the configuration Laravel uses
(bootstrap/cache/config.php, else config/*.php with .env) and queues back through
each job's own connection (database or Redis). Or point it anywhere with --dsn.
jobtriage doctor shows what it found and where each value came from.

Flag values: a DURATION is 90s, 15m, 2h, 7d or 1w (combined: 1h30m; a number
needs its unit); WHEN is a duration back from now or a time (2026-11-30 14:00,
RFC 3339); N is a whole number. A bad value exits 2 naming the flag.`,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	pf := root.PersistentFlags()
	pf.StringVar(&f.Conn.DSN, "dsn", "", "database `URL`: postgres://…, mysql://…, sqlite:PATH (env JOBTRIAGE_DSN)")
	pf.StringVar(&f.Conn.JobsDSN, "jobs-dsn", "", "the jobs table's database `URL` when it is not failed_jobs' (env JOBTRIAGE_JOBS_DSN)")
	pf.StringVar(&f.Conn.EnvFile, "env", "", "the app's .env `file` (default ./.env, or .env.$APP_ENV)")
	pf.StringVar(&f.Conn.FailedTable, "failed-table", "", "failed jobs table (default the app's queue.failed.table with the connection's prefix, or failed_jobs)")
	pf.StringVar(&f.Conn.JobsTable, "jobs-table", "", "queued jobs table (default the app's database queue connection's table, or jobs)")
	pf.StringVar(&f.Conn.Timezone, "timezone", "", "app timezone that failed_at is written in (default the app's app.timezone, or UTC)")
	durationVar(pf, &f.Conn.Timeout, "statement-timeout", 0, "server-side limit per statement (default 60s)")
	pf.BoolVar(&f.Conn.JobsLedger, "jobs-ledger", false, "with --jobs-dsn or a database queue in another database: record pushed uuids in a jobtriage_pushed table there (opt-in), so a re-run never queues a job twice even after it ran")
	pf.StringVar(&f.ConfigFile, "config", "", "jobtriage's configuration `file` (env JOBTRIAGE_CONFIG; default $XDG_CONFIG_HOME/jobtriage/config.toml)")
	pf.StringVar(&f.ContextName, "context", "", "run in the context `NAME` of the configuration file (env JOBTRIAGE_CONTEXT; default its current-context)")
	pf.BoolVar(&f.NoCache, "no-cache", false, "read failed_jobs instead of the local signature index (in JOBTRIAGE_CACHE_DIR or the user cache directory) that failed --group, failed --signature and the TUI keep")
	pf.StringVar(&f.AuditLog, "audit-log", "", "append one JSON line per destructive action to this `file` (env JOBTRIAGE_AUDIT_LOG)")
	pf.BoolVar(&f.Redact.On, "redact", false, "mask the values of listed payload keys and command properties in show, the TUI, listings and exports (env JOBTRIAGE_REDACT=1; alert bodies always are)")
	pf.StringVar(&f.Redact.Keys, "redact-keys", "", "the key `names` to mask, comma-separated; +name,… adds to the default list (env JOBTRIAGE_REDACT_KEYS; default "+strings.Join(redact.DefaultKeyNames(), ",")+")")
	registerColorFlag(root, f.IO)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &FlagError{err} })
	root.PersistentPreRunE = func(c *cobra.Command, _ []string) error {
		if err := checkStatementTimeout(c, f.Conn.Timeout); err != nil {
			return err
		}
		if _, _, err := f.redaction(); err != nil {
			return err
		}
		if writesJobs(c) {
			// Before any prompt and any write: an audit log that cannot
			// be appended to is refused while nothing has changed yet.
			return checkAuditLog(auditPath(f))
		}
		return nil
	}

	root.AddCommand(
		NewCmdFailed(f, nil),
		NewCmdShow(f, nil),
		NewCmdRetry(f, nil),
		NewCmdForget(f, nil),
		NewCmdPrune(f, nil),
		NewCmdFlush(f, nil),
		NewCmdRestore(f, nil),
		NewCmdPause(f, nil),
		NewCmdResume(f, nil),
		NewCmdTUI(f, nil),
		NewCmdDemo(f, nil),
		NewCmdMonitor(f, nil),
		NewCmdDoctor(f, nil),
		NewCmdContext(f, nil),
		NewCmdVersion(f, nil),
	)
	setVersionFlag(root, buildinfo.Read())
	registerCompletions(root, databaseSuggester(f))
	// cobra's completion command keeps the writer it is made with.
	root.SetOut(f.IO.Out)
	refuseUnknownSubcommands(root)
	return root
}
