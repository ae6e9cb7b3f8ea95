package cmd

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jobtriage/jobtriage/internal/appprofile"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

// contextsFile writes a configuration file with a production and a staging
// context over two seeded SQLite databases, and returns its path and the
// DSNs.
func contextsFile(t *testing.T, current string) (path, prodDSN, stagingDSN string) {
	t.Helper()
	prodDSN, _ = seed(t)
	stagingDSN, _ = seed(t)
	doc := "# my apps\n"
	if current != "" {
		doc += "current-context = \"" + current + "\"\n"
	}
	doc += `
[contexts.shop-prod]
dsn = "` + prodDSN + `"
label = "Shop EU"
production = true
timezone = "Europe/Paris"

[contexts.shop-prod.notify]
slack-webhook = "https://hooks.slack.com/services/T0/B0/SECRETPART"

[contexts.shop-staging]
dsn = "` + stagingDSN + `"
color = "yellow"
`
	path = filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, prodDSN, stagingDSN
}

func withEnv(h *harness, env map[string]string) {
	h.f.Getenv = func(k string) string { return env[k] }
	var environ []string
	for k, v := range env {
		environ = append(environ, k+"="+v)
	}
	h.f.Environ = func() []string { return environ }
}

func TestNewCmdContext(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		action string
		name   string
		json   bool
		err    string
	}{
		{[]string{"list"}, "list", "", false, ""},
		{[]string{"list", "--json"}, "list", "", true, ""},
		{[]string{"show"}, "show", "", false, ""},
		{[]string{"show", "prod", "--json"}, "show", "prod", true, ""},
		{[]string{"use", "prod"}, "use", "prod", false, ""},
		{[]string{"use"}, "", "", false, "accepts 1 arg"},
		{[]string{"list", "x"}, "", "", false, "takes no arguments"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			h := newHarness(t, false)
			var got *ContextOptions
			cmd := NewCmdContext(h.f, func(_ context.Context, o *ContextOptions) error { got = o; return nil })
			cmd.SetArgs(tc.args)
			cmd.SetOut(h.out)
			cmd.SetErr(h.errOut)
			err := cmd.Execute()
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got == nil {
				t.Fatalf("error %v", err)
			}
			if got.Action != tc.action || got.Name != tc.name || got.JSON != tc.json {
				t.Errorf("options %+v", got)
			}
		})
	}
}

