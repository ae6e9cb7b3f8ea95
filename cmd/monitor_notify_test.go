package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobtriage/jobtriage/alerts/notify"
	"github.com/jobtriage/jobtriage/internal/contexts"
)

// TestMonitorNotifiers: the watcher's channels come from the flags, the
// environment, the context and the app's .env together (the precedence is
// contexts.ResolveNotify's), the recorders of Notifiers after them, and a
// malformed one is a usage error that does not echo the secret.
func TestMonitorNotifiers(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("JOBTRIAGE_NOTIFY_COMMAND=\"/bin/true --flag\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{contexts.EnvWebhookURL: "https://hooks.example.com/jobtriage"}
	o := &MonitorOptions{Getenv: func(k string) string { return env[k] }, Getwd: func() (string, error) { return dir, nil },
		Notify:    contexts.Notify{SlackWebhook: "https://hooks.slack.com/services/T000/B000/XXXX"},
		Context:   &contexts.Context{Notify: contexts.Notify{PagerDutyRoutingKey: "0123456789abcdef0123456789abcdef"}},
		Notifiers: []notify.Notifier{&recorder{}}}
	ns, err := o.notifiers()
	var names []string
	for _, n := range ns {
		names = append(names, n.Name())
	}
	if err != nil || len(names) != 5 || names[3] != "command:true" || names[4] != "recorder" {
		t.Errorf("flag + env + context + .env + recorder: %v %v", names, err)
	}
	o.Notify.SlackWebhook = "ftp://secret-token@example.com"
	if _, err := o.notifiers(); err == nil || exitCodeFor(err) != ExitUsage || strings.Contains(err.Error(), "secret-token") {
		t.Errorf("a malformed channel: %v", err)
	}
}
