package follow

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
)

// fakeClock moves only when a waiter asks it to: After advances the time
// by d and fires at once, so a follower's loop runs in virtual time.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *fakeClock { return &fakeClock{now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	c.now = c.now.Add(d)
	t := c.now
	c.mu.Unlock()
	ch := make(chan time.Time, 1)
	ch <- t
	return ch
}

func job(u string) triage.Pushed {
	return triage.Pushed{UUID: u, ID: u, Class: "App\\Jobs\\X", Connection: "database", Queue: "default"}
}

func obs(queued map[string]triage.JobState, failed ...string) Observation {
	o := Observation{Queued: queued, Failed: map[string]bool{}}
	for _, f := range failed {
		o.Failed[f] = true
	}
	return o
}

func TestFollowerStates(t *testing.T) {
	tr := New(nil, nil, 2*time.Second)
	tr.Add([]triage.Pushed{job("a"), job("b"), job("c"), job("a"), {ID: "7"}})
	if c := tr.Counts(); c.Pushed != 5 || c.Untracked != 2 || c.Waiting != 3 {
		t.Fatalf("after Add: %+v", c)
	}
	t0 := time.Unix(1000, 0)
	ch := tr.observe(t0, obs(map[string]triage.JobState{"a": triage.JobRunning, "b": triage.JobWaiting, "c": triage.JobWaiting}))
	if len(ch) != 1 || ch[0].Job.UUID != "a" || ch[0].From != Waiting || ch[0].To != Running {
		t.Fatalf("changes %+v, want a waiting → running", ch)
	}
	// a leaves the queue; b fails again; c is still there.
	ch = tr.observe(t0.Add(time.Second), obs(map[string]triage.JobState{"c": triage.JobWaiting}, "b"))
	if len(ch) != 1 || ch[0].Job.UUID != "b" || ch[0].To != FailedAgain {
		t.Fatalf("changes %+v, want only b failed again (a is gone once: not done yet)", ch)
	}
	// Gone a second time but within the grace: not done.
	if ch = tr.observe(t0.Add(2*time.Second), obs(map[string]triage.JobState{"c": triage.JobWaiting})); len(ch) != 0 {
		t.Fatalf("changes %+v inside the grace", ch)
	}
	// A partial look proves nothing about a.
	if ch = tr.observe(t0.Add(10*time.Second), Observation{Partial: true, Queued: map[string]triage.JobState{"c": triage.JobWaiting}}); len(ch) != 0 {
		t.Fatalf("a partial look settled %+v", ch)
	}
	ch = tr.observe(t0.Add(3*time.Second+time.Millisecond), obs(map[string]triage.JobState{"c": triage.JobWaiting}))
	if len(ch) != 1 || ch[0].Job.UUID != "a" || ch[0].From != Running || ch[0].To != Done {
		t.Fatalf("changes %+v, want a running → done", ch)
	}
	// A settled job stays settled whatever is seen later.
	if ch = tr.observe(t0.Add(4*time.Second), obs(map[string]triage.JobState{"a": triage.JobWaiting, "c": triage.JobWaiting}, "a")); len(ch) != 0 {
		t.Fatalf("settled job changed: %+v", ch)
	}
	if c := tr.Counts(); c.Waiting != 1 || c.Running != 0 || c.Done != 1 || c.FailedAgain != 1 || c.Settled() != 2 || c.Unsettled() != 1 {
		t.Fatalf("counts %+v", c)
	}
	if u := tr.in(func(e *entry) bool { return !e.state.Settled() }); len(u) != 1 || u[0].UUID != "c" {
		t.Errorf("unsettled %+v", u)
	}
	if f := tr.In(FailedAgain); len(f) != 1 || f[0].UUID != "b" {
		t.Errorf("failed again %+v", f)
	}
	if r := tr.Report(); len(r) != 3 || r[0].State != Done || r[1].State != FailedAgain || r[2].State != Waiting {
		t.Errorf("report %+v", r)
	}
}

// A job that comes back (released by its worker: deleted and queued again)
// starts its grace over.
func TestFollowerComeBackResetsGrace(t *testing.T) {
	tr := New(nil, nil, time.Second)
	tr.Add([]triage.Pushed{job("a")})
	t0 := time.Unix(1000, 0)
	tr.observe(t0, obs(nil))
	tr.observe(t0.Add(500*time.Millisecond), obs(map[string]triage.JobState{"a": triage.JobWaiting}))
	if ch := tr.observe(t0.Add(2*time.Second), obs(nil)); len(ch) != 0 {
		t.Fatalf("done after one look since it came back: %+v", ch)
	}
	if ch := tr.observe(t0.Add(3*time.Second), obs(nil)); len(ch) != 1 || ch[0].To != Done {
		t.Fatalf("changes %+v, want done", ch)
	}
}

