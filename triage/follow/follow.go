// Package follow follows re-queued jobs through their queue backends until
// they settle: waiting → running → done (gone from the queue and not back in
// failed_jobs) or failed again, and holds the rest of retry's follow-through:
// the canary decision, the breaker and the pacer. The clock is injected.
package follow

import (
	"cmp"
	"context"
	"sort"
	"sync"
	"time"

	"github.com/jobtriage/jobtriage/triage"
)

// State is where a followed job is.
type State int

const (
	Waiting     State = iota // on its queue (available or delayed)
	Running                  // reserved by a worker
	Done                     // left its queue, and not into failed_jobs
	FailedAgain              // its payload uuid is back in failed_jobs
)

func (s State) String() string {
	switch s {
	case Running:
		return "running"
	case Done:
		return "done"
	case FailedAgain:
		return "failed again"
	}
	return "waiting"
}

// Settled reports whether a job in this state is finished with.
func (s State) Settled() bool { return s == Done || s == FailedAgain }

// DefaultSettleGrace is how long a job must be gone from its queue, and not
// in failed_jobs, to count as done: a worker deletes a failing job before it
// writes the failed_jobs row (running the job's failed() hook in between).
const DefaultSettleGrace = 3 * time.Second

// Observation is one look: the jobs backends hold (the others are gone, unless
// Partial), and the uuids back in failed_jobs.
type Observation struct {
	Queued  map[string]triage.JobState
	Partial bool
	Failed  map[string]bool
}

// Change is one job moving from one state to another.
type Change struct {
	Job      triage.Pushed
	From, To State
	At       time.Time
}

// Counts are the followed jobs by state; of every job added (Pushed),
// Untracked ones had no payload uuid and cannot be followed.
type Counts struct {
	Pushed, Untracked                   int
	Waiting, Running, Done, FailedAgain int
}

func (c Counts) Settled() int { return c.Done + c.FailedAgain }

// Unsettled are the tracked jobs still waiting or running.
func (c Counts) Unsettled() int { return c.Waiting + c.Running }

type entry struct {
	job       triage.Pushed
	state     State
	goneSince time.Time // zero while seen queued
	goneLooks int       // consecutive looks that did not find it
}

// Source looks where jobs are: in their backends, or back in failed_jobs.
type Source interface {
	Look(ctx context.Context, jobs []triage.Pushed) (Observation, error)
}

// Clock is the time a follower runs by.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

// RealClock is the wall clock.
type RealClock struct{}

func (RealClock) Now() time.Time { return time.Now() }

func (RealClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// DefaultInterval is the time between two looks.
const DefaultInterval = time.Second

// Follower follows jobs as they are added, from any goroutine, until every
// one settled or the timeout after the last was added passed.
type Follower struct {
	Source   Source
	Clock    Clock
	Interval time.Duration
	// Timeout: how long jobs may stay unsettled after Close.
	Timeout time.Duration
	// OnChange, when set, is told each look's changes (on Run's goroutine).
	OnChange func([]Change, Counts)

	mu       sync.Mutex
	grace    time.Duration // how long a job must stay gone to be done
	jobs     map[string]*entry
	order    []string
	counts   Counts
	closed   bool
	deadline time.Time
	wake     chan struct{}
}

// New returns a follower; jobs gone for grace (0: DefaultSettleGrace) are done.
func New(src Source, clock Clock, grace time.Duration) *Follower {
	return &Follower{Source: src, Clock: clock, Interval: DefaultInterval, grace: cmp.Or(max(grace, 0), DefaultSettleGrace), jobs: map[string]*entry{},
		wake: make(chan struct{}, 1)}
}

// Add follows more jobs; one without a uuid, or followed, is only counted.
func (f *Follower) Add(jobs []triage.Pushed) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, j := range jobs {
		f.counts.Pushed++
		if j.UUID == "" || f.jobs[j.UUID] != nil {
			f.counts.Untracked++
			continue
		}
		f.jobs[j.UUID] = &entry{job: j}
		f.order = append(f.order, j.UUID)
		f.counts.Waiting++
	}
}

// minGoneLooks is how many consecutive looks must miss a job before it can
// be done: one miss may be a job caught between two reads.
const minGoneLooks = 2

// observe applies one look, in the order jobs were added; f.mu is held.
func (f *Follower) observe(now time.Time, o Observation) []Change {
	var out []Change
	for _, u := range f.order {
		e := f.jobs[u]
		if e.state.Settled() {
			continue
		}
		to := e.state
		switch st, queued := o.Queued[u]; {
		case o.Failed[u]:
			to = FailedAgain
		case queued:
			e.goneSince, e.goneLooks = time.Time{}, 0
			to = Waiting
			if st == triage.JobRunning {
				to = Running
			}
		case o.Partial:
			// absence proves nothing this time
		default:
			if e.goneLooks == 0 {
				e.goneSince = now
			}
			e.goneLooks++
			if e.goneLooks >= minGoneLooks && now.Sub(e.goneSince) >= f.grace {
				to = Done
			}
		}
		if to != e.state {
			out = append(out, Change{Job: e.job, From: e.state, To: to, At: now})
			*f.count(e.state)--
			*f.count(to)++
			e.state = to
		}
	}
	return out
}

