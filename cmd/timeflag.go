package cmd

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// parseTimeBound reads --since/--until: a duration back from now ("90m",
// "36h", "7d", "2w") or a timestamp (RFC 3339, or "2006-01-02 15:04:05" /
// "2006-01-02" as wall-clock time in the app timezone, like failed_at).
func parseTimeBound(s string, now time.Time, loc *time.Location) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := parseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, fmt.Errorf("%q: a duration back from now must not be negative", s)
		}
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if loc == nil {
		loc = time.UTC
	}
	for _, layout := range []string{"2006-01-02 15:04:05", "2006-01-02T15:04:05", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is neither a duration (30m, 6h, 7d, 2w) nor a time (2026-11-30 14:00:00, RFC 3339)", s)
}

// parseDuration extends time.ParseDuration with days and weeks, which is how
// retention and incident windows are spoken of.
func parseDuration(s string) (time.Duration, error) {
	for _, u := range []struct {
		suffix string
		unit   time.Duration
	}{{"d", 24 * time.Hour}, {"w", 7 * 24 * time.Hour}} {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			v, err := strconv.ParseFloat(n, 64)
			if err != nil {
				return 0, err
			}
			return time.Duration(v * float64(u.unit)), nil
		}
	}
	return time.ParseDuration(s)
}
