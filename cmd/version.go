package cmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/jobtriage/jobtriage/internal/buildinfo"
)

// VersionOptions are the inputs of `jobtriage version`.
type VersionOptions struct {
	IO   *IOStreams
	Info func() buildinfo.Info
	JSON bool
}

// NewCmdVersion builds `jobtriage version`; the root's --version prints the same.
func NewCmdVersion(f *Factory, runF func(context.Context, *VersionOptions) error) *cobra.Command {
	opts := &VersionOptions{IO: f.IO, Info: buildinfo.Read}
	c := &cobra.Command{
		Use:   "version",
		Short: "Print jobtriage's version, commit, build date and Go version",
		Long: `Print jobtriage's version, the commit and date it was built from, and the Go
version and platform it was built with. Release builds carry all of them;
a build from a clone takes them from Go's build information: the tag at
the commit or a pseudo-version naming it, and vcs.revision; "dev" when Go
recorded nothing (go run, a git worktree, -buildvcs=false).`,
		Args: noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return runOr(c.Context(), opts, runF, versionRun)
		},
	}
	c.Flags().BoolVar(&opts.JSON, "json", false, "print the version as JSON")
	return c
}

func versionRun(_ context.Context, opts *VersionOptions) error {
	in := opts.Info()
	if opts.JSON {
		return writeJSON(opts.IO.Out, newVersionDoc(in))
	}
	_, err := fmt.Fprint(opts.IO.Out, in.String())
	return err
}

// setVersionFlag makes `jobtriage --version` print what `jobtriage version`
// prints (cobra's template would print one line).
func setVersionFlag(root *cobra.Command, info buildinfo.Info) {
	root.Version = info.Version
	root.Flags().Bool("version", false, "print the version, commit, build date and Go version (as jobtriage version)")
	root.SetVersionTemplate(escapeTemplate(info.String()))
}

// escapeTemplate quotes text for a text/template: "{{" becomes an action printing it.
func escapeTemplate(s string) string { return strings.ReplaceAll(s, "{{", `{{"{{"}}`) }
