// Package cmd is jobtriage's command line: flags, IO streams, output formats
// and exit codes. It never writes SQL; it wires a triage.Store lazily.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/jobtriage/jobtriage/triage/sanitize"
)

// ExitCode is the process exit status; README documents every value.
type ExitCode int

// Main runs the command line with the process's arguments and streams.
func Main() ExitCode {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Run(ctx, NewFactory(), os.Args[1:])
}

// Run executes one command line and returns its exit code; errors are
// printed here, once, as one line on stderr.
func Run(ctx context.Context, f *Factory, args []string) ExitCode {
	defer f.Close()
	root := NewCmdRoot(f)
	root.SetArgs(args)
	root.SetIn(f.IO.In)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitOK
	}
	code := exitCodeFor(err)
	if msg := err.Error(); msg != "" {
		if errors.Is(err, context.Canceled) {
			msg = "interrupted"
		}
		fmt.Fprintln(f.IO.ErrOut, "jobtriage: "+sanitize.Line(oneLine(msg)))
	}
	var fe *FlagError
	if errors.As(err, &fe) || isCobraUsageError(err) {
		if cmd == nil {
			cmd = root
		}
		fmt.Fprintf(f.IO.ErrOut, "Run '%s --help' for usage.\n", cmd.CommandPath())
		code = ExitUsage
	}
	return code
}

// isCobraUsageError recognises cobra's own argument and flag errors, which
// are not typed.
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

Run it in the app's directory to use its .env, or point it anywhere with --dsn.`,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.CompletionOptions.HiddenDefaultCmd = true
	pf := root.PersistentFlags()
	pf.StringVar(&f.Conn.DSN, "dsn", "", "database `URL`: postgres://…, mysql://…, sqlite:PATH (env JOBTRIAGE_DSN)")
	pf.StringVar(&f.Conn.JobsDSN, "jobs-dsn", "", "the jobs table's database `URL` when it is not failed_jobs' (env JOBTRIAGE_JOBS_DSN)")
	pf.StringVar(&f.Conn.EnvFile, "env", "", "the app's .env `file` (default ./.env, or .env.$APP_ENV)")
	pf.StringVar(&f.Conn.FailedTable, "failed-table", "", "failed jobs table (default failed_jobs)")
	pf.StringVar(&f.Conn.JobsTable, "jobs-table", "", "queued jobs table (default DB_QUEUE_TABLE or jobs)")
	pf.StringVar(&f.Conn.Timezone, "timezone", "", "app timezone that failed_at is written in (default APP_TIMEZONE or UTC)")
	pf.DurationVar(&f.Conn.Timeout, "statement-timeout", 0, "server-side limit per statement (default 60s)")
	pf.BoolVar(&f.Conn.JobsLedger, "jobs-ledger", false, "with --jobs-dsn or a database queue in another database: record pushed uuids in a jobtriage_pushed table there (opt-in), so a re-run never queues a job twice even after it ran")
	pf.StringVar(&f.AuditLog, "audit-log", "", "append one JSON line per destructive action to this `file` (env JOBTRIAGE_AUDIT_LOG)")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &FlagError{err} })

	root.AddCommand(
		NewCmdFailed(f, nil),
		NewCmdShow(f, nil),
		NewCmdRetry(f, nil),
		NewCmdForget(f, nil),
		NewCmdPrune(f, nil),
		NewCmdFlush(f, nil),
		NewCmdTUI(f, nil),
		NewCmdDemo(f, nil),
		NewCmdMonitor(f, nil),
		NewCmdDoctor(f, nil),
	)
	return root
}
