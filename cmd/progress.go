package cmd

import (
	"fmt"
	"time"

	"github.com/dustin/go-humanize"
)

// Progress of a bulk write on a terminal's stderr: "retried 1,204 of 9,092
// (13%) · 2,310/s · about 4s left" when the dry run counted a total, else
// "retried 1,204 · 2,310/s". The total is an estimate (others act between the
// count and the run), so the percentage stops at 99 until the run ends.

// meterInterval is the least time between two redraws.
const meterInterval = 100 * time.Millisecond

// meterWarmup is how long a run goes before a rate and ETA are shown: the
// first batch alone says little about the rest.
const meterWarmup = 500 * time.Millisecond

type meter struct {
	io    *IOStreams
	verb  string
	total int64 // 0: unknown
	now   func() time.Time
	start time.Time
	last  time.Time
	shown bool
}

// newMeter starts a meter; total is the expected count, 0 when unknown.
func newMeter(io *IOStreams, verb string, total int64) *meter {
	return &meter{io: io, verb: verb, total: total, now: time.Now, start: time.Now()}
}

// update redraws with n jobs done so far.
func (m *meter) update(n int64) {
	if m == nil || !m.io.IsStderrTTY() {
		return
	}
	now := m.now()
	if now.Sub(m.last) < meterInterval {
		return
	}
	m.last, m.shown = now, true
	fmt.Fprint(m.io.ErrOut, "\r\033[K"+m.line(n, now))
}

// line is the text of one redraw.
func (m *meter) line(n int64, now time.Time) string {
	s := m.verb + " " + humanize.Comma(n)
	if m.total > 0 {
		pct := min(n*100/m.total, 99)
		s += fmt.Sprintf(" of %s (%d%%)", humanize.Comma(m.total), pct)
	}
	elapsed := now.Sub(m.start)
	if elapsed < meterWarmup || n == 0 {
		return s + "…"
	}
	rate := float64(n) / elapsed.Seconds()
	s += " · " + humanize.Comma(int64(rate)) + "/s"
	if m.total > n {
		left := time.Duration(float64(m.total-n) / rate * float64(time.Second))
		s += " · about " + roundETA(left) + " left"
	}
	return s
}

// roundETA keeps an estimate to what it is worth: seconds under a minute, then minutes.
func roundETA(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%ds", int(d.Round(time.Second)/time.Second))
	}
	return fmt.Sprintf("%dm", int(d.Round(time.Minute)/time.Minute))
}

// done clears the line.
func (m *meter) done() {
	if m != nil && m.shown {
		fmt.Fprint(m.io.ErrOut, "\r\033[K")
	}
}
