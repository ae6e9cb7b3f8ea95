package cmd

import (
	"bufio"
	"bytes"
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
	// VerifiedPart restores the verified batches of an archive cut short.
	VerifiedPart bool
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

			The whole archive is verified first (each record against its sum, each
			batch against its trailer): an edited, reordered or cut archive is refused
			with the line that is wrong, and nothing is restored. --verified-part
			restores the verified batches of one cut short. Two records of one uuid
			that differ are named and the later one is not restored (exit 7).

			It is safe to run twice: a row whose uuid is already in failed_jobs is
			skipped and counted, and a uuid the archive holds twice is restored once.
			A row keeps its original id when no other row holds it (so ids in tickets
			and logs stay right); otherwise the database gives it a new one.
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
	cmd.Flags().BoolVar(&opts.VerifiedPart, "verified-part", false, "of an archive cut short, restore the verified batches before the cut")
	return cmd
}

// restoreDoc is restore --json.
type restoreDoc struct {
	SchemaVersion int  `json:"schema_version"`
	DryRun        bool `json:"dry_run"`
	// Read counts the archive's records; Restored the rows inserted (dry:
	// that would be), Renumbered of them under a new id; Present the rows
	// already in failed_jobs; Duplicates the records repeating a uuid and
	// its content.
	Read       int64 `json:"read"`
	Restored   int64 `json:"restored"`
	Renumbered int64 `json:"renumbered"`
	Present    int64 `json:"present"`
	Duplicates int64 `json:"duplicates"`
	// Conflicts are the records repeating a uuid with other content: not restored.
	Conflicts []archive.Conflict `json:"conflicts"`
	// Unverified counts the records of format 1, which carry no sum.
	Unverified int64 `json:"unverified"`
	// CutOff is the unverified tail --verified-part left out; null when none.
	CutOff *archive.Cut `json:"cut_off"`
}

