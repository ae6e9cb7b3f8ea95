package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// Where the generated command reference lives, relative to the module root.
const (
	ReferenceDir = "docs/reference"
	ManDir       = "docs/man"
)

// manDate is the date every generated man page carries. It is fixed so that
// regenerating the reference from unchanged code changes no byte (a date of
// today would make the drift test fail every month); the release's date is
// in CHANGELOG.md and `jobtriage version`.
var manDate = time.Date(2026, time.December, 1, 0, 0, 0, 0, time.UTC)

// DocsTree is the command tree as the reference documents it: built with an
// environment that is empty, so no default depends on the machine, and with
// cobra's completion command added as Execute would add it.
func DocsTree() *cobra.Command {
	f := &Factory{
		Now:     func() time.Time { return manDate },
		Getenv:  func(string) string { return "" },
		Environ: func() []string { return nil },
		Getwd:   func() (string, error) { return "/", nil },
	}
	f.IO, _, _, _ = Test()
	root := NewCmdRoot(f)
	root.InitDefaultCompletionCmd()
	root.InitDefaultVersionFlag()
	disableAutoGenTag(root)
	return root
}

func disableAutoGenTag(c *cobra.Command) {
	c.DisableAutoGenTag = true // no "generated on <date>" line
	for _, sub := range c.Commands() {
		disableAutoGenTag(sub)
	}
}

// GenDocs writes the Markdown reference and the man pages under root (the
// module root), replacing what was there.
func GenDocs(root string) error {
	tree := DocsTree()
	for _, d := range []string{ReferenceDir, ManDir} {
		dir := filepath.Join(root, d)
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	if err := doc.GenMarkdownTree(tree, filepath.Join(root, ReferenceDir)); err != nil {
		return fmt.Errorf("markdown reference: %w", err)
	}
	hdr := &doc.GenManHeader{Title: "JOBTRIAGE", Section: "1", Date: &manDate, Source: "jobtriage", Manual: "jobtriage manual"}
	if err := doc.GenManTree(tree, hdr, filepath.Join(root, ManDir)); err != nil {
		return fmt.Errorf("man pages: %w", err)
	}
	return nil
}
