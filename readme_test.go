//go:build unix

package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// demoDSN marks the README's examples that run on the demo database.
const demoDSN = "sqlite:jobtriage-demo.sqlite"

// inlineCode is a Markdown code span.
var inlineCode = regexp.MustCompile("`([^`]+)`")

// readmeDemoCommands are the commands README.md prints for the demo
// database: each line of a fenced block, and each code span, that runs
// jobtriage (or `go run .`) with the demo DSN. Chained commands (`a && b`)
// are split.
func readmeDemoCommands(t *testing.T, readme string) []string {
	t.Helper()
	var cmds []string
	add := func(s string) {
		for _, part := range strings.Split(s, " && ") {
			part = strings.TrimSpace(part)
			if (strings.HasPrefix(part, "jobtriage ") || strings.HasPrefix(part, "go run . ")) && strings.Contains(part, demoDSN) {
				cmds = append(cmds, part)
			}
		}
	}
	inFence := false
	sc := bufio.NewScanner(strings.NewReader(readme))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
			continue
		}
		if inFence {
			add(line)
			continue
		}
		for _, m := range inlineCode.FindAllStringSubmatch(line, -1) {
			add(m[1])
		}
	}
	return cmds
}

// TestReadmeDemoExamplesRunAsPrinted runs the demo's `try:` hint and every
// README command on the demo database, as printed, against a fresh demo
// database made by the built binary; `go run .` and `jobtriage` both run
// that binary. A command that needs a terminal (tui) runs on a pty and is
// quit with q. Each must exit 0: a placeholder, a removed flag or a
// signature id the demo no longer has fails here.
func TestReadmeDemoExamplesRunAsPrinted(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	cmds := readmeDemoCommands(t, string(readme))
	if len(cmds) < 5 {
		t.Fatalf("found only %d demo commands in README.md: %q", len(cmds), cmds)
	}
	bin := buildBinary(t)
	binDir := filepath.Dir(bin)
	dir := t.TempDir()
	demo := exec.Command(bin, "demo")
	demo.Dir = dir
	out, err := demo.CombinedOutput()
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	hint := ""
	for _, line := range strings.Split(string(out), "\n") {
		if h, ok := strings.CutPrefix(line, "try: "); ok {
			hint = h
		}
	}
	if !strings.HasPrefix(hint, "jobtriage ") || !strings.Contains(hint, demoDSN) {
		t.Fatalf("demo printed no `try: jobtriage … %s` hint:\n%s", demoDSN, out)
	}
	env := append(os.Environ(), "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR=1")
	for _, c := range append([]string{hint}, cmds...) {
		line := c
		if rest, ok := strings.CutPrefix(line, "go run . "); ok {
			line = "jobtriage " + rest
		}
		t.Run(c, func(t *testing.T) {
			args := strings.Fields(line)
			if len(args) > 1 && args[1] == "tui" {
				out, _, _ := runOnSilentPTY(t, bin, dir, "q", "400 failed", args[1:]...)
				// q is typed once the demo's count is on screen; a TUI that
				// never shows it is killed after 30 s and fails.
				if !strings.Contains(out, "Signatures") {
					t.Errorf("%s: the TUI did not show its signatures screen:\n%q", c, out)
				}
				return
			}
			sh := exec.Command("sh", "-c", line)
			sh.Dir, sh.Env = dir, env
			out, err := sh.CombinedOutput()
			if err != nil {
				t.Errorf("%s: %v\n%s", c, err, out)
			} else if len(strings.TrimSpace(string(out))) == 0 {
				t.Errorf("%s printed nothing", c)
			}
		})
	}
}

// TestReadmeTestsSectionNamesEveryTestServerVariable: every JOBTRIAGE_TEST_*
// variable a test reads is named in the README's Tests section, so a
// contributor learns there which servers the suite uses and how to point
// it at them.
func TestReadmeTestsSectionNamesEveryTestServerVariable(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Tests\n")
	if !ok {
		t.Fatal("README.md has no ## Tests section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	name := regexp.MustCompile(`JOBTRIAGE_TEST_[A-Z_]*[A-Z]`)
	seen := map[string]string{}
	err = filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (path == "third_party" || strings.HasPrefix(d.Name(), ".")) && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, v := range name.FindAllString(string(b), -1) {
			seen[v] = path
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) == 0 {
		t.Fatal("found no JOBTRIAGE_TEST_ variable in the sources")
	}
	for v, path := range seen {
		if !strings.Contains(section, "`"+v+"`") {
			t.Errorf("%s (read in %s) is not named in README.md's Tests section", v, path)
		}
	}
}