func restoreRun(ctx context.Context, opts *RestoreOptions) error {
	name := opts.Path
	open := func() (io.ReadCloser, error) { return opts.Open(opts.Path) }
	if opts.Path == archive.Stdout {
		// Read twice, to verify before writing: held in memory.
		raw, err := io.ReadAll(opts.IO.In)
		if err != nil {
			return err
		}
		name, open = "on standard input", func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil }
	}
	f, err := open()
	if err != nil {
		return inputFileError(opts.Path, err)
	}
	v, err := verifyArchive(f, opts.Path, name)
	f.Close()
	if err != nil {
		return err
	}
	if v.Cut != nil && !opts.VerifiedPart {
		return fmt.Errorf("%w: archive %s is cut off at line %d (%s): a copy cut short, or a run killed while writing it, which the file cannot tell apart; nothing restored (--verified-part restores the %s before it)",
			triage.ErrInvalidInput, sanitize.Line(name), v.Cut.Line, cutPhrase(v.Cut), countNoun(v.Records, "verified record"))
	}
	if v.NullLine > 0 {
		return fmt.Errorf("%w: archive %s line %d: a record with %s null, which failed_jobs declares NOT NULL; nothing restored",
			triage.ErrInvalidInput, sanitize.Line(name), v.NullLine, v.NullColumn)
	}
	svc, err := opts.Service(ctx)
	if err != nil {
		return err
	}
	if sch := svc.Store.Schema(); v.NullUUID > 0 && sch.IDMode == triage.IDModeUUID && !sch.UUIDNullable {
		return fmt.Errorf("%w: archive %s line %d: a record with uuid null (a table without the column wrote it), and %s.uuid is NOT NULL; nothing restored",
			triage.ErrInvalidInput, sanitize.Line(name), v.NullUUID, sch.FailedTable)
	}
	if f, err = open(); err != nil {
		return inputFileError(opts.Path, err)
	}
	defer f.Close()
	ar, err := archive.NewReader(f)
	if err != nil {
		return err
	}
	ar.Name = name
	args := []string{"restore", opts.Path}
	audit := opts.Audit
	if opts.DryRun {
		audit = nil // a dry run changes nothing
	}
	pr := newMeter(opts.IO, "read", v.Records)
	var sum triage.RestoreSummary
	err = audited(audit, auditEntry{Command: "restore", Args: args}, func(e *auditEntry) (err error) {
		for sum, err = range svc.Restore(ctx, &verifiedRows{ar, v.Records}, opts.DryRun) {
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
	restoreNotes(opts.IO.ErrOut, name, v)
	dups := sum.Duplicates - int64(len(v.Conflicts))
	if opts.JSON {
		err = writeJSON(opts.IO.Out, restoreDoc{SchemaVersion: jsonSchemaVersion, DryRun: sum.DryRun, Read: sum.Read, Restored: sum.Restored,
			Renumbered: sum.Renumbered, Present: sum.Present, Duplicates: dups, Conflicts: append([]archive.Conflict{}, v.Conflicts...),
			Unverified: v.Unverified, CutOff: v.Cut})
	} else {
		err = restoreLine(opts.IO.Out, sum, dups, int64(len(v.Conflicts)), onTarget(svc))
	}
	if err == nil && len(v.Conflicts) > 0 {
		return silentExit(ExitPartial)
	}
	return err
}

// verifyArchive reads the archive whole before a restore writes anything.
func verifyArchive(src io.Reader, path, name string) (archive.Verified, error) {
	if strings.HasSuffix(path, ".gz") {
		// A 0-byte .gz is no gzip (zcat refuses it): a run that died
		// before writing, or a copy that went wrong, not an empty archive.
		br := bufio.NewReader(src)
		if _, err := br.Peek(1); errors.Is(err, io.EOF) {
			return archive.Verified{}, fmt.Errorf("%w: archive %s is empty (0 bytes), so not gzip: nothing to restore; check that it is the file prune or forget wrote", triage.ErrInvalidInput, sanitize.Line(path))
		}
		src = br
	}
	return archive.Verify(src, name)
}

// verifiedRows reads no further than the verifying read did: rows a writer
// appends meanwhile were not verified.
type verifiedRows struct {
	r    *archive.Reader
	left int64
}

func (v *verifiedRows) Next() (triage.RawRow, error) {
	if v.left == 0 {
		return triage.RawRow{}, io.EOF
	}
	v.left--
	return v.r.Next()
}

// restoreNotes says on stderr what the verification could not vouch for.
func restoreNotes(w io.Writer, name string, v archive.Verified) {
	name = sanitize.Line(name)
	if v.Unverified > 0 {
		fmt.Fprintf(w, "archive %s: %s of format 1, which carries no checksum: restored as read, unverified\n", name, countNoun(v.Unverified, "record"))
	}
	if v.Cut != nil {
		fmt.Fprintf(w, "archive %s is cut off at line %d (%s): not restored (a copy cut short lost it and what followed; a run killed while writing it never deleted its rows)\n",
			name, v.Cut.Line, cutPhrase(v.Cut))
	}
	for _, c := range v.Conflicts {
		fmt.Fprintf(w, "archive %s line %d: uuid %s differs from the record at line %d, which was restored: not restored\n", name, c.Line, sanitize.Line(c.UUID), c.FirstLine)
	}
}

// cutPhrase says what an archive's unverified tail holds.
func cutPhrase(c *archive.Cut) string {
	if c.Records == 0 {
		return "its last line is torn"
	}
	return countNoun(int64(c.Records), "whole record") + " from there, and no batch trailer"
}

// restoreLine is restore's text report.
func restoreLine(w io.Writer, sum triage.RestoreSummary, dups, conflicts int64, target string) error {
	verb := "Restored"
	if sum.DryRun {
		verb = "Would restore"
	}
	var notes []string
	if sum.Present > 0 {
		notes = append(notes, countNoun(sum.Present, "row")+" already in failed_jobs")
	}
	if dups > 0 {
		notes = append(notes, countNoun(dups, "duplicate record")+" in the archive")
	}
	if conflicts > 0 {
		notes = append(notes, countNoun(conflicts, "conflicting record")+" not restored")
	}
	if sum.Renumbered > 0 {
		notes = append(notes, fmt.Sprintf("%s under a new id, as another row holds the old one", countNoun(sum.Renumbered, "row")))
	}
	line := fmt.Sprintf("%s %s of %s", verb, countNoun(sum.Restored, "failed job"), countNoun(sum.Read, "archived row"))
	if len(notes) > 0 {
		line += " (" + strings.Join(notes, "; ") + ")"
	}
	_, err := fmt.Fprintln(w, line+target+".")
	return err
}
