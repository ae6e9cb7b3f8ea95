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
	refs := []triage.Ref{{ID: 3}, {ID: 99}, {ID: -1}, {UUID: uuidOf(5)}, {UUID: uuidOf(2)}, {UUID: "nope"}, {}}
	// reads is every answer of s, each with what it answered.
	reads := func(s triage.Store) (out [][2]any) {
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
				out = append(out, [2]any{p, collect(t, s, p)})
			}
			n, err := s.Count(ctx, f)
			out = append(out, [2]any{f, [2]any{n, err}})
		}
		m, err := s.ResolveRefs(ctx, refs)
		out = append(out, [2]any{refs, [2]any{m, err}})
		for _, ref := range refs {
			r, err := s.GetFailed(ctx, ref)
			out = append(out, [2]any{ref, [2]any{r, err == nil}})
		}
		return out
	}
	got, want := reads(file), reads(fake)
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("%+v:\nfile %+v\nfake %+v", want[i][0], got[i][1], want[i][1])
		}
	}
}
