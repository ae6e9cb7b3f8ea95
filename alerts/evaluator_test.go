package alerts

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// tick is one evaluation: at second `at`, the key "k" counts `count`, and the
// evaluation should notify `want` ("" for nothing) and leave `state`.
type tick struct {
	at    int
	count int
	want  string
	state State
}

func runTicks(t *testing.T, r Rule, ticks []tick) {
	t.Helper()
	r.Key = "k"
	e, err := NewEvaluator(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range ticks {
		got := ""
		if n, ok := e.Evaluate(at(tk.at), tk.count); ok {
			got = n.Event.String()
		}
		if got != tk.want {
			t.Errorf("t=%d count=%d: notified %q, want %q", tk.at, tk.count, got, tk.want)
		}
		if s := e.State(); s != tk.state {
			t.Errorf("t=%d count=%d: state %s, want %s", tk.at, tk.count, s, tk.state)
		}
	}
}

func TestEvaluatorTransitions(t *testing.T) {
	w := time.Minute
	for _, tt := range []struct {
		name  string
		rule  Rule
		ticks []tick
	}{
		{
			name: "seed: 30s window counts 2, 60s counts 3, threshold 3",
			rule: Rule{Threshold: 3, Window: w},
			ticks: []tick{
				{165, 2, "", StateOK},
				{166, 3, "firing", StateFiring},
			},
		},
		{
			name: "For 0 fires at once, then silence while firing without Repeat",
			rule: Rule{Threshold: 3, Window: w},
			ticks: []tick{
				{0, 5, "firing", StateFiring},
				{10, 9, "", StateFiring},
				{3600, 4, "", StateFiring},
			},
		},
		{
			name: "hysteresis: a count wobbling at the threshold does not flap",
			rule: Rule{Threshold: 3, Window: w}, // resolves at <= 1
			ticks: []tick{
				{0, 3, "firing", StateFiring},
				{10, 2, "", StateFiring},
				{20, 3, "", StateFiring},
				{30, 2, "", StateFiring},
				{40, 3, "", StateFiring},
				{50, 1, "resolved", StateResolved},
				{60, 2, "", StateOK},
				{70, 3, "firing", StateFiring},
			},
		},
		{
			name: "explicit ResolveBelow",
			rule: Rule{Threshold: 10, Window: w, ResolveBelow: 8},
			ticks: []tick{
				{0, 10, "firing", StateFiring},
				{10, 9, "", StateFiring},
				{20, 8, "resolved", StateResolved},
			},
		},
		{
			name: "negative ResolveBelow resolves only at zero",
			rule: Rule{Threshold: 4, Window: w, ResolveBelow: -1},
			ticks: []tick{
				{0, 4, "firing", StateFiring},
				{10, 1, "", StateFiring},
				{20, 0, "resolved", StateResolved},
			},
		},
		{
			name: "For: must hold for the whole duration",
			rule: Rule{Threshold: 3, Window: w, For: 30 * time.Second},
			ticks: []tick{
				{0, 3, "", StatePending},
				{29, 4, "", StatePending},
				{30, 3, "firing", StateFiring},
			},
		},
		{
			name: "For: dipping below restarts the clock, silently",
			rule: Rule{Threshold: 3, Window: w, For: 30 * time.Second},
			ticks: []tick{
				{0, 3, "", StatePending},
				{20, 2, "", StateOK},
				{25, 3, "", StatePending},
				{50, 3, "", StatePending},
				{55, 3, "firing", StateFiring},
			},
		},
		{
			name: "reminders every Repeat since the last notice",
			rule: Rule{Threshold: 3, Window: w, Repeat: 10 * time.Minute},
			ticks: []tick{
				{0, 3, "firing", StateFiring},
				{599, 3, "", StateFiring},
				{600, 3, "reminder", StateFiring},
				{1100, 3, "", StateFiring},
				{1200, 3, "reminder", StateFiring},
				{1300, 0, "resolved", StateResolved},
				{1400, 3, "firing", StateFiring},
				{1999, 3, "", StateFiring}, // the repeat clock restarted at 1400
				{2000, 3, "reminder", StateFiring},
			},
		},
		{
			name: "threshold 1 resolves at zero by default",
			rule: Rule{Threshold: 1, Window: w},
			ticks: []tick{
				{0, 1, "firing", StateFiring},
				{10, 0, "resolved", StateResolved},
				{20, 0, "", StateOK},
			},
		},
		{
			name: "negative counts are zero, a clock stepping back does not panic",
			rule: Rule{Threshold: 2, Window: w, For: time.Minute, Repeat: time.Minute},
			ticks: []tick{
				{100, -5, "", StateOK},
				{100, 2, "", StatePending},
				{50, 2, "", StatePending},
				{160, 2, "firing", StateFiring},
				{100, 2, "", StateFiring},
			},
		},
	} {
		t.Run(tt.name, func(t *testing.T) { runTicks(t, tt.rule, tt.ticks) })
	}
}

// The seed vector end to end: windows fed with the failure seconds, then
// evaluated at 165.
func TestSeedThroughWindowsAndEvaluator(t *testing.T) {
	rules := []Rule{
		{Key: "window:30s", Threshold: 3, Window: 30 * time.Second},
		{Key: "window:60s", Threshold: 3, Window: 60 * time.Second},
	}
	var got []Notification
	for _, r := range rules {
		e, err := NewEvaluator(r)
		if err != nil {
			t.Fatal(err)
		}
		w := mustWindow(t, r.Window)
		for _, s := range []int{100, 103, 105, 140, 160} {
			w.Add(at(s))
		}
		if n, ok := e.Evaluate(at(165), w.Count(at(165))); ok {
			got = append(got, n)
		}
	}
	want := []Notification{{Event: EventFiring, Rule: rules[1], Count: 3, Peak: 3, Since: at(165), At: at(165)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("notifications (-want +got):\n%s", diff)
	}
}

// Keys evaluated together keep their own episodes: peaks, starts and
// resolutions.
func TestEvaluatorsOfSeveralKeys(t *testing.T) {
	rules := []Rule{
		{Key: "app", Threshold: 10, Window: time.Minute},
		{Key: "queue:emails", Threshold: 3, Window: time.Minute},
		{Key: "class:App\\Jobs\\SendInvoice", Threshold: 3, Window: time.Minute},
		{Key: "sig:ab12cd34", Threshold: 2, Window: time.Minute, For: time.Minute},
	}
	var evals []*Evaluator
	for _, r := range rules {
		e, err := NewEvaluator(r)
		if err != nil {
			t.Fatal(err)
		}
		evals = append(evals, e)
	}
	evaluate := func(sec int, counts map[string]int) Digest {
		d := Digest{At: at(sec)}
		for _, e := range evals {
			if n, ok := e.Evaluate(at(sec), counts[e.Rule().Key]); ok {
				d.Notifications = append(d.Notifications, n)
			}
		}
		return d
	}
	d := evaluate(0, map[string]int{"app": 4, "queue:emails": 4, "class:App\\Jobs\\SendInvoice": 3, "sig:ab12cd34": 3})
	if got := keysOf(d); got != "queue:emails,class:App\\Jobs\\SendInvoice" {
		t.Errorf("first digest keys = %q", got)
	}
	d = evaluate(60, map[string]int{"app": 12, "sig:ab12cd34": 5})
	if got := keysOf(d); got != "app,queue:emails,class:App\\Jobs\\SendInvoice,sig:ab12cd34" {
		t.Errorf("second digest keys = %q", got)
	}
	want := []Event{EventFiring, EventResolved, EventResolved, EventFiring}
	for i, n := range d.Notifications {
		if n.Event != want[i] {
			t.Errorf("notification %d (%s): event %s, want %s", i, n.Rule.Key, n.Event, want[i])
		}
	}
	resolved := d.Notifications[1]
	if resolved.Peak != 4 || !resolved.Since.Equal(at(0)) || resolved.Count != 0 {
		t.Errorf("resolved notification = %+v, want peak 4 since t=0 count 0", resolved)
	}
	if sig := d.Notifications[3]; !sig.Since.Equal(at(0)) || sig.Peak != 5 {
		t.Errorf("sig notification = %+v, want since t=0 (pending start), peak 5", sig)
	}
	if d := evaluate(61, map[string]int{"app": 12, "sig:ab12cd34": 5}); !d.Empty() {
		t.Errorf("steady state notified: %+v", d.Notifications)
	}
}

func keysOf(d Digest) string {
	var keys []string
	for _, n := range d.Notifications {
		keys = append(keys, n.Rule.Key)
	}
	return strings.Join(keys, ",")
}

func TestRuleValidation(t *testing.T) {
	ok := Rule{Key: "app", Threshold: 3, Window: time.Minute}
	for _, tt := range []struct {
		name string
		edit func(*Rule)
		want string
	}{
		{"empty key", func(r *Rule) { r.Key = " " }, "empty key"},
		{"zero threshold", func(r *Rule) { r.Threshold = 0 }, "threshold 0 must be at least 1"},
		{"no window", func(r *Rule) { r.Window = 0 }, "too short"},
		{"negative for", func(r *Rule) { r.For = -time.Second }, "must not be negative"},
		{"negative repeat", func(r *Rule) { r.Repeat = -time.Second }, "must not be negative"},
		{"resolve at threshold", func(r *Rule) { r.ResolveBelow = 3 }, "must be less than the threshold"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := ok
			tt.edit(&r)
			_, err := NewEvaluator(r)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
	if _, err := NewEvaluator(ok); err != nil {
		t.Errorf("valid rule rejected: %v", err)
	}
}

// Save and Restore carry a firing key over to a new evaluator: it neither
// fires again nor forgets to resolve, and reminds on the old schedule.
func TestSaveRestoreCarriesFiringKeys(t *testing.T) {
	r := Rule{Key: "k", Threshold: 3, Window: time.Minute, Repeat: 10 * time.Minute}
	quiet, _ := NewEvaluator(Rule{Key: "quiet", Threshold: 3, Window: time.Minute})
	if _, ok := quiet.Save(); ok {
		t.Error("an ok key saved")
	}
	e, _ := NewEvaluator(r)
	e.Evaluate(at(0), 5)
	saved, ok := e.Save()
	if !ok || saved.Key != "k" || saved.State != "firing" || saved.Peak != 5 {
		t.Fatalf("Save = %+v, %v", saved, ok)
	}
	next, _ := NewEvaluator(r)
	if next.Restore(Saved{Key: "k", State: "ok"}) || next.Restore(Saved{Key: "gone", State: "firing"}) || !next.Restore(saved) {
		t.Error("Restore took an ok state or another key's, or not the saved one")
	}
	if n, ok := next.Evaluate(at(60), 4); ok {
		t.Errorf("fired again after a restore: %+v", n)
	}
	if n, ok := next.Evaluate(at(600), 4); !ok || n.Event != EventReminder {
		t.Errorf("reminder on the old schedule: %+v", n)
	}
	n, ok := next.Evaluate(at(700), 0)
	if !ok || n.Event != EventResolved || !n.Since.Equal(at(0)) || n.Peak != 5 {
		t.Errorf("resolution: %+v", n)
	}
}

func TestAppLabelAndID(t *testing.T) {
	for _, tt := range []struct {
		app  App
		want string
	}{
		{App{Name: "shop", Environment: "production", Database: "db"}, "shop (production)"},
		{App{Name: "shop", Database: "db"}, "shop"},
		{App{Database: "sqlite:/x"}, "sqlite:/x"},
		{App{}, ""},
	} {
		if got := tt.app.Label(); got != tt.want {
			t.Errorf("%+v: Label = %q, want %q", tt.app, got, tt.want)
		}
	}
	a, b := App{Name: "a", Environment: "b"}, App{Name: "a\x00b"}
	if a.ID() == b.ID() || a.ID() != (App{Name: "a", Environment: "b"}).ID() {
		t.Error("ID is not a faithful identity")
	}
}
