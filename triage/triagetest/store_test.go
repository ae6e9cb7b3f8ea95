package triagetest_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
	"github.com/jobtriage/jobtriage/triage/triagetest"
)

// fixtures: queues, connections, classes, mixed case, chained exceptions,
// failures a second apart and at the same second.
func fixtures(withUUID bool) []triagetest.Row {
	var rows []triagetest.Row
	classes := []string{`App\\Jobs\\SendMail`, `App\\Jobs\\ProcessPodcast`, `App\\Jobs\\ImportFeed`}
	for i := range 23 {
		uuid := ""
		if withUUID {
			uuid = fmt.Sprintf("%08d-1111-4111-8111-111111111111", i)
		}
		class := classes[i%len(classes)]
		exc := fmt.Sprintf("RuntimeException: Mail %d DOWN in /app/X.php:1\nStack trace:\n#0 {main}", i%4)
		if i%5 == 0 {
			exc = "PDOException: gone\n#0 {main}\n\nNext Illuminate\\Database\\QueryException: Timeout " + fmt.Sprint(i) + "\n#0 {main}"
		}
		rows = append(rows, triagetest.Row{UUID: uuid, Connection: []string{"database", "redis"}[i%2], Queue: []string{"default", "emails", "high"}[i%3],
			Payload:   `{"uuid":"` + uuid + `","displayName":"` + class + `","data":{"commandName":"` + class + `"}}`,
			Exception: exc, FailedAt: time.Date(2026, 11, 30, 10, i/2, 0, 0, time.UTC).Format("2006-01-02 15:04:05")})
	}
	return rows
}

// pair is the fake and sqlstore on SQLite holding the same rows.
func pair(t *testing.T, mode triage.IDMode) (*triagetest.Store, *sqlstore.Store) {
	t.Helper()
	variant := sqlstore.SchemaLaravel8
	if mode == triage.IDModeInteger {
		variant = sqlstore.SchemaLegacy
	}
	real := sqltest.OpenLaravel(t, "sqlite", variant, time.UTC)
	fake := triagetest.New(mode, time.UTC)
	rows := fixtures(mode == triage.IDModeUUID)
	var fx []sqltest.FailedFixture
	for _, r := range rows {
		u := r.UUID
		fx = append(fx, sqltest.FailedFixture{UUID: &u, Connection: r.Connection, Queue: r.Queue, Payload: r.Payload, Exception: r.Exception, FailedAt: r.FailedAt})
	}
	realIDs := sqltest.InsertFailed(t, real, fx...)
	if fakeIDs := fake.Add(rows...); !reflect.DeepEqual(fakeIDs, realIDs) {
		t.Fatalf("ids: fake %v, sqlstore %v", fakeIDs, realIDs)
	}
	return fake, real
}

type view struct {
	ID                           int64
	UUID, Connection, Queue, Exc string
	FailedAt                     string
	Payload                      string
}

func scan(t *testing.T, s triage.Store, p triage.ScanParams) []view {
	t.Helper()
	var out []view
	err := s.ScanFailed(context.Background(), p, func(r *triage.FailedRow) error {
		v := view{ID: r.ID, UUID: r.UUID, Connection: r.Connection, Queue: r.Queue, Exc: r.Exception, FailedAt: r.FailedAt.Format(time.DateTime)}
		if p.Full {
			v.Payload = string(r.Payload)
		}
		out = append(out, v)
		return nil
	})
	if err != nil {
		t.Fatalf("%T ScanFailed(%+v): %v", s, p, err)
	}
	return out
}

var filters = []triage.Filter{
	{},
	{Queues: []string{"emails", "high"}},
	{Connections: []string{"redis"}},
	{Search: "mail 2 down"}, // case-folded, in the exception
	{Search: "PROCESSPODCAST"},
	{PayloadContains: []string{"ImportFeed"}},
	{Since: time.Date(2026, 11, 30, 10, 3, 0, 0, time.UTC), Until: time.Date(2026, 11, 30, 10, 7, 0, 0, time.UTC)},
	{MinID: 4, MaxID: 9, Queues: []string{"default"}},
}

