package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

func TestParseOffsetAndSameZone(t *testing.T) {
	for in, want := range map[string]int{"+02:00": 7200, "-5:30": -19800, "+14": 14 * 3600, "-00:00": 0} {
		if got, ok := parseOffset(in); !ok || got != want {
			t.Errorf("parseOffset(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "+", "02:00", "+15:00", "+02:60", "+a:00", "+02:x"} {
		if _, ok := parseOffset(in); ok {
			t.Errorf("parseOffset(%q) accepted", in)
		}
	}
	berlin := mustLoad(t, "Europe/Berlin")
	if !sameZone("+01:00", mustLoad(t, "Africa/Lagos"), testNow) || sameZone("+01:00", berlin, testNow) {
		t.Error("an offset is the same zone only when it holds on both sides of a DST change")
	}
	if !sameZone("CET", berlin, testNow) || !sameZone("europe/berlin", berlin, testNow) || sameZone("UTC", berlin, testNow) || sameZone("Nowhere/Else", berlin, testNow) {
		t.Error("sameZone by name")
	}
}

func mustLoad(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Skip(err)
	}
	return loc
}
