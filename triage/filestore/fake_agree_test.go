package filestore_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/triagetest"
)

// TestFileAgreesWithFake: the file store and triagetest's fake, holding the
// same jobs (the fake checked against sqlstore on SQLite row for row), give
// the same reads for every filter, keyset and lookup whose meaning no
// dialect changes: both read through one in-memory core, and this holds
// them to it from outside.
func TestFileAgreesWithFake(t *testing.T) {
	var rows []triagetest.Row
	for i := range 23 {
		class := []string{`App\Jobs\SendMail`, `App\Jobs\ProcessPodcast`, `App\Jobs\ImportFeed`}[i%3]
		exc := fmt.Sprintf("RuntimeException: Mail %d DOWN in /app/X.php:1\nStack trace:\n#0 {main}", i%4)
		if i%5 == 0 {
			exc = "PDOException: gone\n#0 {main}\n\nNext Illuminate\\Database\\QueryException: Timeout\n#0 {main}"
		}
		rows = append(rows, triagetest.Row{UUID: uuidOf(i % 20), Connection: []string{"database", "redis"}[i%2],
			Queue: []string{"default", "emails", "high"}[i%3], Payload: payloadFor(class, uuidOf(i%20)), Exception: exc,
			FailedAt: time.Date(2026, 11, 30, 10, i/2, 0, 0, time.UTC).Format(time.DateTime)})
	}
	fake := triagetest.New(triage.IDModeUUID, time.UTC)
	fake.Add(rows...)
	var entries []fileEntry
	for i := len(rows) - 1; i >= 0; i-- {
		r := rows[i]
		entries = append(entries, fileEntry{ID: sp(r.UUID), Connection: sp(r.Connection), Queue: sp(r.Queue),
			Payload: sp(r.Payload), Exception: sp(r.Exception), FailedAt: sp(r.FailedAt)})
	}
	file := open(t, phpFile(entries), time.UTC)
	ctx := context.Background()
	for _, f := range []triage.Filter{
		{}, {Queues: []string{"emails", "high"}}, {Connections: []string{"redis"}}, {Search: "mail 2 down"},
		{Search: "PROCESSPODCAST"}, {PayloadContains: []string{"ImportFeed", "uuid"}},
		{Since: time.Date(2026, 11, 30, 10, 3, 0, 0, time.UTC), Until: time.Date(2026, 11, 30, 10, 7, 0, 0, time.UTC)},
		{MinID: 4, MaxID: 9, Queues: []string{"default"}},
	} {
		for _, p := range []triage.ScanParams{
			{Filter: f}, {Filter: f, Full: true}, {Filter: f, Ascending: true, Limit: 4}, {Filter: f, BeforeID: 12, Limit: 5},
			{Filter: f, AfterID: 7, Ascending: true, Full: true}, {Filter: f, BeforeID: -3}, {Filter: f, Ascending: true, AfterID: triage.FirstAfterID},
		} {
			if got, want := collect(t, file, p), collect(t, fake, p); !reflect.DeepEqual(got, want) {
				t.Errorf("ScanFailed(%+v):\nfile %v\nfake %v", p, got, want)
			}
		}
		got, err1 := file.Count(ctx, f)
		want, err2 := fake.Count(ctx, f)
		if got != want || err1 != nil || err2 != nil {
			t.Errorf("Count(%+v): file %d %v, fake %d %v", f, got, err1, want, err2)
		}
	}
	refs := []triage.Ref{{ID: 3}, {ID: 99}, {ID: -1}, {UUID: uuidOf(5)}, {UUID: uuidOf(2)}, {UUID: "nope"}}
	gotR, err1 := file.ResolveRefs(ctx, refs)
	wantR, err2 := fake.ResolveRefs(ctx, refs)
	if !reflect.DeepEqual(gotR, wantR) || err1 != nil || err2 != nil {
		t.Errorf("ResolveRefs: file %v %v, fake %v %v", gotR, err1, wantR, err2)
	}
	for _, ref := range append(refs, triage.Ref{}) {
		g, err1 := file.GetFailed(ctx, ref)
		w, err2 := fake.GetFailed(ctx, ref)
		if !reflect.DeepEqual(g, w) || (err1 == nil) != (err2 == nil) {
			t.Errorf("GetFailed(%v): file %+v %v, fake %+v %v", ref, g, err1, w, err2)
		}
	}
}
