package triage

import (
	"strings"
	"time"
)

// FailedAtLayout is how Laravel writes failed_at (Y-m-d H:i:s): the
// wall-clock text in the app's timezone that the stores compare filters with.
const FailedAtLayout = "2006-01-02 15:04:05"

// ParseFailedAt reads a failed_at text, spaces trimmed, in any layout a
// store may hold: Laravel's, ISO 8601 with or without a zone, PostgreSQL's
// timestamp(tz) output, or a bare date, fractional seconds accepted. A text
// without a zone is wall-clock time in loc; a zoned one keeps its offset.
func ParseFailedAt(s string, loc *time.Location) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, layout := range [...]string{FailedAtLayout, "2006-01-02T15:04:05", "2006-01-02T15:04:05Z07:00",
		"2006-01-02 15:04:05Z07", "2006-01-02 15:04:05Z07:00", "2006-01-02 15:04:05Z07:00:00", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}
