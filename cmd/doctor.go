package cmd

import (
	"context"
	"fmt"
	"time"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/jobtriage/jobtriage/internal/appprofile"
	"github.com/jobtriage/jobtriage/internal/doctor"
	"github.com/jobtriage/jobtriage/triage"
)

// DoctorOptions are the inputs of `jobtriage doctor`.
type DoctorOptions struct {
	IO      *IOStreams
	Now     func() time.Time
	Getenv  func(string) string
	Config  func() (appprofile.Config, error)
	Service func(context.Context) (*triage.Service, error)
	// Backends open the queue connections' backends for the live checks.
	Backends backendOpeners
	// TimezoneFlag is --timezone, to say where the timezone came from.
	TimezoneFlag string

	JSON bool
}

// NewCmdDoctor builds `jobtriage doctor`.
func NewCmdDoctor(f *Factory, runF func(context.Context, *DoctorOptions) error) *cobra.Command {
	opts := &DoctorOptions{IO: f.IO, Now: f.Now, Getenv: f.Getenv}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Show how jobtriage sees the app: settings and their sources, coverage, contradictions, live checks",
		Long: heredoc.Doc(`
			Explain what jobtriage reads and why, for the app in the working directory
			(or --dsn, --env …):

			  App              the app root, its Laravel version, which configuration
			                   Laravel uses (the config cache, or config/*.php with .env,
			                   or the built-in defaults), the timezone, the failed-jobs
			                   store and the jobs and batches tables
			  Settings         every value jobtriage uses, with the file:line (and env
			                   variable) it came from; secrets show as (set) or (empty)
			  Queue connections  where each connection's jobs go, whether jobtriage can
			                   retry into it and monitor it, and the artisan command to
			                   use where it cannot (sync, sqs, beanstalkd, null, …)
			  Contradictions   the config cache and .env disagreeing, APP_TIMEZONE set but
			                   not read by config/app.php, values jobtriage could not
			                   evaluate without PHP, the database server's timezone
			  Checks           the failed-jobs database (tables, id mode, rows) and each
			                   Redis or other database a queue connection uses, live
			  Indexes          indexes worth adding, with the statement for this database;
			                   jobtriage never changes the schema itself

			Exit codes: 0 nothing is wrong; 1 a check failed or a contradiction was
			found (an error line). Warnings and notes (a missing index, a connection
			jobtriage cannot write to, the server's timezone, values jobtriage does not
			need) do not fail. 2 usage. The report goes to stdout (--json: one object);
			passwords and keys are never printed.
		`),
		Example: "  $ jobtriage doctor\n  $ jobtriage doctor --json | jq '.contradictions'",
		Args:    noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			opts.Config = f.Config
			opts.Service = f.Service
			opts.Backends = f.backendOpeners()
			opts.TimezoneFlag = f.Conn.Timezone
			return runOr(c.Context(), opts, runF, doctorRun)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the report as one JSON object")
	return cmd
}

func doctorRun(ctx context.Context, opts *DoctorOptions) error {
	cfg, cfgErr := opts.Config()
	tz := ""
	switch {
	case opts.TimezoneFlag != "":
		tz = "--timezone"
	case opts.Getenv("JOBTRIAGE_TIMEZONE") != "":
		tz = "JOBTRIAGE_TIMEZONE"
	}
	var routes map[string]triage.Route
	defer func() {
		for _, r := range routes {
			if r.Backend != nil {
				_ = r.Backend.Close()
			}
		}
	}()
	rep, err := doctor.Build(ctx, doctor.Inputs{Config: cfg, ConfigErr: cfgErr, TimezoneOverride: tz,
		Service: opts.Service, Now: opts.Now, Routes: func() map[string]triage.Route {
			routes, _ = queueRoutes(cfg, opts.Backends)
			return routes
		}})
	if err != nil {
		return err
	}
	rep.SchemaVersion = jsonSchemaVersion
	if opts.JSON {
		err = writeJSON(opts.IO.Out, rep)
	} else {
		err = rep.WriteText(opts.IO.Out)
	}
	if err != nil || rep.OK {
		return err
	}
	failed, errs := rep.Problems()
	fmt.Fprintf(opts.IO.ErrOut, "doctor: %d failed check(s), %d contradiction(s)\n", failed, errs)
	return silentExit(ExitError)
}