// TestFakeAgreesWithSQLite: every read and write of the fake gives what
// sqlstore gives on SQLite for the same rows and parameters.
func TestFakeAgreesWithSQLite(t *testing.T) {
	for _, mode := range []triage.IDMode{triage.IDModeUUID, triage.IDModeInteger} {
		t.Run(mode.String(), func(t *testing.T) {
			fake, real := pair(t, mode)
			ctx := context.Background()
			if fake.Schema().IDMode != real.Schema().IDMode || fake.Schema().HasJobs != real.Schema().HasJobs {
				t.Errorf("schema: fake %+v, sqlstore %+v", fake.Schema(), real.Schema())
			}
			for _, f := range filters {
				for _, p := range []triage.ScanParams{
					{Filter: f}, {Filter: f, Full: true}, {Filter: f, Ascending: true, Limit: 4},
					{Filter: f, BeforeID: 12, Limit: 5, BatchSize: 2}, {Filter: f, AfterID: 7, Ascending: true, Full: true},
					{Filter: f, BeforeID: -3}, {Filter: f, Ascending: true, AfterID: triage.FirstAfterID},
				} {
					if got, want := scan(t, fake, p), scan(t, real, p); !reflect.DeepEqual(got, want) {
						t.Errorf("ScanFailed(%+v):\nfake    %v\nsqlstore %v", p, got, want)
					}
				}
				gotN, err1 := fake.Count(ctx, f)
				wantN, err2 := real.Count(ctx, f)
				if gotN != wantN || err1 != nil || err2 != nil {
					t.Errorf("Count(%+v): fake %d %v, sqlstore %d %v", f, gotN, err1, wantN, err2)
				}
			}
			refs := []triage.Ref{{ID: 3}, {ID: 99}, {UUID: "00000005-1111-4111-8111-111111111111"}, {UUID: "nope"}}
			gotR, err1 := fake.ResolveRefs(ctx, refs)
			wantR, err2 := real.ResolveRefs(ctx, refs)
			if !reflect.DeepEqual(gotR, wantR) || err1 != nil || err2 != nil {
				t.Errorf("ResolveRefs: fake %v %v, sqlstore %v %v", gotR, err1, wantR, err2)
			}
			for _, ref := range refs {
				g, err1 := fake.GetFailed(ctx, ref)
				w, err2 := real.GetFailed(ctx, ref)
				if errors.Is(err1, triage.ErrNotFound) != errors.Is(err2, triage.ErrNotFound) || (err1 == nil) != (err2 == nil) {
					t.Errorf("GetFailed(%v): fake %v, sqlstore %v", ref, err1, err2)
					continue
				}
				if err1 == nil && (g.ID != w.ID || g.UUID != w.UUID || string(g.Payload) != string(w.Payload) || g.Exception != w.Exception || !g.FailedAt.Equal(w.FailedAt)) {
					t.Errorf("GetFailed(%v): fake %+v, sqlstore %+v", ref, g, w)
				}
			}

			// Writes: the same batches leave the same rows.
			now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
			odd := func(r *triage.FailedRow) (triage.Move, bool) {
				return triage.Move{UUID: r.UUID, Queue: r.Queue, Payload: r.Payload, Local: true}, r.ID%2 == 1
			}
			for _, p := range []triage.BatchParams{
				{Filter: triage.Filter{Queues: []string{"emails"}}, Limit: 3, Now: now, DryRun: true},
				{Filter: triage.Filter{Queues: []string{"emails"}}, Limit: 3, Now: now},
				{IDs: []int64{1, 2, 3, 21}, Limit: 10, Now: now, NeedException: true},
				{AfterID: 10, Limit: 4, Now: now},
			} {
				g, err1 := triagetest.MoveBatch(ctx, fake, p, odd, nil)
				w, err2 := triagetest.MoveBatch(ctx, real, p, odd, nil)
				if !reflect.DeepEqual(g, w) || err1 != nil || err2 != nil {
					t.Errorf("MoveBatch(%+v): fake %+v %v, sqlstore %+v %v", p, g, err1, w, err2)
				}
			}
			if got := len(fake.Jobs()); got == 0 {
				t.Error("no local move reached the fake's jobs")
			}
			even := func(r *triage.FailedRow) bool { return r.ID%2 == 0 }
			for _, p := range []triage.BatchParams{
				{Filter: triage.Filter{Connections: []string{"database"}}, Limit: 5, DryRun: true},
				{Filter: triage.Filter{Connections: []string{"database"}}, Limit: 5},
			} {
				var gotArch, wantArch rawSink
				g, err1 := triagetest.DeleteBatch(ctx, fake, p, even, &gotArch)
				w, err2 := triagetest.DeleteBatch(ctx, real, p, even, &wantArch)
				if !reflect.DeepEqual(g, w) || err1 != nil || err2 != nil {
					t.Errorf("DeleteBatch(%+v): fake %+v %v, sqlstore %+v %v", p, g, err1, w, err2)
				}
				if !reflect.DeepEqual(gotArch, wantArch) {
					t.Errorf("DeleteBatch archived: fake %v, sqlstore %v", gotArch, wantArch)
				}
			}
			for _, p := range []triage.PruneParams{
				{Before: time.Date(2026, 11, 30, 10, 4, 0, 0, time.UTC), DryRun: true},
				{Before: time.Date(2026, 11, 30, 10, 4, 0, 0, time.UTC), Inclusive: true, DryRun: true},
				{Before: time.Date(2026, 11, 30, 10, 4, 0, 0, time.UTC), Inclusive: true},
			} {
				g, err1 := triage.PruneTotal(fake.Prune(ctx, p))
				w, err2 := triage.PruneTotal(real.Prune(ctx, p))
				if g != w || err1 != nil || err2 != nil {
					t.Errorf("Prune(%+v): fake %d %v, sqlstore %d %v", p, g, err1, w, err2)
				}
			}
			if got, want := scan(t, fake, triage.ScanParams{Full: true}), scan(t, real, triage.ScanParams{Full: true}); !reflect.DeepEqual(got, want) {
				t.Errorf("after the writes:\nfake    %v\nsqlstore %v", got, want)
			}
			all := triage.PruneParams{All: true, BatchSize: 3}
			g, err1 := triage.PruneTotal(fake.Prune(ctx, all))
			w, err2 := triage.PruneTotal(real.Prune(ctx, all))
			if g != w || g == 0 || err1 != nil || err2 != nil || fake.Len() != 0 {
				t.Errorf("Prune(All): fake %d %v, sqlstore %d %v", g, err1, w, err2)
			}
		})
	}
}

