package cmd

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
)

func TestNewCmdTUI(t *testing.T) {
	tty := func(t *testing.T, args ...string) parsed[TUIOptions] {
		t.Helper()
		return parseWithTTY(t, NewCmdTUI, args...)
	}
	p := tty(t)
	if o := p.opts; p.code != ExitOK || o.ReadOnly || o.Threshold != 10 || o.Window != time.Minute || o.TrendWindow != "1h" ||
		o.NewSince != "" || o.Refresh != 10*time.Second || o.DBConns != nil {
		t.Fatalf("defaults: exit %d %s %+v", p.code, p.err, o)
	}
	p = tty(t, "--read-only", "--threshold", "3", "--window", "5m", "--trend-window", "6h", "--new-since", "2d", "--refresh", "0", "--database-connection", "db")
	if o := p.opts; p.code != ExitOK || !o.ReadOnly || o.Threshold != 3 || o.Window != 5*time.Minute || o.TrendWindow != "6h" ||
		o.NewSince != "2d" || o.Refresh != 0 || !reflect.DeepEqual(o.DBConns, []string{"db"}) {
		t.Errorf("flags: exit %d %s %+v", p.code, p.err, o)
	}
	if p := tty(t, "--archive", "forgotten.ndjson.gz"); p.code != ExitOK || p.opts.Archive.Path != "forgotten.ndjson.gz" {
		t.Errorf("--archive: exit %d %s %+v", p.code, p.err, p.opts)
	}
	for want, args := range map[string][]string{
		"the terminal UI draws on stdout": {"--archive", "-"},
		"--read-only forgets nothing":     {"--archive", "a.ndjson", "--read-only"},
		"must not be negative":            {"--threshold", "-1"},
		"--trend-window":                  {"--trend-window", "soon"},
		"takes no arguments":              {"extra"},
	} {
		if p := tty(t, args...); p.code != ExitUsage || p.opts != nil || !strings.Contains(p.err, want) {
			t.Errorf("%v: exit %d %q", args, p.code, p.err)
		}
	}
	// Without a terminal it refuses, pointing at the script commands.
	if p := parseWith(t, NewCmdTUI); p.code != ExitUsage || p.opts != nil || !strings.Contains(p.err, "tui needs a terminal") {
		t.Errorf("no tty: exit %d %q", p.code, p.err)
	}
}

// TestTUIRunWiring: tui opens the store through the factory, names the
// target in its header, draws the signatures and quits on q with exit 0.
func TestTUIRunWiring(t *testing.T) {
	dsn, _ := seed(t)
	h := newHarness(t, true)
	h.in.WriteString("q")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if code := Run(ctx, h.f, []string{"tui", "--dsn", dsn, "--read-only", "--refresh", "0"}); code != ExitOK {
		t.Fatalf("exit %d: %s", code, h.errOut.String())
	}
	if ctx.Err() != nil {
		t.Fatal("tui did not quit on q")
	}
	if out := h.out.String(); !strings.Contains(out, "sqlite:") {
		t.Errorf("the header does not name the database:\n%q", out)
	}
}

func TestTUIRunErrors(t *testing.T) {
	h := newHarness(t, true)
	opts := &TUIOptions{IO: h.f.IO, Now: h.f.Now, TrendWindow: "1h"}
	boom := errors.New("boom")
	opts.Service = func(context.Context) (*triage.Service, error) { return nil, boom }
	if err := tuiRun(context.Background(), opts); !errors.Is(err, boom) {
		t.Errorf("a store that does not open: %v", err)
	}
	dsn, _ := seed(t)
	h.f.Conn.DSN = dsn
	opts.Service = h.f.Service
	opts.NewSince = "whenever"
	if err := tuiRun(context.Background(), opts); exitCodeFor(err) != ExitUsage || !strings.Contains(err.Error(), "--new-since") {
		t.Errorf("a bad --new-since: %v", err)
	}
	// An archive that cannot be opened stops the TUI before it starts.
	opts.NewSince = ""
	opts.Archive.Path = filepath.Join(t.TempDir(), "missing", "forgotten.ndjson")
	if err := tuiRun(context.Background(), opts); err == nil || !strings.Contains(err.Error(), "forgotten.ndjson") {
		t.Errorf("an archive in a missing directory: %v", err)
	}
	opts.Archive.Path = ""
	// An interrupt (the context cancelled) ends the TUI without an error.
	cancelled, cancel := context.WithCancel(context.Background())
	opts.Service = func(context.Context) (*triage.Service, error) {
		defer cancel() // interrupted once the store is open
		return h.f.Service(context.Background())
	}
	if err := tuiRun(cancelled, opts); err != nil {
		t.Errorf("a cancelled tui: %v", err)
	}
	h.f.Close()
}

// TestArchiveHelpOffersStdoutOnlyWhereTaken: prune, flush and forget take
// --archive - and say so; tui refuses it (it draws on stdout), so its help
// must not offer it.
func TestArchiveHelpOffersStdoutOnlyWhereTaken(t *testing.T) {
	for _, c := range []string{"prune", "flush", "forget"} {
		if h := helpOf(t, "jobtriage "+c); !strings.Contains(h, "- for stdout") {
			t.Errorf("%s --help does not offer --archive -:\n%s", c, h)
		}
	}
	h := helpOf(t, "jobtriage tui")
	if strings.Contains(h, "- for stdout") || !strings.Contains(h, "--archive PATH") || !strings.Contains(h, "not stdout") {
		t.Errorf("tui --help offers --archive - (which tui refuses) or lost --archive:\n%s", h)
	}
}
