package cmd

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sanitize"
)

// completionTimeout bounds dynamic completion's database reads: past it the
// shell gets no candidates rather than a frozen prompt.
const completionTimeout = time.Second

// suggester reads suggestions from the database, or fails.
type suggester func(ctx context.Context) (triage.Suggestions, error)

// databaseSuggester opens the service as the command would (cobra's
// __complete parsed --dsn, --context …), chatter discarded.
func databaseSuggester(f *Factory) suggester {
	return func(ctx context.Context) (triage.Suggestions, error) {
		f.IO.ErrOut = io.Discard
		svc, err := f.Service(ctx)
		if err != nil {
			return triage.Suggestions{}, err
		}
		return svc.Suggest(ctx, 0)
	}
}

// completeFrom offers one kind of suggestion (queue, connection, signature,
// id), filtered by what was typed (in a list, the last element); a failure
// offers nothing but extra (retry's "all"), silently.
func completeFrom(s suggester, kind string, list bool, extra ...triage.Suggestion) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
		defer cancel()
		prefix, typed := "", toComplete
		if list {
			if i := strings.LastIndex(toComplete, ","); i >= 0 {
				prefix, typed = toComplete[:i+1], toComplete[i+1:]
			}
		}
		var cands []triage.Suggestion
		if got, err := s(ctx); err == nil {
			cands = map[string][]triage.Suggestion{"queue": got.Queues, "connection": got.Connections, "signature": got.Signatures, "id": got.IDs}[kind]
		}
		var out []cobra.Completion
		for _, c := range append(append([]triage.Suggestion(nil), extra...), cands...) {
			// A name sanitising would change cannot be typed back: not offered.
			if !strings.HasPrefix(c.Value, typed) || sanitize.Line(c.Value) != c.Value || strings.ContainsAny(c.Value, " \t") {
				continue
			}
			if d := completionDescription(sanitize.Line(c.Description)); d != "" {
				out = append(out, cobra.CompletionWithDesc(prefix+c.Value, d))
			} else {
				out = append(out, prefix+c.Value)
			}
		}
		dir := cobra.ShellCompDirectiveNoFileComp
		if list && len(out) > 0 {
			dir |= cobra.ShellCompDirectiveNoSpace // another ",name" may follow
		}
		return out, dir
	}
}

// completionDescription is one line, short enough for a shell menu.
func completionDescription(s string) string {
	const maxRunes = 60
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > maxRunes {
		return string(r[:maxRunes-1]) + "…"
	}
	return s
}

// registerCompletions completes every --queue, --connection and --signature
// of the tree, and the job ids show, retry and forget take.
func registerCompletions(root *cobra.Command, s suggester) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, flag := range []string{"queue", "connection", "signature"} {
			if c.Flags().Lookup(flag) != nil {
				_ = c.RegisterFlagCompletionFunc(flag, completeFrom(s, flag, flag != "signature"))
			}
		}
		if c.Parent() == root && c.ValidArgsFunction == nil {
			switch c.Name() {
			case "show", "forget":
				c.ValidArgsFunction = completeFrom(s, "id", false)
			case "retry":
				c.ValidArgsFunction = completeFrom(s, "id", false, triage.Suggestion{Value: "all", Description: "every failed job the filters select"})
			case "monitor":
				c.ValidArgsFunction = completeFrom(s, "queue", true)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// refuseUnknownSubcommands makes every command that only groups others
// (completion, context) refuse, naming the ones it takes, a word that is none
// of them (cobra would print the help and exit 0: `completion tcsh` seemed to
// work); alone, it prints its help. The completion command is added here, as
// Execute would, to be covered too.
func refuseUnknownSubcommands(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Runnable() || !c.HasSubCommands() {
			continue
		}
		c.Args = cobra.ArbitraryArgs
		if c.Name() == "completion" {
			c.Use = "completion <shell>"
		}
		c.RunE = func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return c.Help()
			}
			var names []string
			for _, sub := range c.Commands() {
				if sub.IsAvailableCommand() {
					names = append(names, sub.Name())
				}
			}
			what := "a command"
			if c.Name() == "completion" {
				what = "a shell"
			}
			return FlagErrorf("unknown command %q for %q: choose %s: %s", args[0], c.CommandPath(), what, strings.Join(names, ", "))
		}
	}
}
