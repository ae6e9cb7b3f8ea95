package notify

import (
	"context"

	"github.com/jobtriage/jobtriage/alerts"
)

// BodyVersion is the version of the JSON body the webhook and command
// notifiers send. Fields may be added within a version, never renamed,
// removed or changed in meaning.
const BodyVersion = 1

// Body is the documented JSON a generic webhook receives (and a command reads
// on stdin), version 1:
//
//	{
//	  "version": 1,
//	  "source": "jobtriage",
//	  "app": {"name": "shop", "environment": "production",
//	          "database": "postgres://db/shop table failed_jobs"},  // fields omitted when unknown
//	  "at": "2026-11-30T12:02:45Z",          // evaluation time, RFC 3339 UTC
//	  "summary": "jobtriage: 1 firing",
//	  "notifications": [{
//	    "event": "firing",                    // firing | reminder | resolved
//	    "key": "queue:emails",                // the rule key, verbatim
//	    "count": 3,                           // failures in the window at "at"
//	    "measure": "jobs queued",             // only for gauge rules (queue size, age)
//	    "peak": 3,                            // highest count this episode
//	    "threshold": 3,
//	    "resolve_below": 1,                   // resolves when count <= this
//	    "window": "1m",
//	    "window_seconds": 60,
//	    "for_seconds": 0,
//	    "since": "2026-11-30T12:02:45Z",      // episode start: count first >= threshold
//	    "at": "2026-11-30T12:02:45Z",
//	    "summary": "FIRING queue:emails: 3 failures in the last 1m (threshold 3)",
//	    "class": "App\\Jobs\\SendInvoice",         // the latest failure under the key
//	    "message": "Connection refused",      // its exception message (at most 2000 bytes)
//	    "command": "jobtriage failed --queue emails --since 1m"  // shows more
//	  }]
//	}
type Body struct {
	Version       int                `json:"version"`
	Source        string             `json:"source"`
	App           alerts.App         `json:"app"`
	At            string             `json:"at"`
	Summary       string             `json:"summary"`
	Notifications []BodyNotification `json:"notifications"`
}

// BodyNotification is one entry of Body.Notifications.
type BodyNotification struct {
	Event         string `json:"event"`
	Key           string `json:"key"`
	Count         int    `json:"count"`
	Measure       string `json:"measure,omitempty"`
	Peak          int    `json:"peak"`
	Threshold     int    `json:"threshold"`
	ResolveBelow  int    `json:"resolve_below"`
	Window        string `json:"window"`
	WindowSeconds int64  `json:"window_seconds"`
	ForSeconds    int64  `json:"for_seconds"`
	Since         string `json:"since"`
	At            string `json:"at"`
	Summary       string `json:"summary"`
	Class         string `json:"class,omitempty"`
	Message       string `json:"message,omitempty"`
	Command       string `json:"command,omitempty"`
}

// NewBody builds the version-1 body of a digest.
func NewBody(d alerts.Digest) Body {
	b := Body{
		Version:       BodyVersion,
		Source:        "jobtriage",
		App:           d.App,
		At:            timestamp(d.At),
		Summary:       Headline(d),
		Notifications: make([]BodyNotification, 0, len(d.Notifications)),
	}
	for _, n := range d.Notifications {
		b.Notifications = append(b.Notifications, BodyNotification{
			Event:         n.Event.String(),
			Key:           n.Rule.Key,
			Count:         n.Count,
			Measure:       n.Rule.Measure,
			Peak:          n.Peak,
			Threshold:     n.Rule.Threshold,
			ResolveBelow:  n.Rule.ResolveLevel(),
			Window:        alerts.FormatDuration(n.Rule.Window),
			WindowSeconds: int64(n.Rule.Window.Seconds()),
			ForSeconds:    int64(n.Rule.For.Seconds()),
			Since:         timestamp(n.Since),
			At:            timestamp(n.At),
			Summary:       Summary(n),
			Class:         n.Detail.Class,
			Message:       cutBytes(n.Detail.Message, maxMessageBytes),
			Command:       n.Detail.Command,
		})
	}
	return b
}

// WebhookConfig configures a generic JSON webhook.
type WebhookConfig struct {
	// URL receives the POST; it is treated as a secret.
	URL string
}

// Webhook posts the version-1 Body as JSON.
type Webhook struct{ endpoint }

// NewWebhook checks the URL (without ever echoing it).
func NewWebhook(cfg WebhookConfig) (*Webhook, error) {
	e, err := newEndpoint("webhook", "URL", cfg.URL)
	if err != nil {
		return nil, err
	}
	return &Webhook{e}, nil
}

// Notify posts the digest's Body.
func (w *Webhook) Notify(ctx context.Context, d alerts.Digest) error { return w.post(ctx, NewBody(d)) }
