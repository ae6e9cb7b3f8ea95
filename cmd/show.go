package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/MakeNowJust/heredoc"
	"github.com/charmbracelet/lipgloss"
	"github.com/spf13/cobra"

	"github.com/jobtriage/jobtriage/triage"
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
			backoff, retryUntil — marked expired when it is — batch), the job's
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
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return showRun(c.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the job as JSON")
	cmd.Flags().IntVar(&opts.Frames, "frames", 12, "stack frames to print per exception (0 = all)")
	return cmd
}

func showRun(ctx context.Context, opts *ShowOptions) error {
	svc, err := opts.Service(ctx)
	if err != nil {
		return err
	}
	d, err := svc.Show(ctx, opts.ID)
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(opts.IO.Out, newShowDoc(d))
	}
	return printDetail(opts, d)
}

// encodableEnvelope drops the raw JSON values of e (data, extra keys) that
// encoding/json would refuse to re-encode, such as a value nested deeper
// than its limit: the rest of the envelope still prints, and payload_text
// holds the whole payload.
func encodableEnvelope(e payload.Envelope) payload.Envelope {
	if e.Data != nil && !json.Valid(e.Data) {
		e.Data = nil
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

func printDetail(opts *ShowOptions, d triage.Detail) error {
	io := opts.IO
	r := renderer(io)
	head := r.NewStyle().Bold(true)
	dim := r.NewStyle().Foreground(lipgloss.Color("245"))
	bad := r.NewStyle().Foreground(lipgloss.Color("203")).Bold(true)
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	field := func(k, v string) {
		if v != "" {
			line("  %-14s %s", k, sanitize.Line(v))
		}
	}
	now := opts.Now()
	line("%s", head.Render("Failed job "+sanitize.Line(d.ID)))
	field("Row id", strconv.FormatInt(d.RowID, 10))
	field("Class", d.Class)
	field("Connection", d.Connection)
	field("Queue", d.Queue)
	field("Failed at", d.FailedAt.Format("2006-01-02 15:04:05 MST")+" ("+timeCellTTY(d.FailedAt, now)+")")
	field("Signature", d.Signature)

	line("")
	line("%s", head.Render("Payload"))
	if d.PayloadErr != nil {
		line("  %s", bad.Render("malformed payload: "+sanitize.Line(d.PayloadErr.Error())))
		line("%s", indent(sanitize.Text(truncateBytes(string(d.Payload), 2000)), "  "))
	} else {
		e := d.Envelope
		field("uuid", e.UUID)
		field("displayName", e.DisplayName)
		field("job", e.Job)
		field("kind", e.Kind.String())
		field("maxTries", optInt(e.MaxTries))
		field("maxExceptions", optInt(e.MaxExceptions))
		field("timeout", optInt(e.Timeout))
		field("backoff", orDash(e.Backoff))
		field("failOnTimeout", strconv.FormatBool(e.FailOnTimeout))
		if e.RetryUntil != nil {
			ru := time.Unix(*e.RetryUntil, 0).In(d.FailedAt.Location())
			v := ru.Format("2006-01-02 15:04:05 MST")
			if d.RetryUntilExpired {
				v += " " + bad.Render("(expired: a retry would fail at once; retry --retry-until gives a new deadline)")
			}
			line("  %-14s %s", "retryUntil", v)
		} else {
			field("retryUntil", "–")
		}
		field("batchId", e.BatchID)
		if e.Attempts != nil {
			field("attempts", strconv.Itoa(*e.Attempts))
		}
		if len(e.Tags) > 0 {
			field("tags", strings.Join(e.Tags, ", "))
		}
	}

	line("")
	switch d.Command {
	case triage.CommandPlain, triage.CommandDecrypted:
		title := "Command"
		if d.Command == triage.CommandDecrypted {
			title += " (encrypted, decrypted with APP_KEY)"
		}
		line("%s", head.Render(title))
		line("%s", indent(sanitize.Text(d.CommandText), "  "))
	case triage.CommandEncrypted:
		line("%s", head.Render("Command"))
		msg := "encrypted (ShouldBeEncrypted); set APP_KEY (or run in the app directory) to decrypt it"
		if d.CommandErr != nil {
			msg = "encrypted, and APP_KEY did not decrypt it: " + d.CommandErr.Error()
		}
		line("  %s", dim.Render(sanitize.Line(msg)))
	case triage.CommandUnreadable:
		line("%s", head.Render("Command"))
		msg := "not a PHP serialization"
		if d.CommandErr != nil {
			msg = "unreadable: " + d.CommandErr.Error()
		}
		line("  %s", bad.Render(sanitize.Line(msg)))
	}

	line("")
	line("%s", head.Render("Exception"))
	for i := len(d.Chain) - 1; i >= 0; i-- {
		e := d.Chain[i]
		label := ""
		switch {
		case i == len(d.Chain)-1 && len(d.Chain) > 1:
			label = dim.Render(" (thrown)")
		case i < len(d.Chain)-1:
			label = dim.Render(" (previous)")
		}
		line("  %s%s", bad.Render(sanitize.Line(e.Class)), label)
		if e.Message != "" {
			line("%s", indent(sanitize.Text(e.Message), "    "))
		}
		if loc := e.Location(); loc != "" {
			line("    at %s", sanitize.Line(loc))
		}
		for n, fr := range e.Frames {
			if opts.Frames > 0 && n >= opts.Frames {
				line("    %s", dim.Render(fmt.Sprintf("… %d more frames (--frames 0 shows all)", len(e.Frames)-n)))
				break
			}
			// Application frames are where the bug usually is: marked with
			// an arrow (colour is not always there), vendor frames dimmed.
			text := fmt.Sprintf("#%d %s", fr.Index, sanitize.Line(fr.Raw))
			if fr.Vendor {
				line("      %s", dim.Render(text))
			} else {
				line("    → %s", text)
			}
		}
		if i > 0 {
			line("")
		}
	}
	_, err := fmt.Fprint(io.Out, b.String())
	return err
}

func timeCellTTY(t, now time.Time) string {
	io := &IOStreams{stdoutTTY: true}
	return timeCell(io, t, now)
}

func optInt(p *int) string {
	if p == nil {
		return "–"
	}
	return strconv.Itoa(*p)
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func indent(s, pad string) string {
	s = strings.TrimRight(s, "\n")
	return pad + strings.ReplaceAll(s, "\n", "\n"+pad)
}

func truncateBytes(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
