package notify

import (
	"context"
	"fmt"
	"strings"

	"github.com/jobtriage/jobtriage/alerts"
)

// maxSlackLines keeps a message within Slack's 50-block limit, with room for
// the headline and the "more" line.
const maxSlackLines = 40

// SlackConfig configures a Slack incoming webhook.
type SlackConfig struct {
	// WebhookURL is https://hooks.slack.com/services/…; it is a secret.
	WebhookURL string
}

// Slack posts a digest to a Slack incoming webhook as plain text plus simple
// section blocks.
type Slack struct{ endpoint }

// NewSlack checks the webhook URL (without ever echoing it).
func NewSlack(cfg SlackConfig) (*Slack, error) {
	e, err := newEndpoint("slack", "webhook URL", cfg.WebhookURL)
	if err != nil {
		return nil, err
	}
	return &Slack{e}, nil
}

// Notify posts the digest.
func (s *Slack) Notify(ctx context.Context, d alerts.Digest) error { return s.post(ctx, slackBody(d)) }

type slackText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type slackBlock struct {
	Type string    `json:"type"`
	Text slackText `json:"text"`
}

type slackMessage struct {
	Text   string       `json:"text"`
	Blocks []slackBlock `json:"blocks"`
}

// slackBody is the JSON posted to Slack: "text" (the notification fallback)
// holds the headline and one line per notification; "blocks" hold the bold
// headline (with the app's database) and one mrkdwn section per
// notification: the summary, the latest failure's class and message, and
// the command that shows more. Text from the database is escaped so a class
// name cannot ping <!channel> or forge a link.
func slackBody(d alerts.Digest) slackMessage {
	head := slackEscape(Headline(d))
	lines := []string{head}
	top := "*" + head + "*"
	if db := clean(d.App.Database, maxKeyRunes); db != "" {
		top += "\n" + slackEscape(db)
	}
	blocks := []slackBlock{section(top)}
	for i, n := range d.Notifications {
		if i == maxSlackLines {
			more := fmt.Sprintf("… and %d more", len(d.Notifications)-maxSlackLines)
			lines = append(lines, more)
			blocks = append(blocks, section(more))
			break
		}
		lines = append(lines, slackEscape(Line(n)))
		text := slackEscape(Summary(n))
		if ex := Example(n); ex != "" {
			text += "\n" + slackEscape(ex)
		}
		if n.Detail.Command != "" {
			text += "\n`" + slackEscape(strings.ReplaceAll(clean(n.Detail.Command, maxMessageRunes), "`", "'")) + "`"
		}
		blocks = append(blocks, section(text))
	}
	return slackMessage{Text: strings.Join(lines, "\n"), Blocks: blocks}
}

func section(text string) slackBlock {
	return slackBlock{Type: "section", Text: slackText{Type: "mrkdwn", Text: text}}
}

// slackEscape applies Slack's three control-character escapes.
func slackEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
