package cmd

import (
	"cmp"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// parseTimeBound reads --since/--until: a duration back from now ("7d") or a
// time (RFC 3339, or wall-clock "2006-01-02 15:04:05" in the app timezone).
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
	for _, layout := range []string{"2006-01-02 15:04:05", "2006-01-02T15:04:05", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, cmp.Or(loc, time.UTC)); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is neither a duration (30m, 6h, 7d, 2w) nor a time (2026-11-30 14:00:00, RFC 3339)", s)
}

// parseDuration reads every flag's duration: Go's units plus days (d) and
// weeks (w), combinable (1d12h), with fractions (1.5h). A number without a
// unit is refused (is "10" seconds or days?), except 0.
func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "0" {
		return 0, nil
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil && strings.ContainsAny(s, "0123456789") {
		return 0, errBareNumber(s)
	}
	// Days and weeks become hours, for time.ParseDuration to add up.
	bad := false
	goDur := dayWeekRE.ReplaceAllStringFunc(s, func(m string) string {
		v, err := strconv.ParseFloat(m[:len(m)-1], 64)
		bad = bad || err != nil
		return strconv.FormatFloat(v*map[byte]float64{'d': 24, 'w': 7 * 24}[m[len(m)-1]], 'f', -1, 64) + "h"
	})
	d, err := time.ParseDuration(goDur)
	if bad || err != nil {
		return 0, errDuration
	}
	return d, nil
}

// dayWeekRE is a number of days or weeks inside a duration.
var dayWeekRE = regexp.MustCompile(`[0-9.]*[dw]`)