// count is the count of the jobs in state s.
func (f *Follower) count(s State) *int {
	return [...]*int{Waiting: &f.counts.Waiting, Running: &f.counts.Running, Done: &f.counts.Done, FailedAgain: &f.counts.FailedAgain}[s]
}

// Close says no job will be added any more; the timeout starts now.
func (f *Follower) Close() {
	f.mu.Lock()
	f.closed = true
	f.deadline = f.Clock.Now().Add(f.Timeout)
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// Counts returns the jobs by state so far.
func (f *Follower) Counts() Counts {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts
}

// JobReport is one followed job's outcome.
type JobReport struct {
	Job   triage.Pushed
	State State
}

// Report lists every tracked job with its state, in the order added.
func (f *Follower) Report() []JobReport {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]JobReport, 0, len(f.order))
	for _, u := range f.order {
		out = append(out, JobReport{Job: f.jobs[u].job, State: f.jobs[u].state})
	}
	return out
}

// In returns the jobs in state s, in the order added.
func (f *Follower) In(s State) []triage.Pushed {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.in(func(e *entry) bool { return e.state == s })
}

func (f *Follower) in(keep func(*entry) bool) []triage.Pushed {
	var out []triage.Pushed
	for _, u := range f.order {
		if e := f.jobs[u]; keep(e) {
			out = append(out, e.job)
		}
	}
	return out
}

// Poll looks once at the unsettled jobs and applies what it saw.
func (f *Follower) Poll(ctx context.Context) ([]Change, Counts, error) {
	f.mu.Lock()
	jobs := f.in(func(e *entry) bool { return !e.state.Settled() })
	f.mu.Unlock()
	var o Observation
	if len(jobs) > 0 {
		var err error
		if o, err = f.Source.Look(ctx, jobs); err != nil {
			return nil, f.Counts(), err
		}
	}
	now := f.Clock.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.observe(now, o), f.counts, nil
}

// Outcome is how a Run ended.
type Outcome int

const (
	// Settled: every followed job is done or failed again.
	Settled Outcome = iota
	// TimedOut: the timeout passed with jobs unsettled.
	TimedOut
	// Stopped: stop said so.
	Stopped
)

// Run looks every Interval until, after Close, every job settled or the
// timeout passed, or stop returns true; or ctx ends.
func (f *Follower) Run(ctx context.Context, stop func(Counts) bool) (Outcome, error) {
	for {
		ch, c, err := f.Poll(ctx)
		if err != nil {
			return TimedOut, err
		}
		if f.OnChange != nil && len(ch) > 0 {
			f.OnChange(ch, c)
		}
		if stop != nil && stop(c) {
			return Stopped, nil
		}
		f.mu.Lock()
		closed, deadline := f.closed, f.deadline
		f.mu.Unlock()
		if closed && c.Unsettled() == 0 {
			return Settled, nil
		}
		if closed && !f.Clock.Now().Before(deadline) {
			return TimedOut, nil
		}
		wait := f.Interval
		if closed {
			wait = min(wait, max(deadline.Sub(f.Clock.Now()), 0))
		}
		select {
		case <-ctx.Done():
			return TimedOut, ctx.Err()
		case <-f.Clock.After(wait):
		case <-f.wake:
		}
	}
}

// Group is the jobs that failed again with one signature (newest message).
type Group struct {
	Signature, Class, ExceptionClass, Message string
	IDs                                       []string
}

// MaxFailureDetails bounds how many failed-again rows are read for their
// exceptions: a signature summary needs a sample, not every row.
const MaxFailureDetails = 1000

// NewFailures reads the failed_jobs rows of jobs that failed again (at most
// MaxFailureDetails), each addressed by refOf (ServiceSource.RefOf), grouped
// by signature, most frequent first, and how many were not read.
func NewFailures(ctx context.Context, store triage.Store, jobs []triage.Pushed, refOf func(uuid string) triage.Ref) ([]Group, int, error) {
	by := map[string]*Group{}
	var order []string
	read := 0
	for _, j := range jobs {
		if read == MaxFailureDetails {
			break
		}
		r, err := store.GetFailed(ctx, refOf(j.UUID))
		if err != nil {
			if ctx.Err() != nil {
				return nil, 0, ctx.Err()
			}
			continue // gone again (forgotten, retried by someone else)
		}
		read++
		fj := triage.JobFromRow(r)
		g := by[fj.Signature]
		if g == nil {
			g = &Group{Signature: fj.Signature, Class: fj.Class, ExceptionClass: fj.ExceptionClass}
			by[fj.Signature] = g
			order = append(order, fj.Signature)
		}
		g.Message = fj.ExceptionMessage
		g.IDs = append(g.IDs, fj.ID)
	}
	out := make([]Group, 0, len(order))
	for _, s := range order {
		out = append(out, *by[s])
	}
	sort.SliceStable(out, func(i, k int) bool { return len(out[i].IDs) > len(out[k].IDs) })
	return out, len(jobs) - read, nil
}
