package cmd

import (
	"context"
	"fmt"
	"io"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/follow"
	"github.com/jobtriage/jobtriage/triage/sanitize"
)

// followReport is what a followed (or canaried, or paced) retry found.
type followReport struct {
	// Followed: --follow, every pushed job was followed; else only the
	// canaries (or nothing, for --rate alone).
	Followed  bool
	Counts    follow.Counts
	Jobs      []follow.JobReport
	Groups    []follow.Group
	Unread    int // failed-again rows not read for their exception
	TimedOut  bool
	Breaker   bool // --stop-after-failures tripped
	StopAfter int
	NotPushed int
	Canary    *canaryDoc
	// Plan is set in a dry run instead of everything above.
	Plan *planDoc
}

// dryRunPlan is the plan a dry run shows, nil without follow-through flags.
func dryRunPlan(opts *RetryOptions, selected int) *followReport {
	if !opts.followed() {
		return nil
	}
	pl := &planDoc{Follow: opts.Follow, Rate: opts.rate, Success: opts.canaryShare, Rest: selected}
	if opts.Canary > 0 {
		pl.Canaries = min(opts.Canary, selected)
		pl.Rest -= pl.Canaries
		pl.Needed = follow.Canary{Success: opts.canaryShare}.Needed(pl.Canaries)
	}
	return &followReport{Plan: pl}
}

// retryFollowed runs a retry with its follow-through: the canaries first
// (followed until the decision), then the rest, paced and followed, with
// the breaker. total is the dry run's count of the selection.
func retryFollowed(ctx context.Context, opts *RetryOptions, svc *triage.Service, p triage.RetryParams, d retryDriver, total int) (triage.RetryResult, *followReport, error) {
	clock := opts.followClock
	if clock == nil {
		clock = follow.RealClock{}
	}
	// Made before the first push: on a table without a uuid column it
	// notes where the rows of jobs failing again will start.
	src, err := follow.NewServiceSource(ctx, svc)
	if err != nil {
		return triage.RetryResult{}, nil, err
	}
	fl := follow.New(src, clock, opts.followGrace)
	if opts.followInterval > 0 {
		fl.Interval = opts.followInterval
	}
	fl.Timeout = opts.FollowTimeout
	pr := &followPrinter{io: opts.IO, clock: clock, start: clock.Now(), total: total, rate: opts.rate, fl: fl,
		following: opts.Follow || opts.Canary > 0}
	fl.OnChange = pr.changes
	defer pr.done()
	fr := &followReport{Followed: opts.Follow, StopAfter: opts.StopAfterFailures}
	if opts.rate > 0 {
		pacer := follow.NewPacer(opts.rate, clock)
		p.BatchSize = follow.BatchFor(opts.rate)
		d.pace = pacer.Wait
	}
	var res triage.RetryResult
	base := 0
	if opts.Canary > 0 {
		cp := p
		cp.Limit = opts.Canary
		if p.Limit > 0 {
			cp.Limit = min(p.Limit, opts.Canary)
		}
		var canaries []triage.Pushed
		cd := d
		cd.pushed = func(j []triage.Pushed) {
			fl.Add(j)
			canaries = append(canaries, j...)
		}
		cd.progress = pr.pushed
		var err error
		if res, err = cd.run(ctx, svc, cp); err != nil {
			return res, fr, err
		}
		can := follow.Canary{Success: opts.canaryShare}
		deadline := clock.Now().Add(opts.FollowTimeout)
		final := false
		// Every canary settles (or the timeout passes) before the decision,
		// even one already sure: the report shows all their new exceptions.
		if _, err := fl.Run(ctx, func(c follow.Counts) bool {
			if c.Unsettled() == 0 {
				return true
			}
			final = !clock.Now().Before(deadline)
			return final
		}); err != nil {
			return res, fr, err
		}
		c := fl.Counts()
		size := c.Pushed - c.Untracked
		fr.Canary = &canaryDoc{Size: size, Needed: can.Needed(size), Done: c.Done, FailedAgain: c.FailedAgain,
			Unsettled: c.Unsettled(), Success: opts.canaryShare, Decision: can.Decide(c, final).String()}
		if fr.Canary.stopped() {
			fr.TimedOut = final && c.Unsettled() > 0
			fr.NotPushed = max(total-res.Retried, 0)
			return res, fr, fr.finish(ctx, svc, fl, src)
		}
		p.Exclude = map[string]bool{}
		for _, j := range canaries {
			p.Exclude[j.UUID] = true
		}
		if p.Limit > 0 {
			if p.Limit -= res.Retried; p.Limit <= 0 {
				return res, fr, fr.finish(ctx, svc, fl, src)
			}
		}
		base = res.Retried
	}
	type ran struct {
		out follow.Outcome
		err error
	}
	var done chan ran
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if opts.Follow {
		d.pushed = fl.Add
		breaker := follow.Breaker{Limit: opts.StopAfterFailures}
		d.stop = func() bool {
			fr.Breaker = fr.Breaker || breaker.Tripped(fl.Counts())
			return fr.Breaker
		}
		done = make(chan ran, 1)
		go func() {
			out, err := fl.Run(fctx, nil)
			done <- ran{out, err}
		}()
	}
	d.progress = func(n int) { pr.pushed(base + n) }
	rest, err := d.run(ctx, svc, p)
	res = mergeRetry(res, rest, opts.Canary > 0)
	if done != nil {
		if err != nil {
			cancel()
		}
		fl.Close()
		r := <-done
		fr.TimedOut = r.out == follow.TimedOut && r.err == nil
		if err == nil {
			err = r.err
		}
	}
	if fr.Breaker {
		fr.NotPushed = max(total-res.Retried, 0)
	}
	if err != nil {
		return res, fr, err
	}
	return res, fr, fr.finish(ctx, svc, fl, src)
}

