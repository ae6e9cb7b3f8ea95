package triage_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

func identity(s string) string { return s }

func job(row int64, sig string, at time.Time) triage.Job {
	return triage.Job{RowID: row, ID: "id-" + sig + "-" + time.Duration(row).String(), Signature: sig, Class: "C" + sig,
		ExceptionClass: "E", ExceptionMessage: "m" + time.Duration(row).String(), FailedAt: at, Queue: "q", Connection: "database"}
}

// TestGrouperTrendWindows pins the window boundaries: the last window is
// [now − window, now] plus anything ahead of now, the previous one
// [now − 2·window, now − window), older failures count but trend nowhere.
func TestGrouperTrendWindows(t *testing.T) {
	now := fixedNow()
	w := time.Hour
	g, err := triage.NewGrouper(triage.GroupOptions{Now: now, Window: w})
	if err != nil {
		t.Fatal(err)
	}
	at := []struct {
		t      time.Time
		bucket int // -1: in no window
	}{
		{now.Add(-2*w - time.Second), -1},
		{now.Add(-2 * w), 0},
		{now.Add(-2*w + 15*time.Minute - time.Nanosecond), 0},
		{now.Add(-2*w + 15*time.Minute), 1},
		{now.Add(-w - time.Nanosecond), 3},
		{now.Add(-w), 4},
		{now.Add(-time.Minute), 7},
		{now, 7},
		{now.Add(5 * time.Second), 7}, // a worker clock ahead of ours
		{time.Time{}, -1},             // failed_at unreadable
	}
	want := make([]int, triage.SparkBuckets)
	for i, a := range at {
		g.Add(job(int64(i+1), "s", a.t), identity)
		if a.bucket >= 0 {
			want[a.bucket]++
		}
	}
	sigs := g.Signatures(triage.SortCount, false)
	if len(sigs) != 1 {
		t.Fatalf("%d signatures", len(sigs))
	}
	s := sigs[0]
	if diff := cmp.Diff(want, s.Spark); diff != "" {
		t.Errorf("spark (-want +got):\n%s", diff)
	}
	if s.Previous != 4 || s.Recent != 4 || s.Change() != 0 || s.Count != len(at) {
		t.Errorf("previous %d recent %d count %d", s.Previous, s.Recent, s.Count)
	}
	if !s.FirstSeen.Equal(now.Add(-2*w-time.Second)) || !s.LastSeen.Equal(now.Add(5*time.Second)) {
		t.Errorf("first %v last %v", s.FirstSeen, s.LastSeen)
	}
	if s.New {
		t.Errorf("a signature first seen two windows ago is new")
	}
}

