package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestBuiltBinaryVersion runs the built binary's --version: stamped as the
// release build stamps it (.goreleaser.yaml's ldflags), and built from the
// clone with Go's VCS information, whose commit must be HEAD's.
func TestBuiltBinaryVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary twice")
	}
	const pkg = "github.com/jobtriage/jobtriage/internal/buildinfo"
	dir := t.TempDir()
	stamped := dir + "/stamped"
	ld := "-X " + pkg + ".version=v9.8.7 -X " + pkg + ".commit=0123456789abcdef -X " + pkg + ".date=2026-12-01T00:00:00Z"
	if out, err := exec.Command("go", "build", "-ldflags", ld, "-o", stamped, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(stamped, "--version").Output()
	if err != nil {
		t.Fatalf("--version: %v", err)
	}
	for _, want := range []string{"jobtriage 9.8.7\n", "commit: 0123456789abcdef\n", "built:  2026-12-01T00:00:00Z\n", "go:     go1."} {
		if !strings.Contains(string(out), want) {
			t.Errorf("stamped --version lacks %q:\n%s", want, out)
		}
	}

	// Go reads VCS information only where .git is a directory: a clone,
	// not a `git worktree` (whose .git is a file).
	if fi, err := os.Stat(".git"); err != nil || !fi.IsDir() {
		t.Skip("the VCS half needs a clone (.git a directory); this is a worktree or no checkout")
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatalf("git rev-parse HEAD: %v", err)
	}
	clone := dir + "/clone"
	build := exec.Command("go", "build", "-buildvcs=true", "-o", clone, ".")
	build.Env = append(os.Environ(), "GOFLAGS=") // this project's machines set GOFLAGS=-buildvcs=false
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -buildvcs=true: %v\n%s", err, out)
	}
	out, err = exec.Command(clone, "version").Output()
	if err != nil {
		t.Fatalf("version: %v", err)
	}
	// Go derives the main module's version from git: the tag at HEAD, or a
	// pseudo-version naming the commit (v0.0.0-<time>-<12 hex digits>).
	sha := strings.TrimSpace(string(head))
	if want := "commit: " + sha; !strings.Contains(string(out), want) {
		t.Errorf("clone build's version:\n%swant %q", out, want)
	}
	first, _, _ := strings.Cut(string(out), "\n")
	if first == "jobtriage dev" || !(strings.Contains(first, sha[:12]) || !strings.Contains(first, "-")) {
		t.Errorf("clone build's version line %q: want the tag or a pseudo-version naming %s", first, sha[:12])
	}
}
