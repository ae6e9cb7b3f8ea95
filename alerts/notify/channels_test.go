package notify

import (
	"strings"
	"testing"
)

// TestChannelsNotifiers: one notifier per channel set, in a fixed order; a
// malformed setting (or a command of white space only) is an error that
// does not echo the secret.
func TestChannelsNotifiers(t *testing.T) {
	names := func(c Channels) string {
		t.Helper()
		ns, err := c.Notifiers()
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		var out []string
		for _, n := range ns {
			out = append(out, n.Name())
		}
		return strings.Join(out, ",")
	}
	if got := names(Channels{}); got != "" {
		t.Errorf("nothing set: %q", got)
	}
	all := Channels{SlackWebhook: "https://hooks.slack.com/services/T000/B000/XXXX", WebhookURL: "https://hooks.example.com/jobtriage",
		PagerDutyRoutingKey: "0123456789abcdef0123456789abcdef", Command: "/bin/true --flag secret-arg"}
	got := names(all)
	if parts := strings.Split(got, ","); len(parts) != 4 || !strings.HasPrefix(parts[0], "slack") ||
		!strings.HasPrefix(parts[1], "webhook") || !strings.HasPrefix(parts[2], "pagerduty") || parts[3] != "command:true" {
		t.Errorf("every channel: %q", got)
	}
	for _, bad := range []Channels{
		{SlackWebhook: "ftp://secret-token@example.com"},
		{WebhookURL: "not a url secret-token", PagerDutyRoutingKey: all.PagerDutyRoutingKey},
		{Command: " \t "},
	} {
		ns, err := bad.Notifiers()
		if err == nil || ns != nil || strings.Contains(err.Error(), "secret-token") {
			t.Errorf("%+v: %v %v", bad, ns, err)
		}
	}
}