func TestContextListShowUse(t *testing.T) {
	path, _, _ := contextsFile(t, "shop-staging")
	h := newHarness(t, false)
	withEnv(h, map[string]string{"JOBTRIAGE_CONFIG": path})

	if code := h.run("context", "list"); code != ExitOK {
		t.Fatalf("list exit %d: %s", code, h.errOut.String())
	}
	if strings.Count(h.out.String(), "\n") != 2 ||
		!strings.Contains(h.out.String(), "\tshop-prod\tShop EU\tyes\tsqlite:") ||
		!strings.Contains(h.out.String(), "*\tshop-staging\t\t\tsqlite:") {
		t.Errorf("list:\n%s", h.out.String())
	}

	if code := h.run("context", "show", "shop-prod"); code != ExitOK {
		t.Fatalf("show exit %d: %s", code, h.errOut.String())
	}
	out := h.out.String()
	kv := func(k, v string) string { return fmt.Sprintf("%-*s %s\n", showKeyWidth, k+":", v) }
	if strings.Contains(out, "SECRETPART") || strings.Contains(out, "T0/B0") || !strings.Contains(out, kv("notify.slack-webhook", "****")) ||
		!strings.Contains(out, kv("production", "yes")) || !strings.Contains(out, kv("defined at", path+":4")) ||
		!strings.Contains(out, kv("current", "no")) || !strings.Contains(out, kv("timezone", "Europe/Paris")) {
		t.Errorf("show:\n%s", out)
	}

	// The context in force: --context beats JOBTRIAGE_CONTEXT beats the file.
	if code := h.run("context", "show", "--context", "shop-prod", "--json"); code != ExitOK {
		t.Fatalf("show --json exit %d: %s", code, h.errOut.String())
	}
	var doc contextShowDoc
	if err := json.Unmarshal(h.out.Bytes(), &doc); err != nil || doc.Context.Name != "shop-prod" || !doc.Context.Current ||
		*doc.Context.Notify.SlackWebhook != "****" || *doc.Context.Color != "red" || doc.Context.JobsDSN != nil {
		t.Errorf("show --json: %v %s", err, h.out.String())
	}
	withEnv(h, map[string]string{"JOBTRIAGE_CONFIG": path, "JOBTRIAGE_CONTEXT": "shop-prod"})
	if code := h.run("context", "show"); code != ExitOK || !strings.Contains(h.out.String(), kv("name", "shop-prod")) {
		t.Errorf("JOBTRIAGE_CONTEXT not in force: %d %s", code, h.out.String())
	}

	if code := h.run("context", "use", "shop-prod"); code != ExitOK {
		t.Fatalf("use exit %d: %s", code, h.errOut.String())
	}
	if !strings.Contains(h.out.String(), "Switched to context shop-prod (Shop EU) [PRODUCTION] ("+path+").") {
		t.Errorf("use said %q", h.out.String())
	}
	if h.errOut.String() != "" {
		t.Errorf("use with the same JOBTRIAGE_CONTEXT warned: %q", h.errOut.String())
	}
	raw, _ := os.ReadFile(path)
	if !strings.Contains(string(raw), "current-context = \"shop-prod\"\n") || !strings.HasPrefix(string(raw), "# my apps\n") {
		t.Errorf("file after use:\n%s", raw)
	}
	withEnv(h, map[string]string{"JOBTRIAGE_CONFIG": path, "JOBTRIAGE_CONTEXT": "shop-staging"})
	if code := h.run("context", "use", "shop-prod"); code != ExitOK || !strings.Contains(h.errOut.String(), "JOBTRIAGE_CONTEXT=shop-staging is set and wins") {
		t.Errorf("use under another JOBTRIAGE_CONTEXT: %d %q", code, h.errOut.String())
	}
}

func TestContextErrors(t *testing.T) {
	path, _, _ := contextsFile(t, "")
	bad := filepath.Join(t.TempDir(), "bad.toml")
	if err := os.WriteFile(bad, []byte("[contexts.a]\ndsn = \"sqlite:/x.db\"\ncolour = \"red\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		code ExitCode
		err  string
	}{
		{"unknown --context", map[string]string{"JOBTRIAGE_CONFIG": path}, []string{"failed", "--context", "nope"}, ExitUsage,
			`jobtriage: --context "nope": no such context in ` + path + " (have: shop-prod, shop-staging)"},
		{"unknown JOBTRIAGE_CONTEXT", map[string]string{"JOBTRIAGE_CONFIG": path, "JOBTRIAGE_CONTEXT": "nope"}, []string{"failed"}, ExitUsage,
			`JOBTRIAGE_CONTEXT "nope": no such context`},
		{"unknown key", nil, []string{"failed", "--config", bad}, ExitUnreachable, bad + `:3: unknown key "contexts.a.colour"`},
		{"missing explicit file", nil, []string{"context", "list", "--config", bad + ".none"}, ExitUnreachable, "no such configuration file"},
		{"show names none", map[string]string{"JOBTRIAGE_CONFIG": path}, []string{"context", "show"}, ExitUsage, "no context in force"},
		{"show unknown", map[string]string{"JOBTRIAGE_CONFIG": path}, []string{"context", "show", "x"}, ExitUsage, `no context "x"`},
		{"use unknown", map[string]string{"JOBTRIAGE_CONFIG": path}, []string{"context", "use", "x"}, ExitUsage, `no context "x"`},
		{"use without a file", map[string]string{"HOME": t.TempDir()}, []string{"context", "use", "x"}, ExitUnreachable, "no configuration file (create"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, false)
			withEnv(h, tc.env)
			if code := h.run(tc.args...); code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, h.errOut.String())
			}
			if !strings.Contains(h.errOut.String(), tc.err) || strings.Count(strings.TrimSpace(h.errOut.String()), "\n") > 1 {
				t.Errorf("stderr %q, want one line with %q", h.errOut.String(), tc.err)
			}
		})
	}
}

