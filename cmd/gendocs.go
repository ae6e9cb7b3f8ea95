package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"
)

// Where the generated command reference lives, relative to the module root.
const (
	ReferenceDir = "docs/reference"
	ManDir       = "docs/man"
)

// manDate is every man page's date, fixed so that regenerating from unchanged
// code changes no byte; the release's date is in CHANGELOG.md.
var manDate = time.Date(2026, time.December, 1, 0, 0, 0, 0, time.UTC)

// DocsTree is the command tree the reference documents: an empty environment
// (no default depends on the machine), cobra's completion command added.
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
	return root
}

// GenDocs writes the Markdown reference and the man pages under the module root, replacing them.
func GenDocs(root string) error {
	for _, d := range []string{ReferenceDir, ManDir} {
		dir := filepath.Join(root, d)
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	tree := DocsTree()
	escapeTree(tree, "<", nil)
	if err := doc.GenMarkdownTree(tree, filepath.Join(root, ReferenceDir)); err != nil {
		return fmt.Errorf("markdown reference: %w", err)
	}
	// The man pages get a tree of their own: cobra writes all of it (synopsis,
	// flag usages) as Markdown for go-md2man, which drops a <placeholder>.
	manTree := DocsTree()
	escapeTree(manTree, manSpecial, map[*pflag.Flag]bool{})
	hdr := &doc.GenManHeader{Title: "JOBTRIAGE", Section: "1", Date: &manDate, Source: "jobtriage", Manual: "jobtriage manual"}
	if err := doc.GenManTree(manTree, hdr, filepath.Join(root, ManDir)); err != nil {
		return fmt.Errorf("man pages: %w", err)
	}
	return nil
}

// manSpecial are the characters Markdown would read as markup in the texts
// cobra hands to go-md2man; a backslash before each makes it literal.
const manSpecial = "\\<>*_[]"

// escapeTree escapes special in Short and Long, which cobra writes unfenced,
// so that a renderer shows <id> instead of dropping it as a tag. For the man
// pages (done not nil) also in Use's arguments and each flag's usage, once
// per flag (persistent flags are shared). Example is fenced: left alone.
func escapeTree(c *cobra.Command, special string, done map[*pflag.Flag]bool) {
	c.DisableAutoGenTag = true // no "generated on <date>" line
	c.Short = escapeMarkdown(c.Short, special)
	c.Long = escapeLong(c.Long, special)
	if done != nil {
		if name, args, ok := strings.Cut(c.Use, " "); ok {
			c.Use = name + " " + escapeMarkdown(args, special)
		}
		for _, fs := range []*pflag.FlagSet{c.LocalFlags(), c.InheritedFlags(), c.PersistentFlags()} {
			fs.VisitAll(func(f *pflag.Flag) {
				if !done[f] {
					done[f] = true
					f.Usage = escapeMarkdown(f.Usage, special)
				}
			})
		}
	}
	for _, sub := range c.Commands() {
		escapeTree(sub, special, done)
	}
}

// escapeLong escapes special in the prose lines of a Long text. Code blocks
// (lines indented by four spaces or a tab, and fences) are left alone:
// Markdown shows them verbatim, a backslash included.
func escapeLong(long, special string) string {
	lines := strings.Split(long, "\n")
	fenced := false
	for i, l := range lines {
		switch {
		case strings.HasPrefix(strings.TrimSpace(l), "```"):
			fenced = !fenced
		case !fenced && !strings.HasPrefix(l, "    ") && !strings.HasPrefix(l, "\t"):
			lines[i] = escapeMarkdown(l, special)
		}
	}
	return strings.Join(lines, "\n")
}

// escapeMarkdown puts a backslash before each of special in s, outside `code
// spans` (where a backslash is literal); a '<' only where it opens what reads
// as a tag (<id>, </x>): "< now" stays.
func escapeMarkdown(s, special string) string {
	var b strings.Builder
	inCode := false
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case r == '`':
			inCode = !inCode
		case inCode || !strings.ContainsRune(special, r):
		case r != '<' || i+1 < len(rs) && (unicode.IsLetter(rs[i+1]) || rs[i+1] == '/'):
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
