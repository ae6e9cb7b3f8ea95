package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/jobtriage/jobtriage/internal/demo"
)

// DemoOptions are the inputs of `jobtriage demo`.
type DemoOptions struct {
	IO    *IOStreams
	Now   func() time.Time
	Path  string
	Force bool
	// Executable is the running binary's path (os.Executable): the hint
	// says `go run .` when it is a `go run` build, so it works as printed.
	Executable func() (string, error)
}

// NewCmdDemo builds `jobtriage demo`.
func NewCmdDemo(f *Factory, runF func(context.Context, *DemoOptions) error) *cobra.Command {
	opts := &DemoOptions{IO: f.IO, Now: f.Now, Executable: os.Executable}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Create a SQLite demo database with realistic Laravel failed jobs",
		Long: heredoc.Doc(`
			Create a SQLite file with Laravel's exact jobs, failed_jobs and job_batches
			schema and realistic content: several job classes and queues, PHP exception
			texts with stack traces and chained exceptions, plain and encrypted commands,
			failures spread over days, and pending, delayed and reserved jobs.
			Then point any command at it with --dsn sqlite:PATH.
		`),
		Example: "  $ jobtriage demo && jobtriage failed --group --dsn sqlite:jobtriage-demo.sqlite",
		Args:    noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return runOr(c.Context(), opts, runF, demoRun)
		},
	}
	cmd.Flags().StringVar(&opts.Path, "path", "jobtriage-demo.sqlite", "where to create the database `file`")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "replace the file if it exists")
	return cmd
}

func demoRun(ctx context.Context, opts *DemoOptions) error {
	if _, err := os.Stat(opts.Path); err == nil {
		if !opts.Force {
			fmt.Fprintf(opts.IO.ErrOut, "%s exists; using it (--force recreates it)\n", opts.Path)
			fmt.Fprintln(opts.IO.Out, "sqlite:"+opts.Path)
			return nil
		}
		if err := os.Remove(opts.Path); err != nil {
			return err
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := demo.CreateDemoSQLite(ctx, opts.Path, opts.Now()); err != nil {
		return fmt.Errorf("creating the demo database: %w", err)
	}
	abs, _ := filepath.Abs(opts.Path)
	fmt.Fprintf(opts.IO.ErrOut, "created %s (APP_KEY for encrypted jobs: %s)\n", abs, demo.DemoAppKey)
	fmt.Fprintf(opts.IO.ErrOut, "try: %s failed --group --dsn sqlite:%s\n", invocationOf(opts.Executable), opts.Path)
	fmt.Fprintln(opts.IO.Out, "sqlite:"+opts.Path)
	return nil
}

// invocationOf is how the operator ran jobtriage, for hints that must work as
// printed: "go run ." for a binary in go run's go-build directory.
func invocationOf(executable func() (string, error)) string {
	if executable != nil {
		if exe, err := executable(); err == nil && strings.Contains(filepath.ToSlash(exe), "/go-build") {
			return "go run ."
		}
	}
	return "jobtriage"
}