// mergeRetry adds the run of the rest to the canaries' run. With canaries,
// the ids the rest "did not find" are the canaries that left failed_jobs:
// the canary run's not-found list is the one that counts.
func mergeRetry(a, b triage.RetryResult, canaried bool) triage.RetryResult {
	if !canaried {
		return b
	}
	out := a
	out.Retried += b.Retried
	out.IDs = append(append([]string{}, a.IDs...), b.IDs...)
	out.Skipped = append(append([]triage.Skip{}, a.Skipped...), b.Skipped...)
	out.ByQueue, out.ByClass = maps.Clone(a.ByQueue), maps.Clone(a.ByClass)
	for k, v := range b.ByQueue {
		out.ByQueue[k] += v
	}
	for k, v := range b.ByClass {
		out.ByClass[k] += v
	}
	return out
}

// finish records the final states and groups the new failures.
func (fr *followReport) finish(ctx context.Context, svc *triage.Service, fl *follow.Follower, src *follow.ServiceSource) error {
	fr.Counts = fl.Counts()
	fr.Jobs = fl.Report()
	var err error
	fr.Groups, fr.Unread, err = follow.NewFailures(ctx, svc.Store, fl.In(follow.FailedAgain), src.RefOf)
	// Grouped by the rows as stored (the ids failed --group shows); the
	// example message is shown masked under --redact.
	for i := range fr.Groups {
		fr.Groups[i].Message = svc.RedactText(fr.Groups[i].Message)
	}
	return err
}

// exitCode is the follow-through's verdict, when it has one: a canary
// stop or a job that failed again is ExitFailedAgain (it wins over a
// timeout), jobs left unsettled ExitFollowTimeout.
func (fr *followReport) exitCode() (ExitCode, bool) {
	switch {
	case fr == nil || fr.Plan != nil:
		return ExitOK, false
	case fr.Counts.FailedAgain > 0, fr.Canary.stopped() && !fr.TimedOut:
		return ExitFailedAgain, true
	case fr.TimedOut || fr.Counts.Unsettled() > 0:
		return ExitFollowTimeout, true
	}
	return ExitOK, false
}

