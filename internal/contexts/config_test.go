package contexts

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sample = `# jobtriage contexts
current-context = "staging"

[contexts.prod]
app = "/srv/shop"
dsn = "postgres://shop:s3cret@db.internal:5432/shop"
jobs-dsn = "mysql://jobs:j0bs@10.0.0.2/jobs"
redis = "rediss://default:r3dis@cache.internal:6380/2"
timezone = "Europe/Paris"
label = "Shop EU"
production = true

[contexts.prod.notify]
slack-webhook = "https://hooks.slack.com/services/T000/B000/XXXX"
webhook-url = "https://user:pw@alerts.example.com/hook?token=abc"
pagerduty-routing-key = "R0UT1NGKEY"
command = "notify-send --token=abc"

[contexts.staging]
app = "apps/staging"   # relative to this file
env-file = "apps/staging/.env.staging"
color = "yellow"
`

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParseSample(t *testing.T) {
	p := writeFile(t, "config.toml", sample)
	f, err := Load(p, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.Names(), ","); got != "prod,staging" {
		t.Fatalf("names %q", got)
	}
	if f.CurrentContext != "staging" {
		t.Errorf("current %q", f.CurrentContext)
	}
	prod, _ := f.Context("prod")
	if prod.Timezone != "Europe/Paris" || !prod.Production || prod.Notify.PagerDutyRoutingKey != "R0UT1NGKEY" || prod.Line != 4 {
		t.Errorf("prod %+v", prod)
	}
	if prod.DisplayColor() != ColorProduction || prod.Marker() != "context prod (Shop EU) [PRODUCTION]" {
		t.Errorf("marker %q colour %q", prod.Marker(), prod.DisplayColor())
	}
	st, _ := f.Context("staging")
	dir := filepath.Dir(p)
	if st.App != filepath.Join(dir, "apps/staging") || st.EnvFile != filepath.Join(dir, "apps/staging/.env.staging") {
		t.Errorf("relative paths not anchored at the file: %+v", st)
	}
	if st.DisplayColor() != "yellow" || st.Marker() != "context staging" {
		t.Errorf("staging marker %q colour %q", st.Marker(), st.DisplayColor())
	}
}

func TestRedactedHidesEverySecret(t *testing.T) {
	f, err := Parse("c.toml", []byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	prod, _ := f.Context("prod")
	r := prod.Redacted()
	all := strings.Join([]string{r.DSN, r.JobsDSN, r.Redis, r.Notify.SlackWebhook, r.Notify.WebhookURL,
		r.Notify.PagerDutyRoutingKey, r.Notify.Command}, " ")
	for _, secret := range []string{"s3cret", "j0bs", "r3dis", "XXXX", "T000", "pw", "token=abc", "R0UT1NGKEY"} {
		if strings.Contains(all, secret) {
			t.Errorf("secret %q shown: %s", secret, all)
		}
	}
	for _, kept := range []string{"db.internal", "cache.internal:6380", "alerts.example.com", "notify-send"} {
		if !strings.Contains(all, kept) {
			t.Errorf("%q lost: %s", kept, all)
		}
	}
}

func TestStrictErrorsNameFileAndLine(t *testing.T) {
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"unknown top key", "current-context = \"a\"\ncolour = 1\n[contexts.a]\ndsn = \"sqlite:/x.db\"\n", `c.toml:2: unknown key "colour"`},
		{"unknown context key", "[contexts.a]\ndsn = \"sqlite:/x.db\"\n\ntimezon = \"UTC\"\n", `c.toml:4: unknown key "contexts.a.timezon"`},
		{"unknown notify key", "[contexts.a]\ndsn = \"sqlite:/x.db\"\n[contexts.a.notify]\nslack = \"x\"\n", `c.toml:4: unknown key "contexts.a.notify.slack"`},
		{"wrong type", "[contexts.a]\ndsn = \"sqlite:/x.db\"\nproduction = \"yes\"\n", "c.toml:3:"},
		{"syntax", "[contexts.a\n", "c.toml:1:"},
		{"bad dsn", "[contexts.a]\n\ndsn = \"oracle://x/y\"\n", "c.toml:3: dsn:"},
		{"bad timezone", "[contexts.a]\ndsn = \"sqlite:/x.db\"\ntimezone = \"Mars/Base\"\n", `c.toml:3: timezone "Mars/Base"`},
		{"bad colour", "[contexts.a]\ndsn = \"sqlite:/x.db\"\ncolor = \"pink\"\n", `c.toml:3: color "pink"`},
		{"bad redis", "[contexts.a]\ndsn = \"sqlite:/x.db\"\nredis = \"http://secret@x\"\n", "c.toml:3: redis: want redis://"},
		{"no app nor dsn", "\n[contexts.a]\nlabel = \"A\"\n", "c.toml:2: context a needs app"},
		{"bad name", "[contexts.\"a b\"]\ndsn = \"sqlite:/x.db\"\n", `c.toml:1: context name "a b"`},
		{"unknown current", "current-context = \"b\"\n[contexts.a]\ndsn = \"sqlite:/x.db\"\n", `c.toml:1: current-context "b" names no context (have: a)`},
		{"inline table key", "[contexts]\na = { dsn = \"sqlite:/x.db\", color = \"pink\" }\n", `c.toml:2: color "pink"`},
		{"bad webhook", "[contexts.a]\ndsn = \"sqlite:/x.db\"\n[contexts.a.notify]\nwebhook-url = \"ftp://x\"\n", "c.toml:3.webhook-url: want an http(s) URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("c.toml", []byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("error repeats a secret: %q", err)
			}
		})
	}
}