func TestCanaryDecide(t *testing.T) {
	all := Canary{Success: 1}
	most := Canary{Success: 0.6}
	for _, c := range []struct {
		name  string
		can   Canary
		n     Counts
		final bool
		want  Decision
	}{
		{"all done", all, Counts{Pushed: 3, Done: 3}, false, Continue},
		{"one still running", all, Counts{Pushed: 3, Done: 2, Running: 1}, false, Wait},
		{"one failed: 100% unreachable", all, Counts{Pushed: 3, Done: 0, FailedAgain: 1, Waiting: 2}, false, Stop},
		{"timeout with one running", all, Counts{Pushed: 3, Done: 2, Running: 1}, true, Stop},
		{"60% of 3 needs 2", most, Counts{Pushed: 3, Done: 2, FailedAgain: 1}, false, Continue},
		{"60% of 3: two failed", most, Counts{Pushed: 3, Done: 1, FailedAgain: 2}, false, Stop},
		{"60% of 3: one failed, wait", most, Counts{Pushed: 3, Done: 1, FailedAgain: 1, Running: 1}, false, Wait},
		{"untracked do not count", all, Counts{Pushed: 4, Untracked: 1, Done: 3}, false, Continue},
	} {
		if got := c.can.Decide(c.n, c.final); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	if n := (Canary{Success: 0.8}).Needed(5); n != 4 {
		t.Errorf("80%% of 5 = %d, want 4", n)
	}
	if n := (Canary{Success: 0.7}).Needed(10); n != 7 {
		t.Errorf("70%% of 10 = %d, want 7 (no float ceiling to 8)", n)
	}
}

func TestParseShare(t *testing.T) {
	for in, want := range map[string]float64{"100%": 1, "80%": 0.8, "80": 0.8, "0.5": 0.5, "1": 1, " 50 % ": 0} {
		got, err := ParseShare(in)
		if want == 0 {
			if err == nil {
				t.Errorf("%q: %v, want an error", in, got)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("%q = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "0", "0%", "-5%", "150%", "abc", "NaN"} {
		if _, err := ParseShare(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestParseRateAndBatch(t *testing.T) {
	for in, want := range map[string]float64{"50/s": 50, "50": 50, "120/m": 2, "3600/h": 1, "0.5/s": 0.5} {
		if got, err := ParseRate(in); err != nil || got != want {
			t.Errorf("%q = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "0/s", "-1", "5/d", "x/s", "Inf"} {
		if _, err := ParseRate(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	for rate, want := range map[float64]int{0.5: 1, 10: 1, 100: 10, 1000: 100, 1e6: triage.WriteBatch} {
		if got := BatchFor(rate); got != want {
			t.Errorf("BatchFor(%v) = %d, want %d", rate, got, want)
		}
	}
}

func TestPacerKeepsTheSchedule(t *testing.T) {
	clk := newClock()
	start := clk.Now()
	p := NewPacer(100, clk) // 10 ms a job
	ctx := context.Background()
	done := 0
	for done < 1000 {
		if err := p.Wait(ctx, done); err != nil {
			t.Fatal(err)
		}
		// Each batch takes 3 ms of work on the clock.
		clk.mu.Lock()
		clk.now = clk.now.Add(3 * time.Millisecond)
		clk.mu.Unlock()
		done += BatchFor(100)
	}
	// The last batch starts at (1000-10)/100 s = 9.9 s; the work of the
	// batches must not add up on top of the schedule.
	if got := clk.Now().Sub(start); got != 9900*time.Millisecond+3*time.Millisecond {
		t.Errorf("1,000 jobs at 100/s took %v, want 9.903s", got)
	}
	if d := p.Delay(done); d != 97*time.Millisecond {
		t.Errorf("Delay on schedule = %v, want 97ms", d)
	}
	// Behind schedule by a stall of a second: no wait now, and the next
	// batch is due a batch's time later, not at once (no catch-up burst).
	clk.mu.Lock()
	clk.now = clk.now.Add(time.Second)
	clk.mu.Unlock()
	if d := p.Delay(done); d != 0 {
		t.Errorf("Delay when behind = %v", d)
	}
	if d := p.Delay(done + 10); d != 100*time.Millisecond {
		t.Errorf("Delay of the batch after a stall = %v, want 100ms (the rate, not a burst)", d)
	}
	// Behind by less than a slice (jitter): caught up, the schedule kept.
	clk.mu.Lock()
	clk.now = clk.now.Add(150 * time.Millisecond) // 50 ms late for done+10
	clk.mu.Unlock()
	if d := p.Delay(done + 20); d != 50*time.Millisecond {
		t.Errorf("Delay after jitter = %v, want 50ms", d)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := p.Wait(cctx, done+1000); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait with a cancelled ctx: %v", err)
	}
}

func TestETA(t *testing.T) {
	if _, ok := ETA(Counts{Pushed: 10, Waiting: 10}, 10, 0, time.Second); ok {
		t.Error("an ETA with nothing settled yet")
	}
	// 10 settled in 5 s, 30 left → 15 s.
	if d, ok := ETA(Counts{Pushed: 40, Done: 8, FailedAgain: 2, Waiting: 30}, 40, 0, 5*time.Second); !ok || d != 15*time.Second {
		t.Errorf("ETA = %v, %v; want 15s", d, ok)
	}
	// Paced, nothing settled yet: the pushes still to make, at least.
	if d, ok := ETA(Counts{Pushed: 40, Waiting: 40}, 100, 10, time.Second); !ok || d != 6*time.Second {
		t.Errorf("paced ETA before any settled = %v, %v; want 6s", d, ok)
	}
	// Paced: 100 still to push at 10/s outlasts the settling.
	if d, ok := ETA(Counts{Pushed: 10, Done: 10}, 110, 10, time.Second); !ok || d != 10*time.Second {
		t.Errorf("paced ETA = %v, %v; want 10s", d, ok)
	}
}

func TestBreaker(t *testing.T) {
	if (Breaker{}).Tripped(Counts{FailedAgain: 1000}) {
		t.Error("a zero breaker tripped")
	}
	b := Breaker{Limit: 3}
	if b.Tripped(Counts{FailedAgain: 2}) || !b.Tripped(Counts{FailedAgain: 3}) {
		t.Error("breaker of 3 trips wrong")
	}
}

// scripted is a Source that plays looks in turn (the last one repeats).
type scripted struct {
	mu    sync.Mutex
	looks []Observation
	n     int
	err   error
}

func (s *scripted) Look(context.Context, []triage.Pushed) (Observation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return Observation{}, s.err
	}
	o := s.looks[min(s.n, len(s.looks)-1)]
	s.n++
	return o, nil
}

func TestFollowerRun(t *testing.T) {
	ctx := context.Background()
	t.Run("settles", func(t *testing.T) {
		src := &scripted{looks: []Observation{
			obs(map[string]triage.JobState{"a": triage.JobWaiting, "b": triage.JobWaiting}),
			obs(map[string]triage.JobState{"a": triage.JobRunning}, "b"),
			obs(nil),
		}}
		f := New(src, newClock(), time.Second)
		f.Timeout = time.Minute
		var changes []Change
		f.OnChange = func(ch []Change, _ Counts) { changes = append(changes, ch...) }
		f.Add([]triage.Pushed{job("a"), job("b")})
		f.Close()
		out, err := f.Run(ctx, nil)
		c := f.Counts()
		if err != nil || out != Settled || c.Done != 1 || c.FailedAgain != 1 {
			t.Fatalf("Run = %v, %v; counts %+v", out, err, c)
		}
		// a: running, done; b: failed again.
		if len(changes) != 3 || changes[0].To != Running || changes[1].To != FailedAgain || changes[2].To != Done {
			t.Errorf("changes %+v", changes)
		}
	})
	t.Run("times out", func(t *testing.T) {
		clk := newClock()
		f := New(&scripted{looks: []Observation{obs(map[string]triage.JobState{"a": triage.JobWaiting})}}, clk, time.Second)
		f.Timeout = 10 * time.Second
		f.Add([]triage.Pushed{job("a")})
		start := clk.Now()
		f.Close()
		out, err := f.Run(ctx, nil)
		if err != nil || out != TimedOut || f.Counts().Waiting != 1 {
			t.Fatalf("Run = %v, %v; counts %+v", out, err, f.Counts())
		}
		if got := clk.Now().Sub(start); got != 10*time.Second {
			t.Errorf("timed out after %v, want the 10s timeout exactly", got)
		}
	})
	t.Run("stops", func(t *testing.T) {
		f := New(&scripted{looks: []Observation{obs(nil, "a")}}, newClock(), time.Second)
		f.Add([]triage.Pushed{job("a"), job("b")})
		out, err := f.Run(ctx, Breaker{Limit: 1}.Tripped)
		if err != nil || out != Stopped {
			t.Fatalf("Run = %v, %v", out, err)
		}
	})
	t.Run("source error", func(t *testing.T) {
		boom := errors.New("boom")
		f := New(&scripted{err: boom}, newClock(), time.Second)
		f.Add([]triage.Pushed{job("a")})
		if _, err := f.Run(ctx, nil); !errors.Is(err, boom) {
			t.Fatalf("Run error %v, want boom", err)
		}
	})
	t.Run("not closed keeps looking", func(t *testing.T) {
		// Without Close a follower never ends on its own, even with
		// nothing unsettled: more jobs may still be pushed.
		f := New(&scripted{looks: []Observation{obs(nil)}}, newClock(), time.Second)
		cctx, cancel := context.WithCancel(ctx)
		looks := 0
		out, err := f.Run(cctx, func(Counts) bool {
			looks++
			if looks == 5 {
				cancel()
			}
			return false
		})
		if !errors.Is(err, context.Canceled) || out != TimedOut || looks < 5 {
			t.Fatalf("Run = %v, %v after %d looks", out, err, looks)
		}
	})
}
