package triage_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jobtriage/jobtriage/triage"
)

var pauseNow = time.Unix(1_800_000_000, 0)

func refs(t *testing.T, args ...string) []triage.QueueRef {
	t.Helper()
	r, err := triage.ParseQueueRefs(args)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestPauseWritesArtisansKeys: the keys and value QueueManager::pause and
// pauseAll write, forever unless timed.
func TestPauseWritesArtisansKeys(t *testing.T) {
	cs := &memCache{Prefix: "harness13-cache-"}
	ctx := context.Background()
	res, err := triage.Pause(ctx, cs, triage.PauseParams{Queues: refs(t, "database:emails"), All: true, Now: pauseNow})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]cacheEntry{
		"illuminate:queue:paused:database:emails": {Value: "b:1;"},
		"illuminate:queues:paused":                {Value: "b:1;"},
	}
	if diff := cmp.Diff(want, cs.Entries()); diff != "" {
		t.Errorf("stored (-want +got):\n%s", diff)
	}
	wantChanges := []triage.PauseChange{
		{Queue: "*", Key: "illuminate:queues:paused", StoredKey: "harness13-cache-illuminate:queues:paused"},
		{Queue: "database:emails", Key: "illuminate:queue:paused:database:emails", StoredKey: "harness13-cache-illuminate:queue:paused:database:emails"},
	}
	if diff := cmp.Diff(wantChanges, res.Changes); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if !res.Until.IsZero() || res.DryRun {
		t.Errorf("until %v dry %v", res.Until, res.DryRun)
	}
	// Pausing again reports the queue was already paused.
	res, err = triage.Pause(ctx, cs, triage.PauseParams{Queues: refs(t, "database:emails"), Now: pauseNow})
	if err != nil || !res.Changes[0].WasPaused {
		t.Errorf("second pause: %+v, %v", res, err)
	}
}

func TestPauseForExpires(t *testing.T) {
	cs := &memCache{}
	ctx := context.Background()
	q := refs(t, "redis:default")
	res, err := triage.Pause(ctx, cs, triage.PauseParams{Queues: q, For: 10 * time.Minute, Now: pauseNow})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Until.Equal(pauseNow.Add(10 * time.Minute)) {
		t.Errorf("until %v", res.Until)
	}
	for _, tc := range []struct {
		at     time.Time
		paused bool
	}{{pauseNow, true}, {pauseNow.Add(10*time.Minute - time.Second), true}, {pauseNow.Add(10 * time.Minute), false}} {
		st, err := triage.PauseStates(ctx, cs, q, tc.at)
		if err != nil {
			t.Fatal(err)
		}
		if st[q[0]].Paused != tc.paused {
			t.Errorf("at %v: paused %v, want %v", tc.at.Sub(pauseNow), st[q[0]].Paused, tc.paused)
		}
	}
	if _, err := triage.Pause(ctx, cs, triage.PauseParams{Queues: q, For: -time.Second, Now: pauseNow}); !errors.Is(err, triage.ErrInvalidInput) {
		t.Errorf("negative duration: %v", err)
	}
}

// TestResumeAllLeavesQueuePauses: resumeAll forgets only the global key.
func TestResumeAllLeavesQueuePauses(t *testing.T) {
	cs := &memCache{}
	ctx := context.Background()
	q := refs(t, "database:emails", "database:default")
	if _, err := triage.Pause(ctx, cs, triage.PauseParams{Queues: q[:1], All: true, Now: pauseNow}); err != nil {
		t.Fatal(err)
	}
	st, _ := triage.PauseStates(ctx, cs, q, pauseNow)
	if !st[q[0]].Paused || !st[q[1]].Paused || !st[q[1]].All {
		t.Fatalf("states %+v", st)
	}
	res, err := triage.Resume(ctx, cs, triage.PauseParams{All: true, Now: pauseNow})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changes) != 1 || !res.Changes[0].WasPaused || res.Changes[0].Key != triage.AllQueuesPausedKey {
		t.Errorf("changes %+v", res.Changes)
	}
	st, _ = triage.PauseStates(ctx, cs, q, pauseNow)
	if !st[q[0]].Paused || st[q[1]].Paused {
		t.Errorf("after resume --all: %+v", st)
	}
	if _, err := triage.Resume(ctx, cs, triage.PauseParams{Queues: q[:1], Now: pauseNow}); err != nil {
		t.Fatal(err)
	}
	if n := len(cs.Entries()); n != 0 {
		t.Errorf("%d keys left", n)
	}
}