func TestLocate(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tc := range []struct {
		flag     string
		env      map[string]string
		want     string
		explicit bool
	}{
		{"/a.toml", map[string]string{EnvConfig: "/b.toml"}, "/a.toml", true},
		{"", map[string]string{EnvConfig: "/b.toml", "XDG_CONFIG_HOME": "/x"}, "/b.toml", true},
		{"", map[string]string{"XDG_CONFIG_HOME": "/x", "HOME": "/h"}, "/x/jobtriage/config.toml", false},
		{"", map[string]string{"XDG_CONFIG_HOME": "rel", "HOME": "/h"}, "/h/.config/jobtriage/config.toml", false},
		{"", map[string]string{}, "", false},
	} {
		got, explicit := Locate(tc.flag, env(tc.env))
		if got != tc.want || explicit != tc.explicit {
			t.Errorf("Locate(%q, %v) = %q %v, want %q %v", tc.flag, tc.env, got, explicit, tc.want, tc.explicit)
		}
	}
}

func TestLoadMissing(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none.toml")
	if f, err := Load(missing, false); err != nil || len(f.Contexts) != 0 {
		t.Errorf("implicit missing file: %v %+v", err, f)
	}
	if _, err := Load(missing, true); !errors.Is(err, ErrNoFile) {
		t.Errorf("explicit missing file: %v", err)
	}
	dir := t.TempDir()
	if _, err := Load(dir, true); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("directory: %v", err)
	}
}

func TestSetCurrentKeepsTheRestOfTheFile(t *testing.T) {
	p := writeFile(t, "config.toml", sample)
	if err := os.Chmod(p, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := SetCurrent(p, "prod"); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	want := strings.Replace(sample, `current-context = "staging"`, `current-context = "prod"`, 1)
	if string(got) != want {
		t.Errorf("file now:\n%s\nwant:\n%s", got, want)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v", st.Mode().Perm())
	}
	if err := SetCurrent(p, "nope"); err == nil || !strings.Contains(err.Error(), `no context "nope"`) {
		t.Errorf("unknown context: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
}

func TestSetCurrentAddsTheLineAndFollowsLinks(t *testing.T) {
	doc := "# mine\n[contexts.a]\ndsn = \"sqlite:/x.db\"\n"
	real := writeFile(t, "real.toml", doc)
	link := filepath.Join(t.TempDir(), "config.toml")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if err := SetCurrent(link, "a"); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Lstat(link); st.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced by a file")
	}
	got, _ := os.ReadFile(real)
	if string(got) != "current-context = \"a\"\n"+doc {
		t.Errorf("file now %q", got)
	}
	f, err := Load(link, true)
	if err != nil || f.CurrentContext != "a" {
		t.Errorf("reloaded: %v %+v", err, f)
	}
}

func TestParseRedis(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Redis
		err  string
	}{
		{"redis://cache:6380/3", Redis{Host: "cache", Port: 6380, DB: 3}, ""},
		{"rediss://u:p@cache", Redis{Host: "cache", Port: defaultRedisPort, Username: "u", Password: "p", DB: -1, TLS: true}, ""},
		{"redis://onlypass@cache", Redis{Host: "cache", Port: defaultRedisPort, Password: "onlypass", DB: -1}, ""},
		{"redis://cache/x", Redis{}, "database number"},
		{"redis://:6379", Redis{}, "no host"},
		{"redis://cache:0", Redis{}, "bad port"},
	} {
		got, err := ParseRedis(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v %v, want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestExposedSecrets(t *testing.T) {
	p := writeFile(t, "config.toml", sample)
	if f, err := Load(p, true); err != nil || f.Exposed {
		t.Errorf("0600: %v exposed %v", err, f.Exposed)
	}
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if f, err := Load(p, true); err != nil || !f.Exposed {
		t.Errorf("0644 with secrets: %v exposed %v", err, f.Exposed)
	}
	plain := writeFile(t, "plain.toml", "[contexts.a]\napp = \"/srv/a\"\ndsn = \"postgres://u@db/a\"\n")
	if err := os.Chmod(plain, 0o644); err != nil {
		t.Fatal(err)
	}
	if f, err := Load(plain, true); err != nil || f.Exposed {
		t.Errorf("0644 without secrets: %v exposed %v", err, f.Exposed)
	}
}
