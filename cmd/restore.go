package cmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/archive"
	"github.com/jobtriage/jobtriage/triage/sanitize"
)

// RestoreOptions are the inputs of `jobtriage restore`.
type RestoreOptions struct {
	IO      *IOStreams
	Service func(context.Context) (*triage.Service, error)
	Now     func() time.Time
	Audit   func(auditEntry) error
	// Open opens an archive file (os.Open outside tests).
	Open func(path string) (io.ReadCloser, error)

	Path   string
	DryRun bool
	JSON   bool
}

// NewCmdRestore builds `jobtriage restore PATH`.
func NewCmdRestore(f *Factory, runF func(context.Context, *RestoreOptions) error) *cobra.Command {
	opts := &RestoreOptions{IO: f.IO, Now: f.Now, Audit: func(e auditEntry) error { return audit(f, e) },
		Open: func(p string) (io.ReadCloser, error) { return os.Open(p) }}
	cmd := &cobra.Command{
		Use:   "restore <archive>",
		Short: "Put the failed jobs of an --archive file back into failed_jobs",
		Long: heredoc.Doc(`
			Re-insert the rows an archive written by prune, flush or forget --archive
			holds (plain or gzip NDJSON, - for stdin) into failed_jobs, byte for byte.

			It is safe to run twice: a row whose uuid is already in failed_jobs is
			skipped and counted, and a uuid the archive holds twice is restored once.
			A row keeps its original id when no other row holds it (so ids in tickets
			and logs stay right); otherwise the database gives it a new one. A torn
			last line, left by a run killed while writing, is ignored.
		`),
		Example: examples(heredoc.Doc(`
			  $ jobtriage restore failed-2026-11-30.ndjson.gz --dry-run
			  $ jobtriage restore failed-2026-11-30.ndjson.gz
			  $ zcat old.ndjson.gz | jobtriage restore - --json
		`)),
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Service = f.Service
			opts.Path = args[0]
			if opts.Path == "" {
				return FlagErrorf("name an archive file, or - for stdin")
			}
			return runOr(c.Context(), opts, runF, restoreRun)
		},
	}
	writeFlags(cmd, &opts.DryRun, "count what would be restored; change nothing", nil, &opts.JSON)
	return cmd
}

// restoreDoc is restore --json.
type restoreDoc struct {
	SchemaVersion int  `json:"schema_version"`
	DryRun        bool `json:"dry_run"`
	// Read counts the archive's records; Restored the rows inserted (dry:
	// that would be), Renumbered of them under a new id; Present the rows
	// already in failed_jobs; Duplicates the records repeating a uuid.
	Read       int64 `json:"read"`
	Restored   int64 `json:"restored"`
	Renumbered int64 `json:"renumbered"`
	Present    int64 `json:"present"`
	Duplicates int64 `json:"duplicates"`
	// TornTail: the archive ended in a torn record, which was ignored.
	TornTail bool `json:"torn_tail"`
}

func restoreRun(ctx context.Context, opts *RestoreOptions) error {
	var src io.Reader = opts.IO.In
	if opts.Path != archive.Stdout {
		f, err := opts.Open(opts.Path)
		if err != nil {
			return inputFileError(opts.Path, err)
		}
		defer f.Close()
		src = f
	}
	if strings.HasSuffix(opts.Path, ".gz") {
		// A 0-byte .gz is no gzip (zcat refuses it): a run that died
		// before writing, or a copy that went wrong, not an empty archive.
		br := bufio.NewReader(src)
		if _, err := br.Peek(1); errors.Is(err, io.EOF) {
			return fmt.Errorf("%w: archive %s is empty (0 bytes), so not gzip: nothing to restore; check that it is the file prune or forget wrote", triage.ErrInvalidInput, sanitize.Line(opts.Path))
		}
		src = br
	}
	ar, err := archive.NewReader(src)
	if err != nil {
		return err
	}
	svc, err := opts.Service(ctx)
	if err != nil {
		return err
	}
	args := []string{"restore", opts.Path}
	audit := opts.Audit
	if opts.DryRun {
		audit = nil // a dry run changes nothing
	}
	pr := newMeter(opts.IO, "read", 0)
	var sum triage.RestoreSummary
	err = audited(audit, auditEntry{Command: "restore", Args: args}, func(e *auditEntry) (err error) {
		for sum, err = range svc.Restore(ctx, ar, opts.DryRun) {
			if err == nil {
				pr.update(sum.Read)
			}
		}
		pr.done()
		e.Count = sum.Restored
		return err
	})
	if err != nil {
		if sum.Restored > 0 && !opts.DryRun {
			fmt.Fprintf(opts.IO.ErrOut, "%s restored before the error (running restore again skips them)\n", countNoun(sum.Restored, "failed job"))
		}
		return err
	}
	if ar.Torn {
		fmt.Fprintln(opts.IO.ErrOut, "the archive ends in a torn record (a run killed while writing it): ignored; its row was never deleted")
	}
	if opts.JSON {
		return writeJSON(opts.IO.Out, restoreDoc{SchemaVersion: jsonSchemaVersion, DryRun: sum.DryRun, Read: sum.Read, Restored: sum.Restored,
			Renumbered: sum.Renumbered, Present: sum.Present, Duplicates: sum.Duplicates, TornTail: ar.Torn})
	}
	verb := "Restored"
	if sum.DryRun {
		verb = "Would restore"
	}
	var notes []string
	if sum.Present > 0 {
		notes = append(notes, countNoun(sum.Present, "row")+" already in failed_jobs")
	}
	if sum.Duplicates > 0 {
		notes = append(notes, countNoun(sum.Duplicates, "duplicate record")+" in the archive")
	}
	if sum.Renumbered > 0 {
		notes = append(notes, fmt.Sprintf("%s under a new id, as another row holds the old one", countNoun(sum.Renumbered, "row")))
	}
	line := fmt.Sprintf("%s %s of %s", verb, countNoun(sum.Restored, "failed job"), countNoun(sum.Read, "archived row"))
	if len(notes) > 0 {
		line += " (" + strings.Join(notes, "; ") + ")"
	}
	_, err = fmt.Fprintln(opts.IO.Out, line+onTarget(svc)+".")
	return err
}
