package cmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/jobtriage/jobtriage/internal/contexts"
	"github.com/jobtriage/jobtriage/triage/sanitize"
)

// ContextOptions are the inputs of `jobtriage context list|show|use`.
type ContextOptions struct {
	IO *IOStreams
	// File loads the configuration file; Current is the context in force (or nil).
	File    func() (*contexts.File, error)
	Current func() (*contexts.Context, error)
	Getenv  func(string) string

	Action string // "list", "show" or "use"
	Name   string
	JSON   bool
}

// NewCmdContext builds `jobtriage context`.
func NewCmdContext(f *Factory, runF func(context.Context, *ContextOptions) error) *cobra.Command {
	opts := &ContextOptions{IO: f.IO, Getenv: f.Getenv}
	cmd := &cobra.Command{
		Use:   "context <command>",
		Short: "List, show and switch the named apps of the configuration file",
		Long: heredoc.Doc(`
			A context names one Laravel app in jobtriage's configuration file
			($XDG_CONFIG_HOME/jobtriage/config.toml, else ~/.config/jobtriage/config.toml;
			--config or JOBTRIAGE_CONFIG name another): its directory or DSNs, Redis,
			timezone, notifiers, and a label and colour that mark production. Every
			command runs in the context --context or JOBTRIAGE_CONTEXT names, else in
			the file's current-context; every prompt and write summary names it.

			Precedence: flags > environment (JOBTRIAGE_DSN, …) > context > the app's
			own profile (bootstrap/cache/config.php, config/*.php, .env).
		`),
		Example: examples(heredoc.Doc(`
			$ jobtriage context list
			$ jobtriage context use shop-prod
			$ jobtriage context show shop-prod --json
			$ jobtriage failed --group --context shop-staging
		`)),
	}
	// sub adds the subcommand use names; its name is the action.
	sub := func(use, short string, args cobra.PositionalArgs) *cobra.Command {
		c := &cobra.Command{Use: use, Short: short, Args: args, RunE: func(c *cobra.Command, args []string) error {
			opts.Action = c.Name()
			opts.File = f.ConfigFileData
			opts.Current = f.Context
			if len(args) > 0 {
				opts.Name = args[0]
			}
			return runOr(c.Context(), opts, runF, contextRun)
		}}
		cmd.AddCommand(c)
		return c
	}
	sub("list", "List the contexts; * marks the one in force", noArgs).
		Flags().BoolVar(&opts.JSON, "json", false, "print the contexts as JSON (secrets masked)")
	sub("show [name]", "Show a context's settings, secrets masked (default: the one in force)", cobra.MaximumNArgs(1)).
		Flags().BoolVar(&opts.JSON, "json", false, "print the context as JSON (secrets masked)")
	sub("use <name>", "Make a context the file's current-context (rewrites only that line, atomically)", cobra.ExactArgs(1))
	return cmd
}

func contextRun(_ context.Context, opts *ContextOptions) error {
	file, err := opts.File()
	if err != nil {
		return err
	}
	switch opts.Action {
	case "list":
		return contextList(opts, file)
	case "show":
		return contextShow(opts, file)
	case "use":
		return contextUse(opts, file)
	}
	return fmt.Errorf("context: unknown action %q", opts.Action)
}

// inForce is the name of the context in force, "" when none (or when the
// one named cannot be found: list still lists the file).
func (o *ContextOptions) inForce() string {
	c, err := o.Current()
	if err != nil || c == nil {
		return ""
	}
	return c.Name
}

func contextList(opts *ContextOptions, file *contexts.File) error {
	current := opts.inForce()
	if opts.JSON {
		doc := contextListDoc{SchemaVersion: jsonSchemaVersion, Config: nullIfZero(file.Path), Current: nullIfZero(current),
			Contexts: []contextDoc{}}
		for _, c := range file.Contexts {
			doc.Contexts = append(doc.Contexts, newContextDoc(c, c.Name == current))
		}
		return writeJSON(opts.IO.Out, doc)
	}
	if len(file.Contexts) == 0 {
		where := file.Path
		if where == "" {
			where, _ = contexts.Locate("", opts.Getenv)
		}
		fmt.Fprintf(opts.IO.ErrOut, "no contexts: add [contexts.NAME] tables to %s (see README, Contexts)\n", sanitize.Line(where))
		return nil
	}
	t := newTable(opts.IO, -1, "CURRENT", "NAME", "LABEL", "PRODUCTION", "WHERE")
	for _, c := range file.Contexts {
		mark, prod := "", ""
		if c.Name == current {
			mark = "*"
		}
		if c.Production {
			prod = "yes"
		}
		t.add(mark, c.Name, sanitize.Line(c.Label), prod, sanitize.Line(contextWhere(c.Redacted())))
	}
	return t.render()
}

