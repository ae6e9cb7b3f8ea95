package alerts

import (
	"strings"
	"time"
)

// FormatDuration renders a window or interval the way people say it: "1m",
// "1h30m", "90s" rather than time.Duration's "1m0s" and "1h30m0s". The
// notifiers, the monitor command and the TUI header all use it, so a
// window reads the same everywhere.
func FormatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// Plural is one when n is 1, else many: the word after a count in every
// message the CLI, the TUI and the notifiers write.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
