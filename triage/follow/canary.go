package follow

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Decision is what a canary run says about the rest of the selection.
type Decision int

const (
	Wait     Decision = iota // too few canaries have settled to tell
	Continue                 // enough succeeded: retry the rest
	Stop                     // too many failed again (or could not settle)
)

func (d Decision) String() string {
	switch d {
	case Continue:
		return "continue"
	case Stop:
		return "stop"
	}
	return "wait"
}

// Canary decides on the rest: Success is the share (0..1] that must succeed.
type Canary struct{ Success float64 }

// Needed is how many of n canaries must succeed.
func (c Canary) Needed(n int) int {
	return int(math.Ceil(c.Success*float64(n) - 1e-9))
}

// Decide: Continue once enough are done, Stop once too many failed again to
// reach the share, and, when final, Stop short of Continue.
func (c Canary) Decide(n Counts, final bool) Decision {
	total := n.Pushed - n.Untracked
	need := c.Needed(total)
	switch {
	case n.Done >= need:
		return Continue
	case n.FailedAgain > total-need, final:
		return Stop
	}
	return Wait
}

// ParseShare reads --canary-success: "80%", "80" or "0.8", in (0, 1].
func ParseShare(s string) (float64, error) {
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	t = strings.TrimSuffix(t, "%")
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) {
		return 0, fmt.Errorf("%q is not a share: want a percentage like 80%% or a fraction like 0.8", s)
	}
	if pct || v > 1 {
		v /= 100
	}
	if v <= 0 || v > 1 {
		return 0, fmt.Errorf("%q is not a share between 0%% (excluded) and 100%%", s)
	}
	return v, nil
}

// Breaker trips once Limit followed jobs failed again (never at 0).
type Breaker struct{ Limit int }

// Tripped reports whether pushing must stop.
func (b Breaker) Tripped(c Counts) bool { return b.Limit > 0 && c.FailedAgain >= b.Limit }
