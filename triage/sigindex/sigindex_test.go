package sigindex

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
)

// fakeSource is a failed_jobs table in memory.
type fakeSource struct {
	mu     sync.Mutex
	id     triage.TableIdentity
	rows   map[int64]*triage.FailedRow
	idErr  error
	scans  int // ScanAbove calls
	readAt []int64
}

func newFake() *fakeSource {
	return &fakeSource{id: triage.TableIdentity{Dialect: "postgres", Host: "db", Port: "5432", Database: "app",
		Schema: "public", Table: "failed_jobs", Object: "16384"}, rows: map[int64]*triage.FailedRow{}}
}

func (f *fakeSource) IndexIdentity(context.Context) (triage.TableIdentity, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.id, f.idErr
}

func (f *fakeSource) sorted() []int64 {
	ids := make([]int64, 0, len(f.rows))
	for id := range f.rows {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

func (f *fakeSource) ScanAbove(_ context.Context, after int64, fn func(*triage.FailedRow) error) error {
	f.mu.Lock()
	f.scans++
	f.readAt = append(f.readAt, after)
	var rows []*triage.FailedRow
	for _, id := range f.sorted() {
		if id > after {
			c := *f.rows[id]
			rows = append(rows, &c)
		}
	}
	f.mu.Unlock()
	for _, r := range rows {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

func (f *fakeSource) MaxFailedID(context.Context) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	top := int64(0)
	for id := range f.rows {
		top = max(top, id)
	}
	return top, nil
}

func (f *fakeSource) LiveIDs(_ context.Context, upTo int64, fn func(int64) error) error {
	f.mu.Lock()
	ids := f.sorted()
	f.mu.Unlock()
	for _, id := range ids {
		if id <= upTo {
			if err := fn(id); err != nil {
				return err
			}
		}
	}
	return nil
}

var base = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

func (f *fakeSource) add(id int64, class, msg, queue string, at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rows[id] = &triage.FailedRow{ID: id, UUID: fmt.Sprintf("u-%d", id), Connection: "database", Queue: queue,
		FailedAt: at, Payload: []byte(`{"displayName":"` + class + `"}`),
		Exception: "RuntimeException: " + msg + " in /app/x.php:1\nStack trace:\n#0 {main}"}
}

func (f *fakeSource) del(ids ...int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, id := range ids {
		delete(f.rows, id)
	}
}

// fill adds rows from..to: three classes, messages with numbers that
// normalise away, two queues, times a minute apart.
func (f *fakeSource) fill(from, to int64) {
	for id := from; id <= to; id++ {
		f.add(id, fmt.Sprintf(`App\\Jobs\\J%d`, id%3), fmt.Sprintf("order %d not found", id), []string{"default", "emails"}[id%2],
			base.Add(time.Duration(id)*time.Minute))
	}
}

// want is what the index must hold: each live row as JobFromRow sees it,
// newest first.
func (f *fakeSource) want() []triage.IndexedRow {
	f.mu.Lock()
	defer f.mu.Unlock()
	ids := f.sorted()
	out := make([]triage.IndexedRow, 0, len(ids))
	for i := len(ids) - 1; i >= 0; i-- {
		r := f.rows[ids[i]]
		j := triage.JobFromRow(r)
		out = append(out, triage.IndexedRow{RowID: r.ID, Queue: r.Queue, Connection: r.Connection, FailedAt: r.FailedAt,
			Sig: &triage.IndexedSignature{ID: j.Signature, Class: j.Class, ExceptionClass: j.ExceptionClass}})
	}
	return out
}

type notices struct {
	mu  sync.Mutex
	got []string
}

func (n *notices) add(s string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.got = append(n.got, s)
}

func (n *notices) take() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	g := n.got
	n.got = nil
	return g
}

func newIndex(t *testing.T, dir string, f *fakeSource, n *notices) *Index {
	t.Helper()
	return New(Options{Dir: dir, Source: f, Notice: n.add})
}

// check refreshes and compares the view with the source.
func check(t *testing.T, ix *Index, f *fakeSource) Stats {
	t.Helper()
	v, err := ix.refresh(context.Background(), time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	var got []triage.IndexedRow
	if err := v.Each(func(r triage.IndexedRow) error {
		r.Sig = &triage.IndexedSignature{ID: r.Sig.ID, Class: r.Sig.Class, ExceptionClass: r.Sig.ExceptionClass}
		got = append(got, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := f.want()
	if len(got) != len(want) {
		t.Fatalf("index holds %d rows, table %d", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("row %d: index %+v %+v, table %+v %+v", i, got[i], *got[i].Sig, want[i], *want[i].Sig)
		}
	}
	return v.st
}

func TestIncrementalRefresh(t *testing.T) {
	dir := t.TempDir()
	f := newFake()
	var n notices
	f.fill(1, 100)
	st := check(t, newIndex(t, dir, f, &n), f)
	if st.Added != 100 || st.Deleted != 0 || st.Rows != 100 {
		t.Errorf("cold: %+v", st)
	}
	if st.Bytes == 0 || st.Bytes > 40*100+4096 {
		t.Errorf("file of %d bytes for 100 rows", st.Bytes)
	}
	// A new process: 10 new rows, 5 deleted (a retry, a forget): four
	// indexed ones, among them the newest rows of their signatures, and a
	// new one.
	f.fill(101, 110)
	f.del(3, 50, 99, 100, 110)
	st = check(t, newIndex(t, dir, f, &n), f)
	if st.Added != 9 || st.Deleted != 4 || st.Rows != 105 {
		t.Errorf("warm: %+v", st)
	}
	if got := f.readAt[len(f.readAt)-1]; got != 100 {
		t.Errorf("the warm pass read rows above %d, want above 100", got)
	}
	// Unchanged: nothing read, nothing written.
	fi, _ := os.Stat(st.Path)
	st = check(t, newIndex(t, dir, f, &n), f)
	if st.Added != 0 || st.Deleted != 0 {
		t.Errorf("idle: %+v", st)
	}
	if fi2, _ := os.Stat(st.Path); fi2.Size() != fi.Size() {
		t.Errorf("idle refresh rewrote the file")
	}
	if got := n.take(); len(got) != 0 {
		t.Errorf("notices %q", got)
	}
}

func TestExamplesAreTheNewestRow(t *testing.T) {
	f := newFake()
	f.fill(1, 9)
	v, err := newIndex(t, t.TempDir(), f, &notices{}).refresh(context.Background(), time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range v.d.sigs {
		last := int64(0)
		for i, id := range v.d.ids {
			if v.d.sigs[v.d.sig[i]] == s {
				last = id
			}
		}
		j := triage.JobFromRow(f.rows[last])
		if s.ExampleRowID != last || s.ExampleID != j.ID || s.Example != j.ExceptionMessage || s.Message != "order <n> not found" {
			t.Errorf("signature %s: example %d %q %q %q, want row %d %q %q", s.ID, s.ExampleRowID, s.ExampleID, s.Example, s.Message, last, j.ID, j.ExceptionMessage)
		}
	}
}

func TestRecreatedTableRebuilds(t *testing.T) {
	dir := t.TempDir()
	f := newFake()
	var n notices
	f.fill(1, 20)
	check(t, newIndex(t, dir, f, &n), f)
	// Dropped and created again: same ids, other rows.
	f.rows = map[int64]*triage.FailedRow{}
	f.id.Object = "99999"
	for id := int64(1); id <= 20; id++ {
		f.add(id, `App\Jobs\Other`, "gone", "default", base)
	}
	st := check(t, newIndex(t, dir, f, &n), f)
	if got := n.take(); len(got) != 1 || !strings.Contains(got[0], "recreated") {
		t.Errorf("notices %q", got)
	}
	if st.Rebuilt == "" || st.Added != 20 {
		t.Errorf("stats %+v", st)
	}
}

func TestIDsBackwardsRebuilds(t *testing.T) {
	dir := t.TempDir()
	f := newFake()
	var n notices
	f.fill(1, 20)
	f.del(10)
	f.fill(lateIDs+100, lateIDs+100)
	check(t, newIndex(t, dir, f, &n), f)
	// The sequence was reset: an id far below the highest indexed one,
	// which the index never saw, appears.
	f.add(10, `App\Jobs\New`, "new", "default", base)
	check(t, newIndex(t, dir, f, &n), f)
	if got := n.take(); len(got) != 1 || !strings.Contains(got[0], "backwards") {
		t.Errorf("notices %q", got)
	}
}

func TestLateCommitsAreMerged(t *testing.T) {
	dir := t.TempDir()
	f := newFake()
	var n notices
	f.fill(1, 50)
	f.del(40, 45)
	check(t, newIndex(t, dir, f, &n), f)
	// 40 and 45 commit after 50 was read; 51..55 are new; 3 is deleted.
	f.fill(40, 40)
	f.fill(45, 45)
	f.fill(51, 55)
	f.del(3)
	st := check(t, newIndex(t, dir, f, &n), f)
	if st.Added != 7 || st.Deleted != 1 || st.Rebuilt != "" {
		t.Errorf("stats %+v", st)
	}
	if got := n.take(); len(got) != 0 {
		t.Errorf("notices %q", got)
	}
	if got := f.readAt[len(f.readAt)-1]; got != 39 {
		t.Errorf("read again above %d, want above 39 (the lowest late id minus one)", got)
	}
}

func TestDefinitionChangeRebuilds(t *testing.T) {
	dir := t.TempDir()
	f := newFake()
	var n notices
	f.fill(1, 5)
	st := check(t, newIndex(t, dir, f, &n), f)
	b, _ := os.ReadFile(st.Path)
	d, err := decode(b)
	if err != nil {
		t.Fatal(err)
	}
	d.definition = "signature/0"
	d.sigs[0].Class = `App\Jobs\Stale`
	if err := os.WriteFile(st.Path, d.encode(), 0o600); err != nil {
		t.Fatal(err)
	}
	st = check(t, newIndex(t, dir, f, &n), f)
	if got := n.take(); len(got) != 1 || !strings.Contains(got[0], "definition changed") {
		t.Errorf("notices %q", got)
	}
	if st.Added != 5 {
		t.Errorf("stats %+v", st)
	}
}

func TestCorruptOrDeletedFile(t *testing.T) {
	dir := t.TempDir()
	f := newFake()
	var n notices
	f.fill(1, 30)
	st := check(t, newIndex(t, dir, f, &n), f)
	b, _ := os.ReadFile(st.Path)
	for _, bad := range [][]byte{b[:len(b)/2], append(append([]byte{}, b[:40]...), append([]byte{b[40] ^ 0xff}, b[41:]...)...), nil} {
		if err := os.WriteFile(st.Path, bad, 0o600); err != nil {
			t.Fatal(err)
		}
		check(t, newIndex(t, dir, f, &n), f)
		if got := n.take(); len(got) != 1 || !strings.Contains(got[0], "unreadable") {
			t.Errorf("notices %q", got)
		}
	}
	// Deleted at any moment: rebuilt without a word.
	if err := os.Remove(st.Path); err != nil {
		t.Fatal(err)
	}
	if st := check(t, newIndex(t, dir, f, &n), f); st.Added != 30 {
		t.Errorf("stats %+v", st)
	}
	if got := n.take(); len(got) != 0 {
		t.Errorf("notices %q", got)
	}
}

func TestFileFormatRoundTrip(t *testing.T) {
	d := newData(Definition, "k", "o")
	d.scanned = 42
	d.sigs = []*triage.IndexedSignature{{ID: "0123456789", Class: "C", ExceptionClass: "E", Message: "m <n>", ExampleRowID: -3, ExampleID: "u", Example: "m 1"}}
	d.places = []place{{"default", "database", 0}, {"", "", placeNullQueue | placeNullConnection}}
	for i, id := range []int64{-7, -3, 0, 5, 42} {
		at := base.Add(time.Duration(-i) * time.Hour)
		if i == 2 {
			at = time.Time{}
		}
		if i == 3 {
			at = at.Add(123456789)
		}
		w, ns := wallOf(at)
		if ns != 0 {
			d.nanos[id] = ns
		}
		d.ids = append(d.ids, id)
		d.sig = append(d.sig, 0)
		d.place = append(d.place, uint32(i%2))
		d.wall = append(d.wall, w)
	}
	b := d.encode()
	got, err := decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, d) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, d)
	}
	if at := timeOf(got.wall[3], got.nanos[5], time.UTC); !at.Equal(base.Add(-3*time.Hour + 123456789)) {
		t.Errorf("nanoseconds lost: %v", at)
	}
	if !timeOf(got.wall[2], 0, time.UTC).IsZero() {
		t.Errorf("a zero failed_at came back as %v", timeOf(got.wall[2], 0, time.UTC))
	}
	for cut := 0; cut < len(b); cut++ {
		if _, err := decode(b[:cut]); !errors.Is(err, errCorrupt) {
			t.Fatalf("a file cut at %d bytes decoded (%v)", cut, err)
		}
	}
}

func TestBytesPerRow(t *testing.T) {
	f := newFake()
	const rows = 20000
	f.fill(1, rows)
	st := check(t, newIndex(t, t.TempDir(), f, &notices{}), f)
	if per := float64(st.Bytes) / rows; per >= 40 {
		t.Errorf("%.1f bytes per row on disk, want < 40", per)
	} else {
		t.Logf("%.2f bytes per row", per)
	}
}

func TestBoundsMakeItUnusable(t *testing.T) {
	f := newFake()
	f.fill(1, 10)
	var n notices
	ix := New(Options{Dir: t.TempDir(), Source: f, Notice: n.add, MaxRows: 5})
	if _, err := ix.Refresh(context.Background(), time.UTC); !errors.Is(err, triage.ErrIndexUnusable) {
		t.Errorf("over MaxRows: %v", err)
	}
	ix = New(Options{Dir: t.TempDir(), Source: f, Notice: n.add, MaxSignatures: 2})
	if _, err := ix.Refresh(context.Background(), time.UTC); !errors.Is(err, triage.ErrIndexUnusable) {
		t.Errorf("over MaxSignatures: %v", err)
	}
	if got := n.take(); len(got) != 2 {
		t.Errorf("notices %q", got)
	}
	f.idErr = errors.New("no identity")
	if _, err := New(Options{Dir: t.TempDir(), Source: f}).Refresh(context.Background(), time.UTC); !errors.Is(err, triage.ErrIndexUnusable) {
		t.Errorf("without identity: %v", err)
	}
}

func TestNeverSharedBetweenTables(t *testing.T) {
	dir := t.TempDir()
	a, b := newFake(), newFake()
	b.id.Database = "other"
	a.fill(1, 10)
	b.add(1, `App\Jobs\B`, "b", "default", base)
	sa := check(t, newIndex(t, dir, a, &notices{}), a)
	sb := check(t, newIndex(t, dir, b, &notices{}), b)
	if sa.Path == sb.Path {
		t.Errorf("two databases share %s", sa.Path)
	}
}

func TestTwoProcessesAtOnce(t *testing.T) {
	dir := t.TempDir()
	f := newFake()
	f.fill(1, 200)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for p := 0; p < 4; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			for k := 0; k < 5; k++ {
				from := int64(1000 + p*100 + k*10)
				f.fill(from, from+4)
				if _, err := New(Options{Dir: dir, Source: f}).refresh(context.Background(), time.UTC); err != nil {
					errs <- err
					return
				}
			}
		}(p)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var n notices
	check(t, newIndex(t, dir, f, &n), f)
	if got := n.take(); len(got) != 0 {
		t.Errorf("notices after concurrent writers: %q", got)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*.tmp*"))
	if len(left) != 0 {
		t.Errorf("temporary files left: %q", left)
	}
}

func TestPruneKeepsMaxFiles(t *testing.T) {
	dir := t.TempDir()
	for k := 0; k < 5; k++ {
		f := newFake()
		f.id.Table = fmt.Sprintf("t%d", k)
		f.fill(1, 3)
		if _, err := New(Options{Dir: dir, Source: f, MaxFiles: 3}).refresh(context.Background(), time.UTC); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(time.Duration(k-10) * time.Minute)
		files, _ := filepath.Glob(filepath.Join(dir, "*"+fileSuffix))
		for _, p := range files {
			_ = os.Chtimes(p, old, old)
			old = old.Add(-time.Second)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"+fileSuffix))
	if len(files) != 3 {
		t.Errorf("%d files kept, want 3", len(files))
	}
}

// rangeSource is a fakeSource that reads ranges at once.
type rangeSource struct {
	*fakeSource
	scans  int
	ranges [][2]int64 // ScanRange calls
}

func (f *rangeSource) RangeScans() int { return f.scans }

func (f *rangeSource) ScanRange(ctx context.Context, after, upTo int64, fn func(*triage.FailedRow) error) error {
	f.mu.Lock()
	f.ranges = append(f.ranges, [2]int64{after, upTo})
	f.mu.Unlock()
	return f.fakeSource.ScanAbove(ctx, after, func(r *triage.FailedRow) error {
		if r.ID > upTo {
			return nil
		}
		return fn(r)
	})
}

// A pass that reads ranges at once builds the index a single pass builds:
// the same rows, signatures, places and examples (the newest row of each
// signature, wherever its range), then serves incremental passes as usual.
func TestRangesAgreeWithOnePass(t *testing.T) {
	for _, scans := range []int{2, 3, 4} {
		t.Run(fmt.Sprint(scans), func(t *testing.T) {
			f := &rangeSource{fakeSource: newFake(), scans: scans}
			f.fill(1, 3000)
			f.del(1, 2, 1500, 1501, 2999)
			// A signature only the top range holds, and one only the bottom.
			f.add(2500, `App\Jobs\Late`, "late", "late", base)
			f.add(10, `App\Jobs\Early`, "early", "early", base)
			f.add(3000, `App\Jobs\Early`, "early", "early", base) // its example is in the top range
			// Ids at or below zero overflow the first range's window of the columns.
			for id := int64(-20); id <= 0; id++ {
				f.add(id, `App\Jobs\Neg`, "negative", "default", base)
			}
			var n notices
			ranged := New(Options{Dir: t.TempDir(), Source: f, Notice: n.add, RangeMinRows: 100})
			st := check(t, ranged, f.fakeSource)
			if len(f.ranges) != scans {
				t.Fatalf("%d ranges read, want %d: %v", len(f.ranges), scans, f.ranges)
			}
			sort.Slice(f.ranges, func(a, b int) bool { return f.ranges[a][0] < f.ranges[b][0] })
			if f.ranges[0][0] != noneScanned || f.ranges[scans-1][1] != 3000 {
				t.Errorf("ranges %v do not span the table", f.ranges)
			}
			for k := 1; k < scans; k++ {
				if f.ranges[k][0] != f.ranges[k-1][1] {
					t.Errorf("ranges %v leave a gap or overlap", f.ranges)
				}
			}
			one := New(Options{Dir: t.TempDir(), Source: f.fakeSource, Notice: n.add})
			v1, err := one.refresh(context.Background(), time.UTC)
			if err != nil {
				t.Fatal(err)
			}
			vr, err := ranged.refresh(context.Background(), time.UTC)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(examples(vr.d), examples(v1.d)) {
				t.Errorf("examples differ:\n ranges %v\n one pass %v", examples(vr.d), examples(v1.d))
			}
			if st.Rows != 3016 || len(v1.d.places) != len(vr.d.places) {
				t.Errorf("ranges: %+v, %d places, one pass %d", st, len(vr.d.places), len(v1.d.places))
			}
			// Incremental afterwards: new rows and deletes.
			f.fill(3001, 3010)
			f.del(5, 3005)
			if st := check(t, New(Options{Dir: ranged.o.Dir, Source: f, Notice: n.add, RangeMinRows: 100}), f.fakeSource); st.Added != 9 || st.Deleted != 1 {
				t.Errorf("warm after ranges: %+v", st)
			}
			if got := n.take(); len(got) != 0 {
				t.Errorf("notices %q", got)
			}
		})
	}
}

// examples maps each signature to its example and normalised message.
func examples(d *data) map[string]triage.IndexedSignature {
	m := make(map[string]triage.IndexedSignature, len(d.sigs))
	for _, s := range d.sigs {
		m[s.ID] = *s
	}
	return m
}

// A range over the bounds stops the pass with one notice, as one pass does.
func TestRangesKeepTheBounds(t *testing.T) {
	f := &rangeSource{fakeSource: newFake(), scans: 3}
	f.fill(1, 300)
	var n notices
	ix := New(Options{Dir: t.TempDir(), Source: f, Notice: n.add, RangeMinRows: 10, MaxRows: 250})
	if _, err := ix.Refresh(context.Background(), time.UTC); !errors.Is(err, triage.ErrIndexUnusable) {
		t.Errorf("over MaxRows: %v", err)
	}
	ix = New(Options{Dir: t.TempDir(), Source: f, Notice: n.add, RangeMinRows: 10, MaxSignatures: 2})
	if _, err := ix.Refresh(context.Background(), time.UTC); !errors.Is(err, triage.ErrIndexUnusable) {
		t.Errorf("over MaxSignatures: %v", err)
	}
	if got := n.take(); len(got) != 2 {
		t.Errorf("notices %q", got)
	}
}

// An error in one range cancels the others and is the one reported.
func TestRangeErrorStopsThePass(t *testing.T) {
	f := &failingRanges{rangeSource: rangeSource{fakeSource: newFake(), scans: 2}}
	f.fill(1, 300)
	_, err := New(Options{Dir: t.TempDir(), Source: f, RangeMinRows: 10}).Refresh(context.Background(), time.UTC)
	if err == nil || err.Error() != "connection reset" {
		t.Errorf("err = %v, want the range's own error", err)
	}
}

type failingRanges struct{ rangeSource }

func (f *failingRanges) ScanRange(ctx context.Context, after, upTo int64, fn func(*triage.FailedRow) error) error {
	if after > 0 {
		return errors.New("connection reset")
	}
	<-ctx.Done() // the other range runs until it is cancelled
	return ctx.Err()
}
