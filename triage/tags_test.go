package triage_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
	"github.com/jobtriage/jobtriage/triage/triagetest"
)

// horizonRows are failed Horizon jobs: the tags as Horizon's json_encode
// writes them (after the class keys, past a listing's class windows), a
// near miss of each kind, and a payload holding the tag's text outside its
// tags.
var horizonRows = []struct{ uuid, extra string }{
	{"00000000-0000-4000-8000-000000000001", `,"type":"job","tags":["App\\Models\\Order:1001","urgent"],"pushedAt":"1700000000.1"`},
	{"00000000-0000-4000-8000-000000000002", `,"tags":["App\\Models\\Order:10010"]`},
	{"00000000-0000-4000-8000-000000000003", `,"tags":["app\\models\\order:1001"]`},
	{"00000000-0000-4000-8000-000000000004", `,"note":"App\\Models\\Order:1001","tags":[]`},
	{"00000000-0000-4000-8000-000000000005", `,"tags":["caf\u00e9:1","a\/b",42]`},
	{"00000000-0000-4000-8000-000000000006", ``},
}

func horizonUUIDs(jobs []triage.Job) []string {
	var ids []string
	for _, j := range jobs {
		ids = append(ids, j.UUID)
	}
	slices.Sort(ids)
	return ids
}

// TestTagFilter: a tag selects the jobs whose payload carries it, exactly
// and case-sensitively, in every path a query takes (a listing page, the
// export, a grouping, retry and forget) and on every dialect, where a
// listing otherwise reads only the class windows.
func TestTagFilter(t *testing.T) {
	forEachDriver(t, func(t *testing.T, driver string) {
		ctx := context.Background()
		svc, store := newService(t, driver)
		var fx []sqltest.FailedFixture
		for _, r := range horizonRows {
			u := r.uuid
			fx = append(fx, sqltest.FailedFixture{UUID: &u, Connection: "redis", Queue: "default",
				Payload: payloadOf(u, r.extra), Exception: "RuntimeException: boom in /app/X.php:1", FailedAt: "2026-11-30 10:00:00"})
		}
		sqltest.InsertFailed(t, store, fx...)
		for _, tc := range []struct {
			tags []string
			want []int // indexes into horizonRows
		}{
			{[]string{`App\Models\Order:1001`}, []int{0}},
			{[]string{`App\Models\Order:1001`, "urgent"}, []int{0}},
			{[]string{"urgent", "nope"}, nil},
			{[]string{"café:1"}, []int{4}},
			{[]string{"a/b"}, []int{4}},
			{[]string{"42"}, []int{4}},
		} {
			var want []string
			for _, i := range tc.want {
				want = append(want, horizonRows[i].uuid)
			}
			q := triage.Query{Tags: tc.tags}
			page, err := svc.List(ctx, triage.ListParams{Query: q, Limit: 50})
			if err != nil {
				t.Fatal(err)
			}
			if got := horizonUUIDs(page.Jobs); !slices.Equal(got, want) {
				t.Errorf("List %q = %v, want %v", tc.tags, got, want)
			}
			for _, j := range page.Jobs {
				if j.Class != `App\Jobs\X` || j.ExceptionClass != "RuntimeException" {
					t.Errorf("List %q: job %+v, want the class and exception a listing shows", tc.tags, j)
				}
			}
			var each []triage.Job
			if err := svc.Each(ctx, q, false, func(j triage.Job, _ *triage.FailedRow) error {
				each = append(each, j)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if got := horizonUUIDs(each); !slices.Equal(got, want) {
				t.Errorf("Each %q = %v, want %v", tc.tags, got, want)
			}
			sigs, err := svc.Group(ctx, triage.GroupParams{Query: q})
			if err != nil {
				t.Fatal(err)
			}
			if n := countOf(sigs); n != len(want) {
				t.Errorf("Group %q counts %d jobs, want %d", tc.tags, n, len(want))
			}
			forget, err := svc.Forget(ctx, triage.ForgetParams{Query: q, DryRun: true})
			if err != nil || forget.Deleted != len(want) {
				t.Errorf("Forget %q dry run took %d, want %d: %v", tc.tags, forget.Deleted, len(want), err)
			}
			retry, err := svc.Retry(ctx, triage.RetryParams{Query: q, DryRun: true})
			if err != nil || retry.Retried+len(retry.Skipped) != len(want) {
				t.Errorf("Retry %q dry run took %d (+%d skipped), want %d: %v", tc.tags, retry.Retried, len(retry.Skipped), len(want), err)
			}
		}
	})
}

func countOf(sigs []triage.Signature) int {
	n := 0
	for _, s := range sigs {
		n += s.Count
	}
	return n
}

// emptyIndex is a signature index that holds no row: a query answered from
// it finds nothing.
type emptyIndex struct{}

func (emptyIndex) Refresh(context.Context, *time.Location) (triage.IndexView, error) {
	return emptyIndex{}, nil
}
func (emptyIndex) Each(func(triage.IndexedRow) error) error { return nil }

// TestTagFilterIsNotAnsweredFromTheIndex: the signature index keeps no
// tags, so a query with tags scans the table even where the index would
// answer the same query without them.
func TestTagFilterIsNotAnsweredFromTheIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := triagetest.New(triage.IDModeUUID, time.UTC)
	u := horizonRows[0].uuid
	store.Add(triagetest.Row{UUID: u, Connection: "redis", Queue: "default", Payload: payloadOf(u, horizonRows[0].extra),
		Exception: "RuntimeException: boom in /app/X.php:1", FailedAt: "2026-11-30 10:00:00"})
	svc := &triage.Service{Store: store, Now: fixedNow, Location: time.UTC, Index: emptyIndex{}}
	q := triage.Query{Tags: []string{"urgent"}}
	sigs, err := svc.Group(ctx, triage.GroupParams{Query: q})
	if err != nil || countOf(sigs) != 1 {
		t.Fatalf("Group by tag = %+v, %v; want the one tagged job", sigs, err)
	}
	q.Signature = sigs[0].ID
	page, err := svc.List(ctx, triage.ListParams{Query: q, Limit: 10})
	if err != nil || len(page.Jobs) != 1 {
		t.Errorf("List by signature and tag = %+v, %v; want the one tagged job", page, err)
	}
	if fmt.Sprint(horizonUUIDs(page.Jobs)) != fmt.Sprint([]string{u}) {
		t.Errorf("List by signature and tag = %v", horizonUUIDs(page.Jobs))
	}
}
