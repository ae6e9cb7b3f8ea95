package notify

import (
	"fmt"
	"strings"
	"time"

	"github.com/jobtriage/jobtriage/alerts"
)

// maxKeyRunes bounds a key in human text: keys carry job class names and
// signatures read from the database.
const maxKeyRunes = 200

// Summary is one plain line describing a notification, e.g.
//
//	FIRING queue:emails: 5 failures in the last 1m (threshold 3)
func Summary(n alerts.Notification) string {
	key := clean(n.Rule.Key, maxKeyRunes)
	count := fmt.Sprintf("%d %s in the last %s", n.Count, plural(n.Count, "failure", "failures"), alerts.FormatDuration(n.Rule.Window))
	if n.Rule.Measure != "" {
		count = fmt.Sprintf("%d %s", n.Count, clean(n.Rule.Measure, maxKeyRunes))
	}
	switch n.Event {
	case alerts.EventFiring:
		return fmt.Sprintf("FIRING %s: %s (threshold %d)", key, count, n.Rule.Threshold)
	case alerts.EventReminder:
		return fmt.Sprintf("STILL FIRING %s: %s (threshold %d, peak %d, since %s)",
			key, count, n.Rule.Threshold, n.Peak, timestamp(n.Since))
	case alerts.EventResolved:
		return fmt.Sprintf("RESOLVED %s: %s (peak %d, firing since %s)", key, count, n.Peak, timestamp(n.Since))
	}
	return fmt.Sprintf("%s %s: %s", strings.ToUpper(n.Event.String()), key, count)
}

// Headline sums a digest up in one line, e.g. "jobtriage: 2 firing, 1 resolved".
func Headline(d alerts.Digest) string {
	var firing, reminders, resolved int
	for _, n := range d.Notifications {
		switch n.Event {
		case alerts.EventFiring:
			firing++
		case alerts.EventReminder:
			reminders++
		case alerts.EventResolved:
			resolved++
		}
	}
	var parts []string
	if firing > 0 {
		parts = append(parts, fmt.Sprintf("%d firing", firing))
	}
	if reminders > 0 {
		parts = append(parts, fmt.Sprintf("%d still firing", reminders))
	}
	if resolved > 0 {
		parts = append(parts, fmt.Sprintf("%d resolved", resolved))
	}
	if len(parts) == 0 {
		return "jobtriage: nothing to report"
	}
	return "jobtriage: " + strings.Join(parts, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// timestamp is the one time format of every channel: RFC 3339 in UTC.
func timestamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
