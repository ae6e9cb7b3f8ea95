package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestReferenceIsCurrent fails when the committed command reference
// (docs/reference, docs/man) differs from what the command tree generates:
// a flag, command or help text changed without `go run ./internal/gendocs`.
func TestReferenceIsCurrent(t *testing.T) {
	gen := t.TempDir()
	if err := GenDocs(gen); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{ReferenceDir, ManDir} {
		want := readTree(t, filepath.Join(gen, d))
		got := readTree(t, filepath.Join("..", d))
		if len(want) == 0 {
			t.Fatalf("nothing generated under %s", d)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s is not what the command tree generates (-generated +committed); run `go run ./internal/gendocs` and commit:\n%s", d, diff)
		}
	}
}

func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	ents, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

// TestReferenceCoversEveryCommand: every command the root lists has its
// page, and completion is listed, not hidden.
func TestReferenceCoversEveryCommand(t *testing.T) {
	gen := t.TempDir()
	if err := GenDocs(gen); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range DocsTree().Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	sort.Strings(names)
	if !strings.Contains(strings.Join(names, " "), "completion") || !strings.Contains(strings.Join(names, " "), "version") {
		t.Errorf("available commands %v lack completion or version", names)
	}
	for _, n := range names {
		for _, p := range []string{filepath.Join(gen, ReferenceDir, "jobtriage_"+n+".md"), filepath.Join(gen, ManDir, "jobtriage-"+n+".1")} {
			if _, err := os.Stat(p); err != nil {
				t.Errorf("no page for %s: %v", n, err)
			}
		}
	}
	root, err := os.ReadFile(filepath.Join(gen, ManDir, "jobtriage.1"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(root), "Dec 2026") || !strings.Contains(string(root), "--version") {
		t.Errorf("root man page lacks the fixed date or --version:\n%s", root)
	}
}

// TestManAndReferenceSayWhatHelpSays: for every command, its man page and
// its Markdown page carry the usage line `--help` prints, every flag's
// usage as `--help` prints it, and every <placeholder> of its description
// (go-md2man and Markdown renderers read an unescaped <id> as an HTML tag
// and drop it).
func TestManAndReferenceSayWhatHelpSays(t *testing.T) {
	gen := t.TempDir()
	if err := GenDocs(gen); err != nil {
		t.Fatal(err)
	}
	placeholder := regexp.MustCompile(`<[a-z][a-z-]*>`)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !c.IsAvailableCommand() && c.HasParent() {
			return
		}
		help := helpOf(t, c.CommandPath())
		c.InitDefaultHelpFlag() // as --help and the generators do
		usage := c.UseLine()
		// A command that only groups others prints "PATH [command]" there.
		if c.Runnable() && !strings.Contains(help, "Usage:\n  "+usage+"\n") {
			t.Errorf("%s: --help does not print the usage line %q:\n%s", c.CommandPath(), usage, help)
		}
		base := strings.ReplaceAll(c.CommandPath(), " ", "_")
		md := string(mustRead(t, filepath.Join(gen, ReferenceDir, base+".md")))
		man := roffText(string(mustRead(t, filepath.Join(gen, ManDir, strings.ReplaceAll(c.CommandPath(), " ", "-")+".1"))))
		if c.Runnable() && !strings.Contains(md, "```\n"+usage+"\n```") {
			t.Errorf("%s: the reference lacks the usage line %q", c.CommandPath(), usage)
		}
		if !strings.Contains(man, usage) {
			t.Errorf("%s: the man page lacks the usage line %q:\n%s", c.CommandPath(), usage, man)
		}
		flags := pflag.NewFlagSet("", pflag.ContinueOnError)
		flags.AddFlagSet(c.LocalFlags())
		flags.AddFlagSet(c.InheritedFlags())
		flags.VisitAll(func(f *pflag.Flag) {
			if f.Hidden {
				return
			}
			_, u := pflag.UnquoteUsage(f)
			if !strings.Contains(help, u) {
				t.Errorf("%s --%s: --help lacks its usage %q", c.CommandPath(), f.Name, u)
			}
			if !strings.Contains(md, u) {
				t.Errorf("%s --%s: the reference lacks its usage %q", c.CommandPath(), f.Name, u)
			}
			if !strings.Contains(man, "--"+f.Name) || !strings.Contains(man, u) {
				t.Errorf("%s --%s: the man page lacks the flag or its usage %q", c.CommandPath(), f.Name, u)
			}
		})
		for _, p := range placeholder.FindAllString(c.Long, -1) {
			if !strings.Contains(man, p) {
				t.Errorf("%s: the man page's description lost %s", c.CommandPath(), p)
			}
			if !strings.Contains(md, `\`+p) && !strings.Contains(md, "`"+p) {
				t.Errorf("%s: the reference's description leaves %s unescaped (a renderer drops it as a tag)", c.CommandPath(), p)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(DocsTree())
}

// helpOf is what `PATH --help` prints on the documented tree.
func helpOf(t *testing.T, path string) string {
	t.Helper()
	root := DocsTree()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append(strings.Fields(path)[1:], "--help"))
	if err := root.Execute(); err != nil {
		t.Fatalf("%s --help: %v", path, err)
	}
	return out.String()
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// roffText is the text a man page shows, near enough to compare: requests
// dropped, font changes and the escapes go-md2man writes undone.
func roffText(roff string) string {
	undo := strings.NewReplacer(`\fB`, "", `\fI`, "", `\fR`, "", `\fP`, "", `\&`, "", `\-`, "-", `\(aq`, "'", `\e`, `\`, `\\`, `\`)
	var lines []string
	for _, l := range strings.Split(roff, "\n") {
		if strings.HasPrefix(l, ".") {
			continue
		}
		lines = append(lines, strings.TrimPrefix(undo.Replace(l), "\t"))
	}
	return strings.Join(lines, "\n")
}
