package tui

import (
	"strconv"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/jobtriage/jobtriage/alerts"
	"github.com/jobtriage/jobtriage/triage"
)

// ago is a compact relative time for narrow columns: "now", "45s ago",
// "12m ago", "3h ago", "5d ago"; times in the future (clock skew) say "now".
func ago(now, t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	d := now.Sub(t)
	switch {
	case d < time.Second:
		return "now"
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + "s ago"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m ago"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d/time.Hour)) + "h ago"
	default:
		return strconv.Itoa(int(d/(24*time.Hour))) + "d ago"
	}
}

// stamp is Laravel's failed_at layout, the way operators read it in SQL.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.Format(triage.FailedAtLayout)
}

func count(n int) string { return humanize.Comma(int64(n)) }

// plural picks "1 job" / "1,204 jobs".
func plural(n int, one, many string) string {
	return count(n) + " " + alerts.Plural(n, one, many)
}

// sparkLevels are the block characters of a sparkline, lowest first; the
// first one stands for zero.
const sparkLevels = "▁▂▃▄▅▆▇█"

// Sparkline draws counts as one block character each, scaled to the
// largest: zero is the lowest block, any failure at least the second, the
// largest the full block. The CLI's failed --group draws its trend with it.
func Sparkline(counts []int) string {
	levels := []rune(sparkLevels)
	top := 0
	for _, c := range counts {
		top = max(top, c)
	}
	out := make([]rune, len(counts))
	for i, c := range counts {
		l := 0
		if c > 0 {
			// 1..len-1, rounding up so that one failure never looks like none.
			l = 1 + (c*(len(levels)-1)-1)/top
		}
		out[i] = levels[l]
	}
	return string(out)
}

// Change is a trend change as people read it: "+12", "-3", "0"; above
// four digits in thousands, millions or billions ("+12k", "-3M"), so that
// it never takes more than five cells.
func Change(n int) string {
	sign := ""
	if n > 0 {
		sign = "+"
	} else if n < 0 {
		sign, n = "-", -n
	}
	switch {
	case n >= 1_000_000_000:
		return sign + strconv.Itoa(n/1_000_000_000) + "G"
	case n >= 1_000_000:
		return sign + strconv.Itoa(n/1_000_000) + "M"
	case n >= 10_000:
		return sign + strconv.Itoa(n/1000) + "k"
	}
	return sign + strconv.Itoa(n)
}