// print writes the follow-through summary (text) to w.
func (fr *followReport) print(w io.Writer) {
	if fr == nil {
		return
	}
	if pl := fr.Plan; pl != nil {
		var parts []string
		if pl.Canaries > 0 {
			parts = append(parts, fmt.Sprintf("Plan: retry the %s oldest as canaries and follow them; retry the other %s only if at least %d of them (%g%%) succeed",
				humanize.Comma(int64(pl.Canaries)), countNoun(pl.Rest, "job"), pl.Needed, pl.Success*100))
		} else {
			parts = append(parts, "Plan: retry "+countNoun(pl.Rest, "job"))
		}
		if pl.Follow {
			parts = append(parts, "follow every job until it ran or failed again")
		}
		if pl.Rate > 0 {
			parts = append(parts, fmt.Sprintf("push at most %g/s", pl.Rate))
		}
		fmt.Fprintln(w, strings.Join(parts, "; ")+".")
		return
	}
	c := fr.Counts
	if cr := fr.Canary; cr != nil {
		verdict := "retrying the rest"
		if cr.stopped() {
			verdict = fmt.Sprintf("stopped; the other %s were not retried and stay in failed_jobs", countNoun(fr.NotPushed, "job"))
		}
		fmt.Fprintf(w, "Canaries: %d of %d done, %d failed again, %d unsettled (%d needed to succeed): %s.\n",
			cr.Done, cr.Size, cr.FailedAgain, cr.Unsettled, cr.Needed, verdict)
	}
	if fr.Followed || fr.Canary != nil {
		what := "jobs"
		if !fr.Followed {
			what = "canaries"
		}
		fmt.Fprintf(w, "Followed %s %s: %s done, %s failed again, %s unsettled (%s waiting, %s running).\n",
			humanize.Comma(int64(c.Pushed-c.Untracked)), what, humanize.Comma(int64(c.Done)), humanize.Comma(int64(c.FailedAgain)),
			humanize.Comma(int64(c.Unsettled())), humanize.Comma(int64(c.Waiting)), humanize.Comma(int64(c.Running)))
	}
	if c.Untracked > 0 {
		fmt.Fprintf(w, "%s had no payload uuid and could not be followed.\n", countNoun(c.Untracked, "job"))
	}
	if fr.Breaker {
		fmt.Fprintf(w, "Stopped pushing after %d jobs failed again (--stop-after-failures %d); %s not pushed and stay in failed_jobs.\n",
			c.FailedAgain, fr.StopAfter, countNoun(fr.NotPushed, "job"))
	}
	if fr.TimedOut {
		fmt.Fprintf(w, "The follow timeout passed with %s unsettled.\n", countNoun(c.Unsettled(), "job"))
	}
	if len(fr.Groups) > 0 {
		fmt.Fprintln(w, "New failures by signature:")
		for _, g := range fr.Groups {
			fmt.Fprintf(w, "  %s  %s  %s  %s: %s\n", humanize.Comma(int64(len(g.IDs))), g.Signature, sanitize.Line(g.Class),
				sanitize.Line(g.ExceptionClass), sanitize.Line(g.Message))
			ids := g.IDs[:min(len(g.IDs), skipExamples)]
			more := ""
			if len(g.IDs) > len(ids) {
				more = fmt.Sprintf(" and %d more (--json lists all)", len(g.IDs)-len(ids))
			}
			fmt.Fprintf(w, "     %s%s\n", sanitize.Line(strings.Join(ids, ", ")), more)
		}
		if fr.Unread > 0 {
			fmt.Fprintf(w, "  (%s not read for their exception)\n", countNoun(fr.Unread, "failure"))
		}
	}
}

