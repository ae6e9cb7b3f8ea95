package alerts

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Rule says when a key is alerting. Keys name what is counted, by
// convention "app", "queue:<name>", "class:<Job\Class>" or "sig:<signature>";
// the rule engine treats them as opaque strings.
type Rule struct {
	Key string
	// Threshold is the failure count within Window that makes the key alert.
	Threshold int
	// Window is the width of the sliding window the count covers.
	Window time.Duration
	// For is how long the count must stay at or above Threshold before the
	// alert fires; 0 fires at the first evaluation that crosses it.
	For time.Duration
	// Repeat is the interval of reminders while the alert keeps firing; 0
	// sends none.
	Repeat time.Duration
	// Measure names what Threshold counts when it is not failures in the
	// window: a gauge read afresh at every evaluation, e.g. "jobs queued"
	// (queue size) or "s waited by the oldest pending job". "" means
	// failures, counted over Window.
	Measure string
	// ResolveBelow is the hysteresis: a firing alert resolves only when the
	// count is ≤ ResolveBelow, so a count wobbling around Threshold does not
	// flap. 0 means the default, Threshold/2 (integer division); a negative
	// value means resolve only when the window is empty (count 0).
	ResolveBelow int
}

// ResolveLevel is the count at or below which a firing alert resolves:
// ResolveBelow with its defaults applied.
func (r Rule) ResolveLevel() int {
	switch {
	case r.ResolveBelow < 0:
		return 0
	case r.ResolveBelow == 0:
		return r.Threshold / 2
	}
	return r.ResolveBelow
}

// Validate reports the first thing wrong with the rule.
func (r Rule) Validate() error {
	switch {
	case strings.TrimSpace(r.Key) == "":
		return errors.New("rule has an empty key")
	case r.Threshold < 1:
		return fmt.Errorf("rule %q: threshold %d must be at least 1", r.Key, r.Threshold)
	case r.For < 0:
		return fmt.Errorf("rule %q: for %s must not be negative", r.Key, r.For)
	case r.Repeat < 0:
		return fmt.Errorf("rule %q: repeat %s must not be negative", r.Key, r.Repeat)
	case r.ResolveBelow >= r.Threshold:
		return fmt.Errorf("rule %q: resolve-below %d must be less than the threshold %d", r.Key, r.ResolveBelow, r.Threshold)
	}
	if err := checkWidth(r.Window); err != nil {
		return fmt.Errorf("rule %q: %w", r.Key, err)
	}
	return nil
}