// rawSink is an archive that keeps what it is handed.
type rawSink []triage.RawRow

func (s *rawSink) Write(rows []triage.RawRow) error { *s = append(*s, rows...); return nil }

// TestFakePushFailureKeepsRows: a push that fails leaves every row of the
// batch in failed_jobs, as sqlstore's transaction does.
func TestFakePushFailureKeepsRows(t *testing.T) {
	fake := triagetest.New(triage.IDModeUUID, nil)
	fake.Add(fixtures(true)[:3]...)
	pushErr := errors.New("redis down")
	var queued []triage.Move
	push := func(ctx context.Context, ms []triage.Move) error {
		if pushErr != nil {
			return pushErr
		}
		queued = append(queued, ms...)
		return nil
	}
	_, err := triagetest.MoveBatch(context.Background(), fake, triage.BatchParams{Limit: 10}, func(r *triage.FailedRow) (triage.Move, bool) {
		return triage.Move{UUID: r.UUID, Queue: r.Queue, Payload: r.Payload}, true
	}, push)
	if err == nil || fake.Len() != 3 || len(queued) != 0 {
		t.Fatalf("err %v, %d rows left, %d queued", err, fake.Len(), len(queued))
	}
	pushErr = nil
	res, err := triagetest.MoveBatch(context.Background(), fake, triage.BatchParams{Limit: 10}, func(r *triage.FailedRow) (triage.Move, bool) {
		return triage.Move{UUID: r.UUID, Queue: r.Queue, Payload: r.Payload}, true
	}, push)
	if err != nil || len(res.Done) != 3 || fake.Len() != 0 || len(queued) != 3 || len(fake.Jobs()) != 0 {
		t.Fatalf("second run: %+v %v; %d left, %d queued, %d local", res, err, fake.Len(), len(queued), len(fake.Jobs()))
	}
	if err := fake.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := fake.Count(context.Background(), triage.Filter{}); !errors.Is(err, triage.ErrUnreachable) {
		t.Errorf("a closed store: %v", err)
	}
}
