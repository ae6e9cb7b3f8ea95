package cmd

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/jobtriage/jobtriage/triage"
)

// ForgetOptions are the inputs of `jobtriage forget`.
type ForgetOptions struct {
	IO      *IOStreams
	Service func(context.Context) (*triage.Service, error)
	Now     func() time.Time
	Audit   func(auditEntry) error

	IDs         []string
	Filter      FilterFlags
	DryRun      bool
	Yes         bool
	JSON        bool
	Archive     ArchiveFlag
	refs        []triage.Ref // IDs parsed
	commandLine []string
}

// NewCmdForget builds `jobtriage forget`.
func NewCmdForget(f *Factory, runF func(context.Context, *ForgetOptions) error) *cobra.Command {
	opts := &ForgetOptions{IO: f.IO, Now: f.Now, Audit: func(e auditEntry) error { return audit(f, e) }}
	cmd := &cobra.Command{
		Use:   "forget [<id>...]",
		Short: "Delete failed jobs by id or by filter",
		Long: heredoc.Doc(`
			Delete failed jobs: by id (uuid, or integer id for legacy rows), or every job
			a filter selects (--queue, --class, --signature, --since, …). Deletes run in
			short batches. It asks first on a terminal and needs --yes otherwise.
			To empty the table use flush; to apply a retention period use prune.
		`) + archiveHelp,
		Example: examples(heredoc.Doc(`
			  $ jobtriage forget 4e44390e-5a8c-4b8f-9d3e-1f2a3b4c5d6e
			  $ jobtriage forget --signature 3fa9c2d1e0 --dry-run
			  $ jobtriage forget --queue reports --until 7d --yes
			  $ jobtriage forget --signature 3fa9c2d1e0 --archive incident-4711.ndjson --yes
		`)),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Service = f.Service
			opts.IDs = args
			opts.commandLine = append([]string{"forget"}, args...)
			if len(args) > 0 && !opts.Filter.empty() {
				return FlagErrorf("give ids or filters, not both")
			}
			if len(args) == 0 && opts.Filter.empty() {
				return FlagErrorf("name ids or a filter; to delete everything use flush")
			}
			if err := opts.Archive.check(opts.JSON); err != nil {
				return err
			}
			var err error
			if opts.refs, err = parseRefs(args); err != nil {
				return err
			}
			return runOr(c.Context(), opts, runF, forgetRun)
		},
	}
	opts.Filter.register(cmd)
	writeFlags(cmd, &opts.DryRun, "count what would be deleted; change nothing", &opts.Yes, &opts.JSON)
	opts.Archive.register(cmd, true)
	return cmd
}

func forgetRun(ctx context.Context, opts *ForgetOptions) error {
	svc, q, err := opts.Filter.open(ctx, opts.Service, opts.Now())
	if err != nil {
		return err
	}
	p := triage.ForgetParams{Query: q, Refs: opts.refs}
	ids, skips := newSpool(), newSkipReport()
	defer ids.Close()
	defer skips.all.Close()
	var total int64 // what the dry run counted; 0 when there was none
	if opts.DryRun || !opts.Yes {
		p.DryRun = true
		preview, err := forgetBatches(ctx, svc, p, ids, skips, nil)
		if err != nil {
			return err
		}
		if opts.DryRun || preview.Deleted == 0 {
			return reportForget(opts, svc, preview, ids, skips, opts.Archive.doc(nil, int64(preview.Deleted)))
		}
		forGood := " for good"
		if opts.Archive.set() {
			forGood = ""
		}
		if err := confirm(opts.IO, opts.Yes, fmt.Sprintf("%s %s%s%s?", archiveVerb(opts.Archive), countNoun(preview.Deleted, "failed job"), forGood, onTarget(svc))); err != nil {
			return err
		}
		p.DryRun = false
		if err := cmp.Or(ids.reset(), skips.reset()); err != nil { // the real run records its own
			return err
		}
		total = int64(preview.Deleted)
	}
	arch, archiver, err := opts.Archive.open(opts.IO, opts.Now)
	if err != nil {
		return err
	}
	defer arch.Close()
	p.Archive = archiver
	pr := newMeter(opts.IO, "deleted", total)
	args := append(append([]string{}, opts.commandLine...), opts.Archive.args()...)
	var res triage.ForgetResult
	err = audited(opts.Audit, auditEntry{Command: "forget", Args: args, Filter: q}, func(e *auditEntry) (err error) {
		res, err = forgetBatches(ctx, svc, p, ids, skips, pr)
		pr.done()
		e.Count, e.IDs, e.spooled, e.Skipped = int64(res.Deleted), res.IDs, ids, skips.Len()
		return err
	})
	if err != nil {
		if res.Deleted > 0 && arch != nil {
			fmt.Fprintf(opts.IO.ErrOut, "%s deleted before the error%s\n", countNoun(res.Deleted, "failed job"), opts.Archive.doc(arch, 0).phrase(false))
		}
		return err
	}
	if err := arch.Close(); err != nil {
		return err
	}
	return reportForget(opts, svc, res, ids, skips, opts.Archive.doc(arch, 0))
}