func TestContextListWithoutFile(t *testing.T) {
	h := newHarness(t, false)
	home := t.TempDir()
	withEnv(h, map[string]string{"HOME": home})
	if code := h.run("context", "list"); code != ExitOK || h.out.String() != "" ||
		!strings.Contains(h.errOut.String(), "no contexts: add [contexts.NAME] tables to "+filepath.Join(home, ".config/jobtriage/config.toml")) {
		t.Errorf("exit %d, out %q, err %q", code, h.out.String(), h.errOut.String())
	}
	if code := h.run("context", "list", "--json"); code != ExitOK || !strings.Contains(h.out.String(), `"contexts": []`) {
		t.Errorf("--json: %d %s", code, h.out.String())
	}
}

// The context settles the database between the flags and the app profile:
// flags > environment > context.
func TestContextPrecedence(t *testing.T) {
	path, prodDSN, stagingDSN := contextsFile(t, "shop-staging")
	h := newHarness(t, false)
	withEnv(h, map[string]string{"JOBTRIAGE_CONFIG": path})
	cfgOf := func(args ...string) (string, string) {
		t.Helper()
		h.f.Conn = ConnFlags{}
		h.f.ContextName = ""
		root := NewCmdRoot(h.f)
		if err := root.ParseFlags(args); err != nil {
			t.Fatal(err)
		}
		h.f.file = nil
		cfg, err := h.f.Config()
		if err != nil {
			t.Fatal(err)
		}
		return cfg.Source, cfg.Target.Path
	}
	pathOf := func(dsn string) string { return strings.TrimPrefix(dsn, "sqlite:") }
	if src, p := cfgOf(); src != "context shop-staging" || p != pathOf(stagingDSN) {
		t.Errorf("current context: %s %s", src, p)
	}
	if src, p := cfgOf("--context", "shop-prod"); src != "context shop-prod (Shop EU) [PRODUCTION]" || p != pathOf(prodDSN) {
		t.Errorf("--context: %s %s", src, p)
	}
	if src, p := cfgOf("--context", "shop-prod", "--dsn", stagingDSN); src != "--dsn" || p != pathOf(stagingDSN) {
		t.Errorf("--dsn over the context: %s %s", src, p)
	}
	withEnv(h, map[string]string{"JOBTRIAGE_CONFIG": path, "JOBTRIAGE_DSN": prodDSN})
	if src, p := cfgOf("--context", "shop-staging"); src != "JOBTRIAGE_DSN" || p != pathOf(prodDSN) {
		t.Errorf("JOBTRIAGE_DSN over the context: %s %s", src, p)
	}
	cfg, _ := h.f.Config()
	if !strings.Contains(strings.Join(cfg.Warnings, "|"), "JOBTRIAGE_DSN overrides the dsn of context shop-staging") {
		t.Errorf("no warning that the environment wins: %v", cfg.Warnings)
	}
	// The context's timezone, under the flag.
	withEnv(h, map[string]string{"JOBTRIAGE_CONFIG": path})
	h.f.file, h.f.ContextName, h.f.Conn = nil, "shop-prod", ConnFlags{}
	if cfg, err := h.f.Config(); err != nil || cfg.Location.String() != "Europe/Paris" {
		t.Errorf("timezone from the context: %v %v", cfg.Location, err)
	}
	h.f.file, h.f.Conn.Timezone = nil, "UTC"
	if cfg, err := h.f.Config(); err != nil || cfg.Location.String() != "UTC" {
		t.Errorf("--timezone over the context: %v %v", cfg.Location, err)
	}
}

