package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobtriage/jobtriage/internal/demo"
)

func TestNewCmdDemo(t *testing.T) {
	p := parseWith(t, NewCmdDemo)
	if o := p.opts; p.code != ExitOK || o.Path != "jobtriage-demo.sqlite" || o.Force || o.Executable == nil || o.Now == nil {
		t.Fatalf("defaults: exit %d %s %+v", p.code, p.err, o)
	}
	p = parseWith(t, NewCmdDemo, "--path", "x.sqlite", "--force")
	if o := p.opts; p.code != ExitOK || o.Path != "x.sqlite" || !o.Force {
		t.Errorf("flags: exit %d %s %+v", p.code, p.err, o)
	}
	usageCases(t, NewCmdDemo, map[string][]string{
		"takes no arguments": {"now"},
		"invalid argument":   {"--force=perhaps"},
	})
}

// TestDemoRun: demo creates the database and prints its DSN on stdout (the
// chatter, with the APP_KEY and a command to try, on stderr); run again it
// keeps the file, and --force makes a new one. The DSN it prints works.
func TestDemoRun(t *testing.T) {
	h := newHarness(t, false)
	path := filepath.Join(h.dir, "demo.sqlite")
	if code := h.run("demo", "--path", path); code != ExitOK {
		t.Fatalf("exit %d: %s", code, h.errOut.String())
	}
	if got := h.out.String(); got != "sqlite:"+path+"\n" {
		t.Errorf("stdout %q, want the DSN alone", got)
	}
	if e := h.errOut.String(); !strings.Contains(e, "created "+path) || !strings.Contains(e, demo.DemoAppKey) ||
		!strings.Contains(e, " failed --group --dsn sqlite:"+path+"\n") {
		t.Errorf("stderr: %q", e)
	}
	first, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if code := h.run("failed", "--dsn", "sqlite:"+path, "--limit", "1"); code != ExitOK || strings.Count(h.out.String(), "\n") != 1 {
		t.Errorf("the demo database does not list: exit %d %q %s", code, h.out.String(), h.errOut.String())
	}

	if code := h.run("demo", "--path", path); code != ExitOK || h.out.String() != "sqlite:"+path+"\n" ||
		!strings.Contains(h.errOut.String(), "exists; using it (--force recreates it)") {
		t.Errorf("second run: exit %d %q %q", code, h.out.String(), h.errOut.String())
	}
	if again, _ := os.Stat(path); !os.SameFile(first, again) || !again.ModTime().Equal(first.ModTime()) {
		t.Error("a second run without --force changed the file")
	}

	if err := os.WriteFile(path, []byte("not a database"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code := h.run("demo", "--path", path, "--force"); code != ExitOK || !strings.Contains(h.errOut.String(), "created") {
		t.Fatalf("--force: exit %d %s", code, h.errOut.String())
	}
	if b, _ := os.ReadFile(path); strings.HasPrefix(string(b), "not a database") {
		t.Error("--force kept the old file")
	}

	// A path in a directory that does not exist: exit 1 with one line.
	bad := filepath.Join(h.dir, "missing", "demo.sqlite")
	if code := h.run("demo", "--path", bad); code != ExitError || !strings.Contains(h.errOut.String(), "creating the demo database") {
		t.Errorf("unwritable path: exit %d %q", code, h.errOut.String())
	}
}