// forgetBatches runs a forget batch by batch, spooling the ids and skips, telling the meter (or nil).
func forgetBatches(ctx context.Context, svc *triage.Service, p triage.ForgetParams, ids *spool, skips *skipReport, pr *meter) (triage.ForgetResult, error) {
	run := svc.StartForget(ctx, p)
	for run.Next(ctx) {
		b := run.Batch()
		if err := cmp.Or(ids.AddIDs(b.IDs), skips.Add(b.Skips)); err != nil {
			return run.Result(), err
		}
		if pr != nil {
			pr.update(int64(b.Deleted))
		}
	}
	return run.Result(), run.Err()
}

func reportForget(opts *ForgetOptions, svc *triage.Service, res triage.ForgetResult, ids *spool, skips *skipReport, arch *archiveDoc) error {
	none := res.Deleted == 0 && skips.Len() == 0
	if len(res.NotFound) > 0 && none && !opts.JSON {
		return notFoundError(res.NotFound)
	}
	if opts.Filter.Signature != "" && none && !opts.JSON {
		return opts.Filter.errNoSuchSignature() // the error alone, not "Would delete 0 failed jobs" first
	}
	if opts.JSON {
		doc := forgetDoc{SchemaVersion: jsonSchemaVersion, DryRun: res.DryRun, Deleted: res.Deleted, IDs: orEmpty(res.IDs), NotFound: orEmpty(res.NotFound),
			Skipped: []triage.Skip{}, Archive: arch}
		if err := writeJSONSpliced(opts.IO.Out, doc, map[string]*spool{"ids": ids, "skipped": skips.all}); err != nil {
			return err
		}
	} else {
		reportSkips(opts.IO, skips, "skipped")
		printNotFound(opts.IO.ErrOut, res.NotFound)
		verb := "Deleted"
		if res.DryRun {
			verb = "Would delete"
		}
		line := verb + " " + countNoun(res.Deleted, "failed job")
		if n := skips.Len(); n > 0 {
			line += fmt.Sprintf("; skipped %d", n)
		}
		if n := len(res.NotFound); n > 0 {
			line += fmt.Sprintf("; %d not found", n)
		}
		fmt.Fprintln(opts.Archive.out(opts.IO), line+onTarget(svc)+arch.phrase(res.DryRun)+".")
	}
	switch {
	case opts.Filter.Signature != "" && none:
		return opts.Filter.errNoSuchSignature()
	case len(res.NotFound) > 0 && none:
		return silentExit(ExitNotFound)
	case len(res.NotFound) > 0 || skips.Len() > 0:
		return silentExit(ExitPartial)
	}
	return nil
}