// Every prompt and write summary names the context: in its colour on a
// terminal, as the same plain text under NO_COLOR; the audit line too.
func TestPromptsAndSummariesNameTheContext(t *testing.T) {
	path, prodDSN, _ := contextsFile(t, "")
	logPath := filepath.Join(t.TempDir(), "audit.log")
	target := " · sqlite:" + strings.TrimPrefix(prodDSN, "sqlite:") + " table failed_jobs"

	h := newHarness(t, true)
	withEnv(h, map[string]string{"JOBTRIAGE_CONFIG": path})
	h.f.IO.noColor = false // a colour terminal
	h.in.WriteString("n\n")
	if code := h.run("forget", "22222222-2222-4222-8222-222222222222", "--context", "shop-prod"); code != ExitCancelled {
		t.Fatalf("exit %d: %s", code, h.errOut.String())
	}
	wantQ := "Delete 1 failed job for good — \x1b[1;31mcontext shop-prod (Shop EU) [PRODUCTION]\x1b[0m" + target + "? [y/N]"
	if !strings.Contains(h.errOut.String(), wantQ) {
		t.Errorf("prompt %q, want %q", h.errOut.String(), wantQ)
	}

	h = newHarness(t, true) // NO_COLOR (Test streams)
	withEnv(h, map[string]string{"JOBTRIAGE_CONFIG": path})
	h.in.WriteString("y\n")
	if code := h.run("forget", "22222222-2222-4222-8222-222222222222", "--context", "shop-prod", "--audit-log", logPath); code != ExitOK {
		t.Fatalf("exit %d: %s", code, h.errOut.String())
	}
	plain := "— context shop-prod (Shop EU) [PRODUCTION]" + target
	if !strings.Contains(h.errOut.String(), "for good "+plain+"? [y/N]") || strings.Contains(h.errOut.String(), "\x1b") {
		t.Errorf("NO_COLOR prompt %q", h.errOut.String())
	}
	if !strings.Contains(h.out.String(), plain+".") || strings.Contains(h.out.String(), "\x1b") {
		t.Errorf("summary %q", h.out.String())
	}
	raw, _ := os.ReadFile(logPath)
	var entry auditEntry
	if err := json.Unmarshal(lastLine(raw), &entry); err != nil || entry.Context != "shop-prod" {
		t.Errorf("audit line %s: %v", raw, err)
	}
}

var updateContextGolden = flag.Bool("update-context-json", false, "rewrite cmd/testdata/json/context-*.golden.json")

// TestContextJSONSchema pins context list --json (docs/json.md), the
// temporary paths replaced.
func TestContextJSONSchema(t *testing.T) {
	path, prodDSN, stagingDSN := contextsFile(t, "shop-prod")
	h := newHarness(t, false)
	withEnv(h, map[string]string{"JOBTRIAGE_CONFIG": path})
	if code := h.run("context", "list", "--json"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, h.errOut.String())
	}
	got := strings.NewReplacer(path, "CONFIG", strings.TrimPrefix(prodDSN, "sqlite:"), "PROD.sqlite",
		strings.TrimPrefix(stagingDSN, "sqlite:"), "STAGING.sqlite").Replace(h.out.String())
	golden := filepath.Join("testdata", "json", "context-list.golden.json")
	if *updateContextGolden {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update-context-json)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("context list --json differs (-want +got):\n%s", diff)
	}
}

// The TUI's confirmation dialogs name the context too.
func TestTUIDialogsNameTheContext(t *testing.T) {
	path, prodDSN, _ := contextsFile(t, "shop-prod")
	h := newHarness(t, true)
	withEnv(h, map[string]string{"JOBTRIAGE_CONFIG": path})
	var target string
	cmd := NewCmdTUI(h.f, func(ctx context.Context, o *TUIOptions) error {
		svc, err := o.Service(ctx)
		if err == nil {
			target = targetText(svc)
		}
		return err
	})
	cmd.SetArgs(nil)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if want := "context shop-prod (Shop EU) [PRODUCTION] · sqlite:" + strings.TrimPrefix(prodDSN, "sqlite:") + " table failed_jobs"; target != want {
		t.Errorf("target %q, want %q", target, want)
	}
}

