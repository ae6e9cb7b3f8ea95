package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/MakeNowJust/heredoc"
	"github.com/charmbracelet/lipgloss"
	"github.com/spf13/cobra"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/detailview"
	"github.com/jobtriage/jobtriage/triage/payload"
	"github.com/jobtriage/jobtriage/triage/sanitize"
)

// ShowOptions are the inputs of `jobtriage show`.
type ShowOptions struct {
	IO      *IOStreams
	Service func(context.Context) (*triage.Service, error)
	Now     func() time.Time

	ID     string
	JSON   bool
	Frames int
}

// NewCmdShow builds `jobtriage show <id>`.
func NewCmdShow(f *Factory, runF func(context.Context, *ShowOptions) error) *cobra.Command {
	opts := &ShowOptions{IO: f.IO, Now: f.Now}
	cmd := &cobra.Command{
		Use:   "show <id>",
		Short: "Show everything about one failed job",
		Long: heredoc.Doc(`
			Show one failed job: where it ran, the payload envelope (tries, timeout,
			backoff, retryUntil — marked expired when it is — batch, createdAt, delay,
			deleteWhenMissingModels, log context), the job's
			properties decoded from its PHP serialization (encrypted commands are
			decrypted when APP_KEY is known), and the exception: the thrown one first,
			then the chain of previous exceptions, with application frames marked.

			<id> is the job's uuid, or its integer row id (legacy rows without a uuid).
		`),
		Example: "  $ jobtriage show 4e44390e-5a8c-4b8f-9d3e-1f2a3b4c5d6e\n  $ jobtriage show 1042 --json",
		Args: func(c *cobra.Command, args []string) error {
			if len(args) != 1 {
				return FlagErrorf("show takes exactly one job id, got %d", len(args))
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts.Service = f.Service
			opts.ID = args[0]
			if _, err := triage.ParseRef(opts.ID); err != nil {
				return err
			}
			return runOr(c.Context(), opts, runF, showRun)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the job as JSON")
	countVar(cmd.Flags(), &opts.Frames, "frames", 12, 0, "stack frames to print per exception (0 = all)")
	return cmd
}

func showRun(ctx context.Context, opts *ShowOptions) error {
	svc, err := opts.Service(ctx)
	if err != nil {
		return err
	}
	d, err := svc.Show(ctx, opts.ID)
	if err != nil {
		return signatureHint(ctx, svc, opts.ID, err)
	}
	if opts.JSON {
		doc := newShowDoc(d)
		doc.Target = targetText(svc)
		return writeJSON(opts.IO.Out, doc)
	}
	printListingHeader(opts.IO, "Failed job "+sanitize.Line(d.Job.ID), svc)
	return printDetail(opts, d)
}

// signatureHint adds to show's not-found error, when the id is a signature's,
// the command that lists its jobs.
func signatureHint(ctx context.Context, svc *triage.Service, id string, err error) error {
	sig := strings.ToLower(strings.TrimSpace(id))
	if !errors.Is(err, triage.ErrNotFound) || !signatureIDRE.MatchString(sig) {
		return err
	}
	page, lerr := svc.List(ctx, triage.ListParams{Query: triage.Query{Signature: sig}, Limit: 1})
	if lerr != nil || len(page.Jobs) == 0 {
		return err
	}
	return fmt.Errorf("%w; that is a signature: jobtriage failed --signature %s", err, sig)
}

// encodableEnvelope drops e's raw values encoding/json would refuse (nested
// too deep): the rest still prints, and payload_text holds the whole payload.
func encodableEnvelope(e payload.Envelope) payload.Envelope {
	if e.Data != nil && !json.Valid(e.Data) {
		e.Data = nil
	}
	if e.LogContext != nil && !json.Valid(e.LogContext) {
		e.LogContext = nil
	}
	var extra []payload.Field
	for _, f := range e.Extra {
		if json.Valid(f.Raw) {
			extra = append(extra, f)
		}
	}
	e.Extra = extra
	return e
}

// printDetail prints every section of the detail model, the TUI's tabs in turn.
func printDetail(opts *ShowOptions, d triage.Detail) error {
	r := renderer(opts.IO)
	render := func(st lipgloss.Style) func(string) string { return func(s string) string { return st.Render(s) } }
	dim := render(r.NewStyle().Foreground(lipgloss.Color("245")))
	st := detailview.Style{Title: render(r.NewStyle().Bold(true)), Muted: dim, Vendor: dim,
		Problem: render(r.NewStyle().Foreground(lipgloss.Color("203")).Bold(true))}
	var b strings.Builder
	for i, s := range detailview.Build(d, opts.Now(), opts.Frames) {
		if i > 0 {
			b.WriteString("\n")
		}
		for _, l := range detailview.Layout(s, st, 0) {
			b.WriteString(l + "\n")
		}
	}
	_, err := fmt.Fprint(opts.IO.Out, b.String())
	return err
}
