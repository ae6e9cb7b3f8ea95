package notify

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"

	"github.com/jobtriage/jobtriage/alerts"
)

// PagerDutyEventsURL is the Events API v2 endpoint.
const PagerDutyEventsURL = "https://events.pagerduty.com/v2/enqueue"

// PagerDuty's documented field limits.
const (
	maxPagerDutySummary = 1024
	maxPagerDutyField   = 255
)

// PagerDutyConfig configures the Events API v2.
type PagerDutyConfig struct {
	// RoutingKey is the integration key of the service; it is a secret.
	RoutingKey string
	// URL defaults to PagerDutyEventsURL; tests point it elsewhere.
	URL string
}

// PagerDuty sends one Events API v2 event per notification: trigger for
// firing and reminders (PagerDuty folds them into the open incident by
// dedup_key), resolve for resolved.
type PagerDuty struct {
	endpoint
	routingKey string
}

// NewPagerDuty checks the configuration (without ever echoing secrets).
func NewPagerDuty(cfg PagerDutyConfig) (*PagerDuty, error) {
	const name = "pagerduty"
	key := strings.TrimSpace(cfg.RoutingKey)
	if key == "" {
		return nil, errors.New(name + ": routing key is empty")
	}
	if len(key) > maxPagerDutyField || strings.ContainsAny(key, " \t\r\n\"") {
		return nil, errors.New(name + ": routing key is malformed")
	}
	e, err := newEndpoint(name, "events URL", cmp.Or(cfg.URL, PagerDutyEventsURL))
	if err != nil {
		return nil, err
	}
	e.secrets = e.secrets.with(key)
	return &PagerDuty{endpoint: e, routingKey: key}, nil
}

// Notify sends the digest's events in order and stops at the first failure;
// a retry sends them all again, which PagerDuty deduplicates by dedup_key.
func (p *PagerDuty) Notify(ctx context.Context, d alerts.Digest) error {
	for _, n := range d.Notifications {
		if err := p.post(ctx, p.Event(d.App, n)); err != nil {
			return err
		}
	}
	return nil
}

// PagerDutyEvent is an Events API v2 request body.
type PagerDutyEvent struct {
	RoutingKey  string            `json:"routing_key"`
	EventAction string            `json:"event_action"`
	DedupKey    string            `json:"dedup_key"`
	Client      string            `json:"client,omitempty"`
	Payload     *PagerDutyPayload `json:"payload,omitempty"`
}

// PagerDutyPayload is the alert description of a trigger event.
type PagerDutyPayload struct {
	Summary       string         `json:"summary"`
	Source        string         `json:"source"`
	Severity      string         `json:"severity"`
	Timestamp     string         `json:"timestamp,omitempty"`
	Component     string         `json:"component,omitempty"`
	Class         string         `json:"class"`
	CustomDetails map[string]any `json:"custom_details"`
}

// Source is payload.source for app: the app's label and database, else
// "jobtriage".
func (p *PagerDuty) Source(app alerts.App) string {
	parts := []string{}
	if l := app.Label(); l != "" {
		parts = append(parts, l)
	}
	if app.Database != "" && app.Database != app.Label() {
		parts = append(parts, app.Database)
	}
	if len(parts) == 0 {
		return "jobtriage"
	}
	return clean(strings.Join(parts, " · "), maxPagerDutyField-1)
}

// Event is the request body for one notification of app.
func (p *PagerDuty) Event(app alerts.App, n alerts.Notification) PagerDutyEvent {
	ev := PagerDutyEvent{RoutingKey: p.routingKey, DedupKey: p.DedupKey(app, n.Rule.Key), Client: "jobtriage"}
	if n.Event == alerts.EventResolved {
		ev.EventAction = "resolve"
		return ev
	}
	summary := Summary(n)
	if l := app.Label(); l != "" {
		summary = "[" + l + "] " + summary
	}
	if ex := Example(n); ex != "" {
		summary += " · " + ex
	}
	ev.EventAction = "trigger"
	details := map[string]any{
		"key":            n.Rule.Key,
		"event":          n.Event.String(),
		"count":          n.Count,
		"peak":           n.Peak,
		"threshold":      n.Rule.Threshold,
		"window":         alerts.FormatDuration(n.Rule.Window),
		"window_seconds": int64(n.Rule.Window.Seconds()),
		"since":          timestamp(n.Since),
	}
	for k, v := range map[string]string{"app": app.Name, "environment": app.Environment, "database": app.Database,
		"class": n.Detail.Class, "message": cutBytes(n.Detail.Message, maxMessageBytes), "command": n.Detail.Command} {
		if v != "" {
			details[k] = v
		}
	}
	ev.Payload = &PagerDutyPayload{
		Summary:       clean(summary, maxPagerDutySummary-1),
		Source:        p.Source(app),
		Severity:      "error",
		Timestamp:     timestamp(n.At),
		Component:     clean(n.Rule.Key, maxPagerDutyField-1),
		Class:         "failed-jobs",
		CustomDetails: details,
	}
	return ev
}

// DedupKey is the incident key of a rule key of app: stable across runs and
// restarts, so a resolve closes the incident its trigger opened; distinct per
// app (name, environment and database), so two apps sharing a routing key
// never resolve each other's incidents; within PagerDuty's 255 characters
// whatever the key holds.
func (p *PagerDuty) DedupKey(app alerts.App, ruleKey string) string {
	sum := sha256.Sum256([]byte("app\x00" + app.ID() + "\x00" + ruleKey))
	return "jobtriage-" + hex.EncodeToString(sum[:16])
}
