package alerts

import (
	"fmt"
	"time"
)

// State is where a rule's key stands.
type State int

const (
	// StateOK: the count is below the threshold (or the alert resolved).
	StateOK State = iota
	// StatePending: the count reached the threshold but has not held it for
	// the rule's For yet. Nothing was sent.
	StatePending
	// StateFiring: the alert fired and has not resolved.
	StateFiring
	// StateResolved: the alert resolved at the last evaluation. It behaves
	// as StateOK from the next evaluation on.
	StateResolved
)

func (s State) String() string {
	if s >= StatePending && s <= StateResolved {
		return [...]string{"pending", "firing", "resolved"}[s-StatePending]
	}
	return "ok"
}

// Event is what a notification announces.
type Event int

const (
	// EventFiring: the key started alerting.
	EventFiring Event = iota + 1
	// EventReminder: the key is still alerting, Repeat after the last notice.
	EventReminder
	// EventResolved: the count fell to the rule's resolve level.
	EventResolved
)

func (e Event) String() string {
	if e >= EventFiring && e <= EventResolved {
		return [...]string{"firing", "reminder", "resolved"}[e-EventFiring]
	}
	return fmt.Sprintf("event(%d)", int(e))
}

// Notification is one transition worth telling a human about.
type Notification struct {
	Event Event
	Rule  Rule
	// Count is the failure count in the window at At.
	Count int
	// Peak is the highest count seen since the key started alerting.
	Peak int
	// Since is when the count first reached the threshold in this episode.
	Since time.Time
	// At is the evaluation time that produced the notification.
	At time.Time
	// Detail helps a person look closer; the evaluator leaves it empty and
	// a watcher fills it in.
	Detail Detail
}

// Detail is what an alert body says beyond the numbers: an example of what
// failed under the key (the latest failure's job class and exception
// message, text from the database) and the jobtriage command that lists it.
type Detail struct {
	Class   string `json:"class,omitempty"`
	Message string `json:"message,omitempty"`
	Command string `json:"command,omitempty"`
}

// App names the watched application in every alert body, so two apps
// alerting into one channel (or one PagerDuty service) are told apart.
type App struct {
	Name        string `json:"name,omitempty"`
	Environment string `json:"environment,omitempty"`
	// Database is the failed-jobs store, without its password.
	Database string `json:"database,omitempty"`
}

// Label is the app's short name for humans: "shop (production)", or the
// database when the app is unnamed.
func (a App) Label() string {
	switch {
	case a.Name != "" && a.Environment != "":
		return a.Name + " (" + a.Environment + ")"
	case a.Name != "":
		return a.Name
	}
	return a.Database
}

// ID is the app's stable identity, for deduplication keys: name,
// environment and database together.
func (a App) ID() string { return a.Name + "\x00" + a.Environment + "\x00" + a.Database }

// Digest is every notification of one evaluation, sent together so that
// several keys changing at once page a human once.
type Digest struct {
	At time.Time
	// App is what is watched; zero when the watcher was not told.
	App           App
	Notifications []Notification
}

// Empty reports whether there is nothing to send.
func (d Digest) Empty() bool { return len(d.Notifications) == 0 }

type keyState struct {
	state        State
	count        int
	peak         int
	since        time.Time // first evaluation at or above the threshold
	lastNotified time.Time // last firing or reminder
}

// Evaluator holds one rule's key state across evaluations. It never reads a
// clock: each Evaluate gets now. It is not safe for concurrent use; one
// watcher loop owns it.
type Evaluator struct {
	rule Rule
	s    keyState
}

// NewEvaluator checks the rule and starts its key in StateOK.
func NewEvaluator(r Rule) (*Evaluator, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return &Evaluator{rule: r}, nil
}

// Rule returns the evaluator's rule.
func (e *Evaluator) Rule() Rule { return e.rule }

// Evaluate advances the state to now with count (a negative count is taken
// as 0) and returns the transition's notification, if any. Only transitions
// notify: firing, a reminder every Repeat while firing, resolved.
func (e *Evaluator) Evaluate(now time.Time, count int) (Notification, bool) {
	r, s := e.rule, &e.s
	count = max(count, 0)
	s.count = count
	notice := func(ev Event) (Notification, bool) {
		return Notification{Event: ev, Rule: r, Count: count, Peak: s.peak, Since: s.since, At: now}, true
	}
	switch s.state {
	case StateOK, StateResolved:
		s.state = StateOK
		if count < r.Threshold {
			return Notification{}, false
		}
		s.since, s.peak = now, count
		s.state = StatePending
		fallthrough
	case StatePending:
		if count < r.Threshold {
			// Pending never notified, so it falls back without hysteresis.
			s.state, s.since, s.peak = StateOK, time.Time{}, 0
			return Notification{}, false
		}
		s.peak = max(s.peak, count)
		if now.Sub(s.since) < r.For {
			return Notification{}, false
		}
		s.state, s.lastNotified = StateFiring, now
		return notice(EventFiring)
	case StateFiring:
		if count <= r.ResolveLevel() {
			n, ok := notice(EventResolved)
			s.state, s.since, s.peak, s.lastNotified = StateResolved, time.Time{}, 0, time.Time{}
			return n, ok
		}
		s.peak = max(s.peak, count)
		if r.Repeat > 0 && now.Sub(s.lastNotified) >= r.Repeat {
			s.lastNotified = now
			return notice(EventReminder)
		}
	}
	return Notification{}, false
}

// State is where the key stands, Count its count at the last evaluation.
func (e *Evaluator) State() State { return e.s.state }
func (e *Evaluator) Count() int   { return e.s.count }

// Saved is one key's alert state as a watcher persists it across restarts:
// enough to neither fire again what is firing nor forget it.
type Saved struct {
	Key          string    `json:"key"`
	State        string    `json:"state"` // "pending" or "firing"
	Count        int       `json:"count"`
	Peak         int       `json:"peak"`
	Since        time.Time `json:"since"`
	LastNotified time.Time `json:"last_notified"`
}

// Save returns the key's state when it is pending or firing; a key that is
// ok carries nothing worth keeping.
func (e *Evaluator) Save() (Saved, bool) {
	s := e.s
	if s.state != StatePending && s.state != StateFiring {
		return Saved{}, false
	}
	return Saved{Key: e.rule.Key, State: s.state.String(), Count: s.count, Peak: s.peak, Since: s.since,
		LastNotified: s.lastNotified}, true
}

// Restore puts a saved state back when it is of the rule's key and pending
// or firing, and reports whether it did.
func (e *Evaluator) Restore(sv Saved) bool {
	states := map[string]State{StatePending.String(): StatePending, StateFiring.String(): StateFiring}
	st, ok := states[sv.State]
	if !ok || sv.Key != e.rule.Key {
		return false
	}
	e.s = keyState{state: st, count: max(sv.Count, 0), peak: max(sv.Peak, 0), since: sv.Since, lastNotified: sv.LastNotified}
	return true
}