// contextWhere is where a context points: its app directory, else its (redacted) DSN.
func contextWhere(c contexts.Context) string {
	if c.App != "" {
		return c.App
	}
	return c.DSN
}

func contextShow(opts *ContextOptions, file *contexts.File) error {
	name := opts.Name
	if name == "" {
		name = opts.inForce()
		if name == "" {
			return FlagErrorf("no context in force: name one (jobtriage context show NAME), or set one with --context, %s or jobtriage context use", contexts.EnvContext)
		}
	}
	c, ok := file.Context(name)
	if !ok {
		return FlagErrorf("no context %q in %s (have: %s)", name, orNone(file.Path), contextNames(file))
	}
	current := opts.inForce() == name
	if opts.JSON {
		return writeJSON(opts.IO.Out, contextShowDoc{SchemaVersion: jsonSchemaVersion, Config: nullIfZero(file.Path),
			Context: newContextDoc(c, current)})
	}
	r := c.Redacted()
	var b strings.Builder
	for _, kv := range [][2]string{
		{"name", r.Name}, {"current", yesNo(current)}, {"label", r.Label}, {"production", yesNo(r.Production)},
		{"color", r.DisplayColor()}, {"app", r.App}, {"env-file", r.EnvFile}, {"dsn", r.DSN}, {"jobs-dsn", r.JobsDSN},
		{"failed-table", r.FailedTable}, {"jobs-table", r.JobsTable}, {"timezone", r.Timezone}, {"redis", r.Redis},
		{"notify.slack-webhook", r.Notify.SlackWebhook}, {"notify.webhook-url", r.Notify.WebhookURL},
		{"notify.pagerduty-routing-key", r.Notify.PagerDutyRoutingKey}, {"notify.command", r.Notify.Command},
		{"defined at", file.Path + ":" + strconv.Itoa(c.Line)},
	} {
		if kv[1] != "" {
			fmt.Fprintf(&b, "%-*s %s\n", showKeyWidth, kv[0]+":", sanitize.Line(kv[1]))
		}
	}
	_, err := io.WriteString(opts.IO.Out, b.String())
	return err
}

// showKeyWidth fits the longest key of context show, with its colon.
const showKeyWidth = len("notify.pagerduty-routing-key:")

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func orNone(s string) string { return cmp.Or(s, "none") }

// contextNames lists the file's contexts for an error naming one it lacks.
func contextNames(file *contexts.File) string { return orNone(strings.Join(file.Names(), ", ")) }

func contextUse(opts *ContextOptions, file *contexts.File) error {
	if file.Path == "" {
		path, _ := contexts.Locate("", opts.Getenv)
		return fmt.Errorf("%w: no configuration file (create %s with a [contexts.%s] table)", errConfig, orNone(path), opts.Name)
	}
	if _, ok := file.Context(opts.Name); !ok {
		return FlagErrorf("no context %q in %s (have: %s)", opts.Name, file.Path, contextNames(file))
	}
	if err := contexts.SetCurrent(file.Path, opts.Name); err != nil {
		if errors.Is(err, os.ErrPermission) {
			return fmt.Errorf("%w: %v", errConfig, err)
		}
		return err
	}
	c, _ := file.Context(opts.Name)
	fmt.Fprintf(opts.IO.Out, "Switched to %s (%s).\n", contextMark(opts.IO, c), sanitize.Line(file.Path))
	if env := opts.Getenv(contexts.EnvContext); env != "" && env != opts.Name {
		fmt.Fprintf(opts.IO.ErrOut, "note: %s=%s is set and wins over the file in this shell\n", contexts.EnvContext, sanitize.Line(env))
	}
	return nil
}
