package notify

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jobtriage/jobtriage/alerts"
)

// maxKeyRunes bounds a key in human text: keys carry job class names and
// signatures read from the database.
const maxKeyRunes = 200

// maxMessageRunes bounds an exception message in human text; JSON bodies
// carry up to maxMessageBytes of it.
const (
	maxMessageRunes = 300
	maxMessageBytes = 2000
)

// Summary is one plain line describing a notification, e.g.
//
//	FIRING queue:emails: 5 failures in the last 1m (threshold 3)
func Summary(n alerts.Notification) string {
	key := clean(n.Rule.Key, maxKeyRunes)
	count := fmt.Sprintf("%d %s in the last %s", n.Count, alerts.Plural(n.Count, "failure", "failures"), alerts.FormatDuration(n.Rule.Window))
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

// Example is the human line of a notification's detail: the latest
// failure's class and message under the key, e.g.
// "App\Jobs\SendInvoice: Connection refused"; "" when there is none.
func Example(n alerts.Notification) string {
	class := clean(n.Detail.Class, maxKeyRunes)
	msg := clean(n.Detail.Message, maxMessageRunes)
	switch {
	case class != "" && msg != "":
		return class + ": " + msg
	case class != "":
		return class
	}
	return msg
}

// Line is one notification as the watcher prints it: the summary, the
// latest failure under the key and the command that shows more, e.g.
//
//	FIRING queue:emails: 3 failures in the last 1m (threshold 3) · App\Jobs\Mail: boom · jobtriage failed --queue emails
func Line(n alerts.Notification) string {
	parts := []string{Summary(n)}
	if ex := Example(n); ex != "" {
		parts = append(parts, ex)
	}
	if n.Detail.Command != "" {
		parts = append(parts, clean(n.Detail.Command, maxMessageRunes))
	}
	return strings.Join(parts, " · ")
}

// Headline sums a digest up in one line, e.g. "jobtriage shop (production):
// 2 firing, 1 resolved" ("jobtriage: …" without an app).
func Headline(d alerts.Digest) string {
	var parts []string
	for _, e := range []struct {
		event alerts.Event
		label string
	}{{alerts.EventFiring, "firing"}, {alerts.EventReminder, "still firing"}, {alerts.EventResolved, "resolved"}} {
		n := 0
		for _, x := range d.Notifications {
			if x.Event == e.event {
				n++
			}
		}
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, e.label))
		}
	}
	head := "jobtriage"
	if app := clean(d.App.Label(), maxKeyRunes); app != "" {
		head += " " + app
	}
	if len(parts) == 0 {
		return head + ": nothing to report"
	}
	return head + ": " + strings.Join(parts, ", ")
}

// timestamp is the one time format of every channel: RFC 3339 in UTC.
func timestamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// cutBytes cuts s to at most limit bytes on a rune boundary, valid UTF-8.
func cutBytes(s string, limit int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= limit {
		return s
	}
	for limit > 0 && !utf8.RuneStart(s[limit]) {
		limit--
	}
	return s[:limit] + "…"
}
