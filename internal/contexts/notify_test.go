package contexts

import (
	"os"
	"path/filepath"
	"testing"
)

// TestResolveNotify: each channel is taken from its flag, else the
// environment, else the context, else the app's .env (the --env-file, else
// the context's, else its app directory's, else the working directory's).
func TestResolveNotify(t *testing.T) {
	write := func(dir, content string) string {
		t.Helper()
		path := filepath.Join(dir, ".env")
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	cwd, app, other := t.TempDir(), t.TempDir(), t.TempDir()
	write(cwd, "JOBTRIAGE_NOTIFY_COMMAND=\"/bin/true --cwd\"\nJOBTRIAGE_SLACK_WEBHOOK=https://hooks.slack.com/cwd\n")
	write(app, "JOBTRIAGE_NOTIFY_COMMAND=\"/bin/true --app\"\n")
	explicit := write(other, "JOBTRIAGE_NOTIFY_COMMAND='/bin/true --env-file'\n")
	env := map[string]string{}
	base := NotifySources{Getenv: func(k string) string { return env[k] }, Getwd: func() (string, error) { return cwd, nil }}

	if got := ResolveNotify(base); got != (Notify{SlackWebhook: "https://hooks.slack.com/cwd", Command: "/bin/true --cwd"}) {
		t.Errorf("the working directory's .env: %+v", got)
	}
	ctx := &Context{App: app, Notify: Notify{PagerDutyRoutingKey: "ctx-key", SlackWebhook: "https://hooks.slack.com/ctx"}}
	s := base
	s.Context = ctx
	if got := ResolveNotify(s); got != (Notify{SlackWebhook: "https://hooks.slack.com/ctx", PagerDutyRoutingKey: "ctx-key", Command: "/bin/true --app"}) {
		t.Errorf("the context over its app's .env: %+v", got)
	}
	s.EnvFile = explicit
	if got := ResolveNotify(s).Command; got != "/bin/true --env-file" {
		t.Errorf("--env-file's .env: %q", got)
	}
	env[EnvSlackWebhook], env[EnvWebhookURL] = "https://hooks.slack.com/env", "https://hooks.example.com/env"
	s.Flags = Notify{SlackWebhook: "https://hooks.slack.com/flag"}
	if got := ResolveNotify(s); got != (Notify{SlackWebhook: "https://hooks.slack.com/flag", WebhookURL: "https://hooks.example.com/env",
		PagerDutyRoutingKey: "ctx-key", Command: "/bin/true --env-file"}) {
		t.Errorf("flag over environment over context over .env: %+v", got)
	}

	// A .env that is a directory, or no working directory: no setting.
	clear(env)
	s = base
	s.EnvFile = other
	if got := ResolveNotify(s); got != (Notify{}) {
		t.Errorf("a directory as .env: %+v", got)
	}
	s = base
	s.Getwd = func() (string, error) { return "", os.ErrNotExist }
	if got := ResolveNotify(s); got != (Notify{}) {
		t.Errorf("no working directory: %+v", got)
	}
}
