package notify

import (
	"cmp"
	"strings"
)

// Channels are the settings of the channels a watcher notifies ("" = off).
// The fields are those of the contexts file's notify table, so a resolved
// setting converts to Channels.
type Channels struct {
	SlackWebhook        string
	WebhookURL          string
	PagerDutyRoutingKey string
	// Command is a program and its arguments, split at white space and
	// never run through a shell.
	Command string
}

// Notifiers builds a notifier for every channel set, in the order Slack,
// webhook, PagerDuty, command; the first malformed setting is an error that
// never contains the secret (the constructors redact it).
func (c Channels) Notifiers() ([]Notifier, error) {
	var out []Notifier
	var first error
	add := func(n Notifier, err error) { out, first = append(out, n), cmp.Or(first, err) }
	if c.SlackWebhook != "" {
		add(NewSlack(SlackConfig{WebhookURL: c.SlackWebhook}))
	}
	if c.WebhookURL != "" {
		add(NewWebhook(WebhookConfig{URL: c.WebhookURL}))
	}
	if c.PagerDutyRoutingKey != "" {
		add(NewPagerDuty(PagerDutyConfig{RoutingKey: c.PagerDutyRoutingKey}))
	}
	if c.Command != "" {
		cfg := CommandConfig{}
		if fields := strings.Fields(c.Command); len(fields) > 0 {
			cfg.Path, cfg.Args = fields[0], fields[1:]
		}
		add(NewCommand(cfg))
	}
	if first != nil {
		return nil, first
	}
	return out, nil
}
