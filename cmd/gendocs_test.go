package cmd

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
