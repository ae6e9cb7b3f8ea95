package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobtriage/jobtriage/internal/contexts"
)

// TestMonitorNotifiers: each channel is taken from its flag, else the
// environment, else the context, else the app's .env, in that order, and
// a malformed one is a usage error that does not echo the secret.
func TestMonitorNotifiers(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{}
	o := &MonitorOptions{Getenv: func(k string) string { return env[k] }, Getwd: func() (string, error) { return dir, nil }}
	names := func() []string {
		t.Helper()
		ns, err := o.notifiers()
		if err != nil {
			t.Fatalf("notifiers: %v", err)
		}
		var out []string
		for _, n := range ns {
			out = append(out, n.Name())
		}
		return out
	}
	if got := names(); len(got) != 0 {
		t.Errorf("nothing configured: %v", got)
	}
	// .env in the working directory.
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("JOBTRIAGE_NOTIFY_COMMAND=\"/bin/true --flag\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := names(); len(got) != 1 || !strings.Contains(got[0], "true") {
		t.Errorf(".env command: %v", got)
	}
	// The environment, then the flags, add the HTTP channels.
	env[envWebhookURL] = "https://hooks.example.com/jobtriage"
	o.SlackWebhook = "https://hooks.slack.com/services/T000/B000/XXXX"
	o.Context = &contexts.Context{Notify: contexts.Notify{PagerDutyRoutingKey: "0123456789abcdef0123456789abcdef"}}
	if got := names(); len(got) != 4 {
		t.Errorf("flag + env + context + .env: %v", got)
	}
	for _, bad := range []func(){
		func() { o.SlackWebhook = "ftp://secret-token@example.com" },
		func() { o.SlackWebhook = ""; o.WebhookURL = "not a url secret-token" },
	} {
		bad()
		_, err := o.notifiers()
		if err == nil || exitCodeFor(err) != ExitUsage || strings.Contains(err.Error(), "secret-token") {
			t.Errorf("a malformed channel: %v", err)
		}
	}
}
