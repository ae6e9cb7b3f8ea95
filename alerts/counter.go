package alerts

import "time"

// Counter keeps one Window per rule key, so a watcher can feed failure times
// as it reads them and ask for the counts an Evaluator wants.
type Counter struct {
	windows map[string]*Window
}

// NewCounter makes a window for every rule, as wide as the rule's Window.
func NewCounter(rules []Rule) (*Counter, error) {
	if err := validateRules(rules); err != nil {
		return nil, err
	}
	c := &Counter{windows: make(map[string]*Window, len(rules))}
	for _, r := range rules {
		w, err := NewWindow(r.Window)
		if err != nil {
			return nil, err
		}
		c.windows[r.Key] = w
	}
	return c, nil
}

// Observe records one failure at t under each of keys (a failure typically
// belongs to "app", its queue, its class and its signature at once). Keys no
// rule watches are ignored.
func (c *Counter) Observe(t time.Time, keys ...string) {
	for _, k := range keys {
		if w, ok := c.windows[k]; ok {
			w.Add(t)
		}
	}
}

// Counts returns every rule key's count at now, ready for Evaluate.
func (c *Counter) Counts(now time.Time) map[string]int {
	out := make(map[string]int, len(c.windows))
	for k, w := range c.windows {
		out[k] = w.Count(now)
	}
	return out
}