// followPrinter shows the follow-through as it goes, on stderr: one status
// line redrawn on a terminal, else one line per job that changed state.
type followPrinter struct {
	mu      sync.Mutex
	io      *IOStreams
	clock   follow.Clock
	start   time.Time
	total   int
	rate    float64
	fl      *follow.Follower
	last    time.Time
	shown   bool
	pushedN int
	// following: jobs are followed (else --rate alone: pushes only).
	following bool
}

func (p *followPrinter) pushed(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pushedN = n
	p.redraw(p.fl.Counts())
}

func (p *followPrinter) changes(ch []follow.Change, c follow.Counts) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.io.IsStderrTTY() {
		for _, x := range ch {
			fmt.Fprintf(p.io.ErrOut, "%s %s: %s (%s, %s on %s)\n", x.At.Format("15:04:05"), x.To,
				sanitize.Line(x.Job.ID), sanitize.Line(x.Job.Class), sanitize.Line(x.Job.Queue), sanitize.Line(x.Job.Connection))
		}
		return
	}
	p.redraw(c)
}

// redraw draws the status line on a terminal, at most every meterInterval.
func (p *followPrinter) redraw(c follow.Counts) {
	if !p.io.IsStderrTTY() {
		return
	}
	now := p.clock.Now()
	if now.Sub(p.last) < meterInterval {
		return
	}
	p.last, p.shown = now, true
	fmt.Fprint(p.io.ErrOut, "\r\033[K"+p.line(c, now))
}

func (p *followPrinter) line(c follow.Counts, now time.Time) string {
	s := "pushed " + humanize.Comma(int64(p.pushedN))
	if p.total > 0 {
		s += " of " + humanize.Comma(int64(p.total))
	}
	if p.following {
		s += fmt.Sprintf(" · running %s · settled %s · failed again %s", humanize.Comma(int64(c.Running)),
			humanize.Comma(int64(c.Settled())), humanize.Comma(int64(c.FailedAgain)))
	} else {
		// Nothing settles that is not followed: the ETA is the pushes'.
		c = follow.Counts{}
	}
	c.Pushed = max(c.Pushed, p.pushedN)
	if eta, ok := follow.ETA(c, p.total, p.rate, now.Sub(p.start)); ok && now.Sub(p.start) >= meterWarmup {
		s += " · about " + roundETA(eta) + " left"
	}
	return s
}

func (p *followPrinter) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.io.ErrOut, "\r\033[K")
	}
}

// doc is the "follow" object of retry --json (nil for a dry run's plan).
func (fr *followReport) doc() *followDoc {
	if fr == nil || fr.Plan != nil {
		return nil
	}
	c := fr.Counts
	d := &followDoc{Followed: c.Pushed - c.Untracked, Done: c.Done, FailedAgain: c.FailedAgain, Waiting: c.Waiting, Running: c.Running,
		Untracked: c.Untracked, TimedOut: fr.TimedOut, StoppedByBreaker: fr.Breaker, NotPushed: fr.NotPushed, Canary: fr.Canary,
		Jobs: make([]followJobDoc, 0, len(fr.Jobs)), NewFailures: make([]failureGroupDoc, 0, len(fr.Groups)), Unread: fr.Unread}
	for _, j := range fr.Jobs {
		d.Jobs = append(d.Jobs, followJobDoc{ID: j.Job.ID, UUID: j.Job.UUID, Connection: j.Job.Connection, Queue: j.Job.Queue,
			Class: j.Job.Class, State: strings.ReplaceAll(j.State.String(), " ", "_")})
	}
	for _, g := range fr.Groups {
		d.NewFailures = append(d.NewFailures, failureGroupDoc{Signature: g.Signature, Class: g.Class, ExceptionClass: g.ExceptionClass,
			Message: g.Message, Count: len(g.IDs), IDs: g.IDs})
	}
	return d
}
