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
	getenv := func(k string) string { return env[k] }
	getwd := func() (string, error) { return cwd, nil }

	if got := ResolveNotify(Notify{}, getenv, nil, "", getwd); got != (Notify{SlackWebhook: "https://hooks.slack.com/cwd", Command: "/bin/true --cwd"}) {
		t.Errorf("the working directory's .env: %+v", got)
	}
	ctx := &Context{App: app, Notify: Notify{PagerDutyRoutingKey: "ctx-key", SlackWebhook: "https://hooks.slack.com/ctx"}}
	if got := ResolveNotify(Notify{}, getenv, ctx, "", getwd); got != (Notify{SlackWebhook: "https://hooks.slack.com/ctx", PagerDutyRoutingKey: "ctx-key", Command: "/bin/true --app"}) {
		t.Errorf("the context over its app's .env: %+v", got)
	}
	if got := ResolveNotify(Notify{}, getenv, ctx, explicit, getwd).Command; got != "/bin/true --env-file" {
		t.Errorf("--env-file's .env: %q", got)
	}
	env[EnvSlackWebhook], env[EnvWebhookURL] = "https://hooks.slack.com/env", "https://hooks.example.com/env"
	if got := ResolveNotify(Notify{SlackWebhook: "https://hooks.slack.com/flag"}, getenv, ctx, explicit, getwd); got != (Notify{SlackWebhook: "https://hooks.slack.com/flag", WebhookURL: "https://hooks.example.com/env",
		PagerDutyRoutingKey: "ctx-key", Command: "/bin/true --env-file"}) {
		t.Errorf("flag over environment over context over .env: %+v", got)
	}

	// A .env that is a directory, or no working directory: no setting.
	clear(env)
	if got := ResolveNotify(Notify{}, getenv, nil, other, getwd); got != (Notify{}) {
		t.Errorf("a directory as .env: %+v", got)
	}
	if got := ResolveNotify(Notify{}, getenv, nil, "", func() (string, error) { return "", os.ErrNotExist }); got != (Notify{}) {
		t.Errorf("no working directory: %+v", got)
	}
}