func TestPauseDryRunWritesNothing(t *testing.T) {
	cs := &memCache{}
	res, err := triage.Pause(context.Background(), cs, triage.PauseParams{Queues: refs(t, "database:emails"), DryRun: true, Now: pauseNow})
	if err != nil || !res.DryRun || len(res.Changes) != 1 {
		t.Fatalf("%+v, %v", res, err)
	}
	if n := len(cs.Entries()); n != 0 {
		t.Errorf("dry run stored %d keys", n)
	}
}

func TestPauseRefusesQueuesWithoutConnection(t *testing.T) {
	cs := &memCache{}
	_, err := triage.Pause(context.Background(), cs, triage.PauseParams{Queues: refs(t, "emails"), Now: pauseNow})
	if !errors.Is(err, triage.ErrInvalidInput) || !strings.Contains(err.Error(), "CONNECTION:QUEUE") {
		t.Errorf("error %v", err)
	}
	if _, err := triage.Resume(context.Background(), cs, triage.PauseParams{Now: pauseNow}); !errors.Is(err, triage.ErrInvalidInput) {
		t.Errorf("nothing named: %v", err)
	}
	if n := len(cs.Entries()); n != 0 {
		t.Errorf("stored %d keys", n)
	}
}

// TestPauseStatesOnlyTrueValues: a value PHP reads as false pauses nothing.
func TestPauseStatesOnlyTrueValues(t *testing.T) {
	cs := &memCache{}
	ctx := context.Background()
	q := refs(t, "database:emails")
	if err := cs.Put(ctx, triage.PausedQueueKey(q[0]), "b:0;", 0, pauseNow); err != nil {
		t.Fatal(err)
	}
	st, err := triage.PauseStates(ctx, cs, q, pauseNow)
	if err != nil || st[q[0]].Paused {
		t.Errorf("b:0; reads as paused: %+v %v", st, err)
	}
}

// TestMonitorMarksPausedQueues: a paused queue is reported paused, on the
// default connection when named without one; an unreadable store is a
// note, not a failed check.
func TestMonitorMarksPausedQueues(t *testing.T) {
	s := seeded(t)
	ctx := context.Background()
	cs := &memCache{}
	if _, err := triage.Pause(ctx, cs, triage.PauseParams{Queues: refs(t, "database:default"), Now: sec(165)}); err != nil {
		t.Fatal(err)
	}
	p := triage.MonitorParams{Now: sec(165), RetryAfter: 90 * time.Second, Window: time.Minute, Pauses: cs, DefaultConnection: "database"}
	rep, err := triage.Monitor(ctx, s, p)
	if err != nil {
		t.Fatal(err)
	}
	paused := map[string]bool{}
	for _, q := range rep.Queues {
		paused[q.Queue] = q.Paused
	}
	if want := map[string]bool{"default": true, "emails": false, "reports": false}; !cmp.Equal(want, paused) {
		t.Errorf("paused %v, want %v", paused, want)
	}
	cs.Err = errors.New("no such table: cache")
	rep, err = triage.Monitor(ctx, s, p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rep.PauseError, "no such table: cache") || rep.Queues[0].Paused {
		t.Errorf("pause error %q, first queue paused %v", rep.PauseError, rep.Queues[0].Paused)
	}
}

// TestCheckSkipsPausedBacklog: a paused queue's size and age are held on
// purpose, so they breach nothing; the window's failures still do.
func TestCheckSkipsPausedBacklog(t *testing.T) {
	rep := triage.Report{Window: time.Minute, Failed: 3, Queues: []triage.QueueHealth{
		{Connection: "database", Queue: "emails", Size: 500, OldestPendingAt: pauseNow, OldestPendingAge: time.Hour, Paused: true},
		{Connection: "database", Queue: "default", Size: 500},
	}}
	var got []string
	for _, b := range rep.Check(triage.Thresholds{MaxSize: 100, MaxAge: time.Minute, MaxFailed: 3}) {
		got = append(got, b.String())
	}
	want := []string{"queue database:default: size 500 ≥ 100", "all monitored queues: failed 3 ≥ 3 in 1m0s"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("breaches (-want +got):\n%s", diff)
	}
}