// TestGrouperOrderIndependent: a table scan (newest first) and an index
// (any order) fold the same rows into the same signatures.
func TestGrouperOrderIndependent(t *testing.T) {
	now := fixedNow()
	rng := rand.New(rand.NewSource(1))
	var jobs []triage.Job
	for i := 1; i <= 500; i++ {
		sig := string(rune('a' + rng.Intn(7)))
		jobs = append(jobs, job(int64(i), sig, now.Add(-time.Duration(rng.Intn(4*3600))*time.Second)))
	}
	fold := func(order []triage.Job) []triage.Signature {
		g, err := triage.NewGrouper(triage.GroupOptions{Now: now, Window: 30 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range order {
			g.Add(j, identity)
		}
		return g.Signatures(triage.SortTrend, false)
	}
	newestFirst := make([]triage.Job, len(jobs))
	for i := range jobs {
		newestFirst[i] = jobs[len(jobs)-1-i]
	}
	shuffled := append([]triage.Job(nil), jobs...)
	rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	a, b := fold(newestFirst), fold(shuffled)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("order changes the result (-newest first +shuffled):\n%s", diff)
	}
	for _, s := range a {
		sum := func(xs []int) int {
			n := 0
			for _, x := range xs {
				n += x
			}
			return n
		}
		if sum(s.Spark[:triage.SparkBuckets/2]) != s.Previous || sum(s.Spark[triage.SparkBuckets/2:]) != s.Recent {
			t.Errorf("%s: spark %v does not add up to %d/%d", s.ID, s.Spark, s.Previous, s.Recent)
		}
		// The example is the newest row's.
		var newest triage.Job
		for _, j := range jobs {
			if j.Signature == s.ID && j.RowID > newest.RowID {
				newest = j
			}
		}
		if s.NewestID != newest.ID || s.Example != newest.ExceptionMessage {
			t.Errorf("%s: newest %s %q, want %s %q", s.ID, s.NewestID, s.Example, newest.ID, newest.ExceptionMessage)
		}
	}
}

func TestGrouperNewSince(t *testing.T) {
	now := fixedNow()
	deploy := now.Add(-90 * time.Minute)
	g, err := triage.NewGrouper(triage.GroupOptions{Now: now, Window: time.Hour, NewSince: deploy})
	if err != nil {
		t.Fatal(err)
	}
	g.Add(job(1, "old", deploy.Add(-time.Second)), identity)
	g.Add(job(2, "old", now), identity)
	g.Add(job(3, "atdeploy", deploy), identity)
	g.Add(job(4, "fresh", now.Add(-time.Minute)), identity)
	g.Add(job(5, "notime", time.Time{}), identity)
	var got []string
	for _, s := range g.Signatures(triage.SortFirst, true) {
		got = append(got, s.ID)
		if !s.New {
			t.Errorf("%s listed as new but not marked", s.ID)
		}
	}
	if strings.Join(got, ",") != "fresh,atdeploy" {
		t.Errorf("new since the deploy, newest first: %v", got)
	}
	if n := len(g.Signatures(triage.SortCount, false)); n != 4 {
		t.Errorf("all: %d signatures", n)
	}
	// Without NewSince, new means first seen within the last window.
	g, _ = triage.NewGrouper(triage.GroupOptions{Now: now, Window: time.Hour})
	g.Add(job(1, "a", now.Add(-time.Hour)), identity)
	g.Add(job(2, "b", now.Add(-time.Hour-time.Second)), identity)
	for _, s := range g.Signatures(triage.SortCount, false) {
		if s.New != (s.ID == "a") {
			t.Errorf("%s: new %v", s.ID, s.New)
		}
	}
}

func TestSortSignatures(t *testing.T) {
	now := fixedNow()
	sigs := []triage.Signature{
		{ID: "big", Count: 100, Recent: 1, Previous: 10, LastSeen: now.Add(-time.Hour), FirstSeen: now.Add(-72 * time.Hour)},
		{ID: "rising", Count: 20, Recent: 15, Previous: 1, LastSeen: now.Add(-2 * time.Hour), FirstSeen: now.Add(-3 * time.Hour)},
		{ID: "latest", Count: 5, Recent: 5, Previous: 5, LastSeen: now, FirstSeen: now.Add(-48 * time.Hour)},
		{ID: "tie-b", Count: 5, Recent: 5, Previous: 5, LastSeen: now.Add(-time.Minute), FirstSeen: now.Add(-48 * time.Hour)},
		{ID: "tie-a", Count: 5, Recent: 5, Previous: 5, LastSeen: now.Add(-time.Minute), FirstSeen: now.Add(-48 * time.Hour)},
	}
	for _, c := range []struct {
		key  string
		want string
	}{
		{"count", "big,rising,latest,tie-a,tie-b"},
		{"last", "latest,tie-a,tie-b,big,rising"},
		{"first", "rising,latest,tie-a,tie-b,big"},
		{"TREND", "rising,latest,tie-a,tie-b,big"},
	} {
		k, err := triage.ParseSortKey(c.key)
		if err != nil {
			t.Fatal(err)
		}
		got := append([]triage.Signature(nil), sigs...)
		triage.SortSignatures(got, k)
		var ids []string
		for _, s := range got {
			ids = append(ids, s.ID)
		}
		if strings.Join(ids, ",") != c.want {
			t.Errorf("sort %s: %v, want %s", c.key, ids, c.want)
		}
		if k.String() != strings.ToLower(c.key) {
			t.Errorf("%v names itself %q", k, k.String())
		}
	}
	if _, err := triage.ParseSortKey("size"); !errors.Is(err, triage.ErrInvalidInput) {
		t.Errorf("bad sort key: %v", err)
	}
}

func TestGrouperRejectsWindows(t *testing.T) {
	for _, w := range []time.Duration{-time.Second, triage.MaxTrendWindow + time.Second} {
		if _, err := triage.NewGrouper(triage.GroupOptions{Now: fixedNow(), Window: w}); !errors.Is(err, triage.ErrInvalidInput) {
			t.Errorf("window %s: %v", w, err)
		}
	}
	// The defaults: a DefaultTrendWindow window, NewSince at its start.
	g, err := triage.NewGrouper(triage.GroupOptions{Now: fixedNow()})
	if err != nil {
		t.Fatal(err)
	}
	start := fixedNow().Add(-triage.DefaultTrendWindow)
	g.Add(job(1, "old", start.Add(-time.Second)), identity)
	g.Add(job(2, "new", start), identity)
	for _, s := range g.Signatures(triage.SortCount, false) {
		if s.New != (s.ID == "new") || s.Recent != map[string]int{"old": 0, "new": 1}[s.ID] {
			t.Errorf("defaults: %s is new %v, recent %d", s.ID, s.New, s.Recent)
		}
	}
}

// TestGroupTrendOverStore: the service fills the trend from its injected
// clock on every dialect, and --new-since-style filtering and sorting
// reach the snapshots as well as the result.
func TestGroupTrendOverStore(t *testing.T) {
	forEachDriver(t, func(t *testing.T, driver string) {
		ctx := context.Background()
		s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
		now := fixedNow()
		svc := &triage.Service{Store: s, Now: func() time.Time { return now }, Location: time.UTC}
		var rows []sqltest.FailedFixture
		add := func(i int, msg string, at time.Time) {
			u := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
			rows = append(rows, sqltest.FailedFixture{UUID: &u, Connection: "database", Queue: "default",
				Payload: payloadOf(u, ""), Exception: "RuntimeException: " + msg + " in /srv/app/X.php:1\nStack trace:\n#0 {main}",
				FailedAt: at.Format("2006-01-02 15:04:05")})
		}
		// "steady": 2 per window for a day; "spike": 1 before, 6 in the last
		// 30 minutes, first seen 2 hours ago.
		n := 0
		for h := 23; h >= 0; h-- {
			n++
			add(n, "steady", now.Add(-time.Duration(h)*time.Hour-10*time.Minute))
			n++
			add(n, "steady", now.Add(-time.Duration(h)*time.Hour-40*time.Minute))
		}
		n++
		add(n, "spike", now.Add(-150*time.Minute))
		for i := 0; i < 6; i++ {
			n++
			add(n, "spike", now.Add(-time.Duration(5*i+1)*time.Minute))
		}
		sqltest.InsertFailed(t, s, rows...)

		var snaps int
		var sigs []triage.Signature
		trend := triage.GroupParams{Window: time.Hour, Sort: triage.SortTrend, ProgressEvery: 5}
		for p, err := range svc.GroupSnapshots(ctx, trend) {
			if err != nil {
				t.Fatal(err)
			}
			snaps++
			for i := 1; i < len(p.Signatures); i++ {
				if p.Signatures[i].Change() > p.Signatures[i-1].Change() {
					t.Errorf("snapshot not in trend order: %+v", p.Signatures)
				}
			}
			if p.Done {
				sigs = p.Signatures
			}
		}
		if len(sigs) != 2 || snaps < 2 {
			t.Fatalf("%d signatures, %d snapshots", len(sigs), snaps)
		}
		spike, steady := sigs[0], sigs[1]
		if !strings.Contains(spike.Example, "spike") || spike.Recent != 6 || spike.Previous != 0 || spike.Count != 7 {
			t.Errorf("spike: %+v", spike)
		}
		if steady.Recent != 2 || steady.Previous != 2 || steady.Count != 48 || steady.New {
			t.Errorf("steady: %+v", steady)
		}
		// A reader that stops after the first snapshot ends the scan there.
		stopped := 0
		for p, err := range svc.GroupSnapshots(ctx, trend) {
			if err != nil || p.Done {
				t.Fatalf("the first snapshot: %+v, %v", p, err)
			}
			stopped++
			break
		}
		if stopped != 1 {
			t.Fatalf("%d snapshots read", stopped)
		}
		got, err := svc.Group(ctx, triage.GroupParams{NewSince: now.Add(-3 * time.Hour), OnlyNew: true})
		if err != nil || len(got) != 1 || got[0].ID != spike.ID || !got[0].New {
			t.Errorf("new since 3h: %+v %v", got, err)
		}
		if _, err := svc.Group(ctx, triage.GroupParams{Sort: triage.SortKey(99)}); !errors.Is(err, triage.ErrInvalidInput) {
			t.Errorf("bad sort: %v", err)
		}
		if _, err := (&triage.Service{Store: s}).Group(ctx, triage.GroupParams{}); !errors.Is(err, triage.ErrInvalidInput) {
			t.Errorf("no clock: %v", err)
		}
	})
}
