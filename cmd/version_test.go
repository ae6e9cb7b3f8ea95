package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/jobtriage/jobtriage/internal/buildinfo"
)

func TestNewCmdVersion(t *testing.T) {
	f := &Factory{}
	f.IO, _, _, _ = Test()
	var got *VersionOptions
	c := NewCmdVersion(f, func(_ context.Context, o *VersionOptions) error { got = o; return nil })
	c.SetArgs(nil)
	if err := c.Execute(); err != nil || got == nil || got.Info == nil {
		t.Fatalf("runF not called with Info: %v %+v", err, got)
	}
	c.SetArgs([]string{"extra"})
	c.SilenceErrors, c.SilenceUsage = true, true
	if err := c.Execute(); err == nil {
		t.Error("version took an argument")
	}
}

func TestVersionAndFlagPrintTheSame(t *testing.T) {
	h := newHarness(t, false)
	if code := h.run("version"); code != ExitOK {
		t.Fatalf("version: exit %d: %s", code, h.errOut)
	}
	cmdOut := h.out.String()
	if code := h.run("--version"); code != ExitOK {
		t.Fatalf("--version: exit %d: %s", code, h.errOut)
	}
	if h.out.String() != cmdOut || cmdOut != buildinfo.Read().String() {
		t.Errorf("version printed\n%s--version printed\n%swant\n%s", cmdOut, h.out.String(), buildinfo.Read().String())
	}
}

func TestVersionRunPrintsInfo(t *testing.T) {
	io, _, out, _ := Test()
	in := buildinfo.Info{Version: "1.2.0", Commit: "abc", Date: "2026-12-01T00:00:00Z", GoVersion: "go1.26.8", Platform: "linux/amd64"}
	if err := versionRun(context.Background(), &VersionOptions{IO: io, Info: func() buildinfo.Info { return in }}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"jobtriage 1.2.0\n", "commit: abc\n", "built:  2026-12-01T00:00:00Z\n", "go:     go1.26.8 linux/amd64\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestVersionTemplateKeepsBraces(t *testing.T) {
	root := &cobra.Command{Use: "x", Run: func(*cobra.Command, []string) {}}
	in := buildinfo.Info{Version: "1.0.0-{{weird}}", GoVersion: "go1", Platform: "p"}
	setVersionFlag(root, in)
	var b strings.Builder
	root.SetOut(&b)
	root.SetArgs([]string{"--version"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if b.String() != in.String() {
		t.Errorf("--version printed\n%s\nwant\n%s", b.String(), in.String())
	}
}

func TestVersionJSON(t *testing.T) {
	f := &Factory{}
	f.IO, _, _, _ = Test()
	var got *VersionOptions
	c := NewCmdVersion(f, func(_ context.Context, o *VersionOptions) error { got = o; return nil })
	c.SetArgs([]string{"--json"})
	if err := c.Execute(); err != nil || !got.JSON {
		t.Fatalf("--json not parsed: %v %+v", err, got)
	}
	io, _, out, _ := Test()
	in := buildinfo.Info{Version: "1.2.0", Commit: "abc", GoVersion: "go1.26.8", Platform: "linux/arm64"}
	if err := versionRun(context.Background(), &VersionOptions{IO: io, JSON: true, Info: func() buildinfo.Info { return in }}); err != nil {
		t.Fatal(err)
	}
	want := `{"schema_version":1,"version":"1.2.0","commit":"abc","build_date":null,"modified":false,"go_version":"go1.26.8","platform":"linux/arm64"}`
	if compact(t, out.String()) != want {
		t.Errorf("version --json =\n%s\nwant\n%s", out, want)
	}
}

func compact(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, s)
	}
	return b.String()
}