// A context's redis URL replaces the address and credentials of the app's
// Redis queue connections, and keeps their prefix.
func TestRedisOverride(t *testing.T) {
	rc := appprofile.RedisConnection{Name: "default", URL: "redis://old:6379", Host: "old", Port: 6379, Password: "p",
		Database: 0, Scheme: "tcp", Prefix: "laravel_database_"}
	got := withRedisOverride(rc, "rediss://u:s3cret@cache.internal:6380/2")
	want := appprofile.RedisConnection{Name: "default", Host: "cache.internal", Port: 6380, Username: "u", Password: "s3cret",
		Database: 2, Scheme: "tls", Prefix: "laravel_database_"}
	if got != want {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if got := withRedisOverride(rc, "redis://cache"); got.Database != 0 || got.Host != "cache" || got.Password != "" || got.Scheme != "tcp" {
		t.Errorf("no database in the URL: %+v", got)
	}
}

// A context that names an app directory reads that app's profile from
// anywhere; its notifiers are used (after the flags and the environment),
// never printed.
func TestContextAppDirectoryAndNotifiers(t *testing.T) {
	appH := newHarness(t, false)
	s := makeDoctorApp(t, appH, false, "")
	var bodies []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, r.URL.Path+" "+string(b))
		mu.Unlock()
	}))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "config.toml")
	doc := "[contexts.shop]\napp = " + strconv.Quote(appH.dir) + "\n[contexts.shop.notify]\nwebhook-url = " +
		strconv.Quote(srv.URL+"/hooks/ctx-s3cr3t") + "\n"
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}

	h := newHarness(t, false) // another working directory
	withEnv(h, map[string]string{"JOBTRIAGE_CONFIG": path})
	if code := h.run("failed", "--json", "--context", "shop"); code != ExitOK || !strings.Contains(h.out.String(), "11111111-1111-4111-8111-111111111111") {
		t.Fatalf("failed in the context's app: %d %s %s", code, h.out.String(), h.errOut.String())
	}
	if code := h.run("forget", "11111111-1111-4111-8111-111111111111", "--dry-run", "--context", "shop"); code != ExitOK ||
		!strings.Contains(h.out.String(), "— context shop · app Shop") {
		t.Errorf("summary: %d %q %q", code, h.out.String(), h.errOut.String())
	}

	h.f.ContextName = "shop"
	steps := []func(time.Time){func(now time.Time) {
		sqltest.InsertFailed(t, s, monitorFailure(300, "default", `App\Jobs\A`, now), monitorFailure(301, "default", `App\Jobs\A`, now))
	}}
	if code := watchHarness(t, h, []string{"--watch", "--max-failed", "2", "--window", "2m", "--state-file", "none"}, &recorder{}, steps); code != ExitOK {
		t.Fatalf("watch exit %d: %s", code, h.errOut.String())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 1 || !strings.HasPrefix(bodies[0], "/hooks/ctx-s3cr3t ") || !strings.Contains(bodies[0], `"firing"`) {
		t.Errorf("the context's webhook got %q", bodies)
	}
	if out := h.out.String() + h.errOut.String(); strings.Contains(out, "ctx-s3cr3t") || !strings.Contains(out, "watch: context shop · app Shop") {
		t.Errorf("output:\n%s", out)
	}
}

// A configuration file with secrets that others may read is named in a
// warning by every command that opens a database.
func TestExposedConfigFileWarns(t *testing.T) {
	path, _, _ := contextsFile(t, "shop-prod") // holds a Slack webhook
	h := newHarness(t, false)
	withEnv(h, map[string]string{"JOBTRIAGE_CONFIG": path})
	if code := h.run("failed"); code != ExitOK || strings.Contains(h.errOut.String(), "holds secrets") {
		t.Errorf("0600: %d %q", code, h.errOut.String())
	}
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	if code := h.run("failed"); code != ExitOK || !strings.Contains(h.errOut.String(), "warning: "+path+" holds secrets and other users may read it: chmod 600 it") {
		t.Errorf("0640: %d %q", code, h.errOut.String())
	}
}
