package follow

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/jobtriage/jobtriage/triage"
)

// Pacer spaces pushes to a rate (jobs per second): the n-th job is pushed no
// earlier than start + n/rate, a schedule rather than a token bucket, so
// the rate is exact over a long run. A stall is not caught up in a burst:
// once the schedule is behind by more than PaceSlice it starts again from
// now, so no second sees more than the rate and one batch.
type Pacer struct {
	Rate  float64
	Clock Clock
	start time.Time
}

// NewPacer returns a pacer at rate jobs per second.
func NewPacer(rate float64, clock Clock) *Pacer { return &Pacer{Rate: rate, Clock: clock} }

// Delay is how long to wait before pushing more, done jobs having been
// pushed so far. The first call starts the schedule.
func (p *Pacer) Delay(done int) time.Duration {
	now := p.Clock.Now()
	if p.start.IsZero() {
		p.start = now
	}
	at := func(n int) time.Time { return p.start.Add(time.Duration(float64(n) / p.Rate * float64(time.Second))) }
	if behind := now.Sub(at(done)); behind > PaceSlice {
		p.start = p.start.Add(behind) // forgive the stall: no burst
	}
	return max(at(done).Sub(now), 0)
}

// Wait waits Delay(done), or until ctx ends.
func (p *Pacer) Wait(ctx context.Context, done int) error {
	d := p.Delay(done)
	if err := ctx.Err(); err != nil || d <= 0 {
		return err
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-p.Clock.After(d):
		return nil
	}
}

// PaceSlice is the time one paced batch covers at the rate.
const PaceSlice = 100 * time.Millisecond

// BatchFor is PaceSlice worth of jobs, within 1..triage.WriteBatch.
func BatchFor(rate float64) int {
	n := int(math.Ceil(rate * PaceSlice.Seconds()))
	return min(max(n, 1), triage.WriteBatch)
}

// ParseRate reads --rate: a positive "N/s", "N/m", "N/h" or N (per second).
func ParseRate(s string) (float64, error) {
	t := strings.TrimSpace(s)
	per := time.Second
	if num, unit, ok := strings.Cut(t, "/"); ok {
		switch strings.TrimSpace(unit) {
		case "s", "sec", "second":
		case "m", "min", "minute":
			per = time.Minute
		case "h", "hour":
			per = time.Hour
		default:
			return 0, fmt.Errorf("--rate %q: want N/s, N/m or N/h", s)
		}
		t = strings.TrimSpace(num)
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
		return 0, fmt.Errorf("--rate %q: want a positive number of jobs per second, like 50/s", s)
	}
	return v / per.Seconds(), nil
}

// ETA estimates the time until every job settled: pushes to make at the rate,
// jobs to settle at the rate so far (ok: known).
func ETA(c Counts, total int, rate float64, elapsed time.Duration) (time.Duration, bool) {
	var eta time.Duration
	if rate > 0 && total > c.Pushed {
		eta = time.Duration(float64(total-c.Pushed) / rate * float64(time.Second))
	}
	left := max(total, c.Pushed) - c.Untracked - c.Settled()
	if left <= 0 {
		return eta, eta > 0
	}
	if c.Settled() == 0 || elapsed <= 0 {
		return eta, eta > 0 // the pushes still to make, at least
	}
	perJob := elapsed.Seconds() / float64(c.Settled())
	return max(eta, time.Duration(float64(left)*perJob*float64(time.Second))), true
}
