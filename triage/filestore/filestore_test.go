package filestore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/filestore"
)

// fixturePath was written by testdata/laravel_file_failer.php (Laravel's
// FileFailedJobProvider::log, restated) from the rows a real Laravel 8.83
// worker wrote to failed_jobs:
//
//	php testdata/laravel_file_failer.php testdata/laravel-rows-sqlite.json testdata/failed-jobs.json
const (
	fixturePath = "testdata/failed-jobs.json"
	rowsPath    = "testdata/laravel-rows-sqlite.json"
	phpScript   = "testdata/laravel_file_failer.php"
)

// laravelRow is one row of testdata/laravel-rows, with what a triage tool
// must derive from it.
type laravelRow struct {
	ID         int64  `json:"id"`
	UUID       string `json:"uuid"`
	Connection string `json:"connection"`
	Queue      string `json:"queue"`
	Payload    string `json:"payload"`
	Exception  string `json:"exception"`
	FailedAt   string `json:"failed_at"`
	Expect     struct {
		Class            string `json:"class"`
		ExceptionClass   string `json:"exception_class"`
		ExceptionMessage string `json:"exception_message"`
	} `json:"expect"`
}

func laravelRows(t testing.TB) []laravelRow {
	t.Helper()
	b, err := os.ReadFile(rowsPath)
	if err != nil {
		t.Fatal(err)
	}
	var rows []laravelRow
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatal(err)
	}
	return rows
}

// entriesOf converts failed_jobs rows (oldest first) into file entries
// (newest first), as Laravel would have logged them with the file driver.
func entriesOf(t testing.TB, rows []laravelRow) []fileEntry {
	t.Helper()
	var out []fileEntry
	for i := len(rows) - 1; i >= 0; i-- {
		r := rows[i]
		at, err := time.ParseInLocation("2006-01-02 15:04:05", r.FailedAt, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fileEntry{ID: sp(r.UUID), Connection: sp(r.Connection), Queue: sp(r.Queue),
			Payload: sp(r.Payload), Exception: sp(r.Exception), FailedAt: sp(r.FailedAt), FailedAtTimestamp: ip(at.Unix())})
	}
	return out
}

func writeFile(t testing.TB, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "failed-jobs.json")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func open(t testing.TB, data []byte, loc *time.Location) *filestore.Store {
	t.Helper()
	s, err := filestore.Open(writeFile(t, data), loc)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func collect(t testing.TB, s triage.Store, p triage.ScanParams) []*triage.FailedRow {
	t.Helper()
	var out []*triage.FailedRow
	if err := s.ScanFailed(context.Background(), p, func(r *triage.FailedRow) error {
		out = append(out, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func idsOf(rows []*triage.FailedRow) []int64 {
	out := make([]int64, len(rows))
	for i, r := range rows {
		out[i] = r.ID
	}
	return out
}

func equalIDs(t *testing.T, what string, got, want []int64) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: ids %v, want %v", what, got, want)
	}
}

// TestLaravelFixture reads the file Laravel's provider logic wrote from
// real worker rows: every row comes back byte for byte, the synthesized ids
// are the failed_jobs ids those rows had (oldest 1, newest highest), and the
// class and exception a listing derives are what the worker's rows promise.
func TestLaravelFixture(t *testing.T) {
	rows := laravelRows(t)
	s, err := filestore.Open(fixturePath, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if s.Missing() || s.Len() != len(rows) {
		t.Fatalf("missing %v, %d entries, want %d", s.Missing(), s.Len(), len(rows))
	}
	full := collect(t, s, triage.ScanParams{Full: true})
	heads := collect(t, s, triage.ScanParams{})
	if len(full) != len(rows) || len(heads) != len(rows) {
		t.Fatalf("scanned %d full and %d head rows, want %d", len(full), len(heads), len(rows))
	}
	for i, got := range full {
		want := rows[len(rows)-1-i]
		at, _ := time.ParseInLocation("2006-01-02 15:04:05", want.FailedAt, time.UTC)
		if got.ID != want.ID || got.UUID != want.UUID || got.Connection != want.Connection || got.Queue != want.Queue ||
			string(got.Payload) != want.Payload || got.Exception != want.Exception || !got.FailedAt.Equal(at) {
			t.Errorf("entry %d (id %d) differs from failed_jobs row %d", i, got.ID, want.ID)
		}
		j := triage.JobFromRow(heads[i])
		if j.ID != want.UUID || j.Class != want.Expect.Class || j.ExceptionClass != want.Expect.ExceptionClass ||
			j.ExceptionMessage != want.Expect.ExceptionMessage {
			t.Errorf("row %d: derived %q / %q / %q, want %q / %q / %q", want.ID, j.Class, j.ExceptionClass, j.ExceptionMessage,
				want.Expect.Class, want.Expect.ExceptionClass, want.Expect.ExceptionMessage)
		}
	}
}

// TestPHPWriterReproducesFixture runs the PHP restatement of Laravel's
// log() again: the committed fixture is its output, and the limit cuts the
// oldest entries as Laravel's array_slice does.
func TestPHPWriterReproducesFixture(t *testing.T) {
	php, err := exec.LookPath("php")
	if err != nil {
		t.Skip("php not on PATH")
	}
	want, err := os.ReadFile(fixturePath)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "failed-jobs.json")
	if b, err := exec.Command(php, phpScript, rowsPath, out).CombinedOutput(); err != nil {
		t.Fatalf("php: %v\n%s", err, b)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the PHP writer's output (%d bytes) differs from %s (%d bytes)", len(got), fixturePath, len(want))
	}

	const limit = 5
	capped := filepath.Join(t.TempDir(), "capped.json")
	if b, err := exec.Command(php, phpScript, rowsPath, capped, fmt.Sprint(limit)).CombinedOutput(); err != nil {
		t.Fatalf("php: %v\n%s", err, b)
	}
	s, err := filestore.Open(capped, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	rows := laravelRows(t)
	got5 := collect(t, s, triage.ScanParams{})
	if len(got5) != limit {
		t.Fatalf("capped file: %d entries, want %d", len(got5), limit)
	}
	for i, r := range got5 {
		// The cap keeps the newest; their ids restart at the oldest kept.
		if want := rows[len(rows)-1-i]; r.UUID != want.UUID || r.ID != int64(limit-i) {
			t.Errorf("capped entry %d: id %d uuid %s, want id %d uuid %s", i, r.ID, r.UUID, limit-i, want.UUID)
		}
	}
}

// TestGoWriterMatchesPHP: the tests' phpFile renders the real rows exactly
// as the PHP script did, so files built with it have Laravel's format.
func TestGoWriterMatchesPHP(t *testing.T) {
	want, err := os.ReadFile(fixturePath)
	if err != nil {
		t.Fatal(err)
	}
	if got := phpFile(entriesOf(t, laravelRows(t))); !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Fatalf("phpFile differs from the PHP output at byte %d: %.60q vs %.60q", i, got[i:], want[i:])
	}
}

func payloadFor(class, uuid string) string {
	c := strings.ReplaceAll(class, `\`, `\\`)
	return `{"uuid":"` + uuid + `","displayName":"` + c + `","job":"Illuminate\\Queue\\CallQueuedHandler@call","maxTries":null,"maxExceptions":null,"failOnTimeout":false,"backoff":null,"timeout":null,"retryUntil":null,"data":{"commandName":"` + c + `","command":"O:` + fmt.Sprint(len(class)) + `:\"` + c + `\":0:{}"}}`
}

func uuidOf(i int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", i) }

// entry is a synthetic entry with Laravel's fields, failed_at in UTC.
func entry(i int, queue, class, failedAt string) fileEntry {
	u := uuidOf(i)
	at, err := time.ParseInLocation("2006-01-02 15:04:05", failedAt, time.UTC)
	if err != nil {
		panic(err)
	}
	return fileEntry{ID: sp(u), Connection: sp("database"), Queue: sp(queue), Payload: sp(payloadFor(class, u)),
		Exception: sp("RuntimeException: boom " + fmt.Sprint(i) + " in /var/www/app/Jobs/X.php:12\nStack trace:\n#0 {main}"),
		FailedAt:  sp(failedAt), FailedAtTimestamp: ip(at.Unix())}
}

// newestFirst reverses entries given oldest first, as Laravel prepends.
func newestFirst(oldestFirst ...fileEntry) []fileEntry {
	out := make([]fileEntry, len(oldestFirst))
	for i, e := range oldestFirst {
		out[len(out)-1-i] = e
	}
	return out
}

func TestScanOrderAndCursors(t *testing.T) {
	var fx []fileEntry
	for i := 1; i <= 7; i++ {
		fx = append(fx, entry(i, "default", `App\Jobs\A`, "2026-11-30 10:00:00"))
	}
	s := open(t, phpFile(newestFirst(fx...)), time.UTC)
	rows := collect(t, s, triage.ScanParams{BatchSize: 2})
	equalIDs(t, "desc", idsOf(rows), []int64{7, 6, 5, 4, 3, 2, 1})
	for _, r := range rows {
		// Logged oldest first, so entry i has id i.
		if r.UUID != uuidOf(int(r.ID)) {
			t.Errorf("id %d carries uuid %s", r.ID, r.UUID)
		}
	}
	equalIDs(t, "limit", idsOf(collect(t, s, triage.ScanParams{Limit: 3})), []int64{7, 6, 5})
	equalIDs(t, "before", idsOf(collect(t, s, triage.ScanParams{BeforeID: 5})), []int64{4, 3, 2, 1})
	equalIDs(t, "before, limit", idsOf(collect(t, s, triage.ScanParams{BeforeID: 5, Limit: 2})), []int64{4, 3})
	equalIDs(t, "before above all", idsOf(collect(t, s, triage.ScanParams{BeforeID: 1 << 62})), []int64{7, 6, 5, 4, 3, 2, 1})
	equalIDs(t, "before the oldest", idsOf(collect(t, s, triage.ScanParams{BeforeID: 1})), nil)
	equalIDs(t, "asc", idsOf(collect(t, s, triage.ScanParams{Ascending: true})), []int64{1, 2, 3, 4, 5, 6, 7})
	equalIDs(t, "asc after", idsOf(collect(t, s, triage.ScanParams{Ascending: true, AfterID: 2})), []int64{3, 4, 5, 6, 7})
	equalIDs(t, "asc after, limit", idsOf(collect(t, s, triage.ScanParams{Ascending: true, AfterID: 2, Limit: 2})), []int64{3, 4})
	equalIDs(t, "asc after all", idsOf(collect(t, s, triage.ScanParams{Ascending: true, AfterID: 1<<63 - 1})), nil)
	equalIDs(t, "asc ignores BeforeID", idsOf(collect(t, s, triage.ScanParams{Ascending: true, BeforeID: 3, AfterID: 5})), []int64{6, 7})

	stop := errors.New("stop")
	n := 0
	err := s.ScanFailed(context.Background(), triage.ScanParams{}, func(*triage.FailedRow) error {
		if n++; n == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 3 {
		t.Errorf("callback error: got %v after %d rows", err, n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.ScanFailed(ctx, triage.ScanParams{}, func(*triage.FailedRow) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled scan: %v", err)
	}

	// Rows are the caller's: changing one changes nothing in the store.
	r := collect(t, s, triage.ScanParams{Full: true, Limit: 1})[0]
	r.Payload[0] = 'X'
	if again := collect(t, s, triage.ScanParams{Full: true, Limit: 1})[0]; again.Payload[0] != '{' {
		t.Error("a caller's change to a row's payload reached the store")
	}
}

// TestFilters mirrors sqlstore's conformance cases: every Filter field has
// the SQL store's meaning.
func TestFilters(t *testing.T) {
	a := entry(1, "default", `App\Jobs\SendInvoice`, "2026-11-28 09:00:00")
	b := entry(2, "emails", `App\Jobs\SendWelcomeMail`, "2026-11-29 09:00:00")
	b.Connection = sp("redis")
	c := entry(3, "emails", `App\Jobs\Resize_100%`, "2026-11-30 09:00:00")
	c.Exception = sp("Illuminate\\Http\\Client\\ConnectionException: cURL error 28: Operation timed out in /app/X.php:3\nStack trace:\n#0 {main}")
	d := entry(4, "default", `App\Jobs\Grüße`, "2026-11-30 12:00:00")
	d.Exception = sp("RuntimeException: ÄRGER mit dem Dienst in /app/Y.php:1\nStack trace:\n#0 {main}")
	s := open(t, phpFile(newestFirst(a, b, c, d)), time.UTC)
	day := func(d int) time.Time { return time.Date(2026, 11, d, 9, 0, 0, 0, time.UTC) }
	for _, tc := range []struct {
		name string
		f    triage.Filter
		want []int64
	}{
		{"none", triage.Filter{}, []int64{4, 3, 2, 1}},
		{"queue", triage.Filter{Queues: []string{"emails"}}, []int64{3, 2}},
		{"queues", triage.Filter{Queues: []string{"emails", "default"}}, []int64{4, 3, 2, 1}},
		{"queue is exact", triage.Filter{Queues: []string{"Emails"}}, nil},
		{"connection", triage.Filter{Connections: []string{"redis"}}, []int64{2}},
		{"search exception, any case", triage.Filter{Search: "CURL ERROR 28"}, []int64{3}},
		{"search payload", triage.Filter{Search: "welcomemail"}, []int64{2}},
		{"search non-ASCII, any case", triage.Filter{Search: "ärger"}, []int64{4}},
		{"search wildcards are literal", triage.Filter{Search: "_100%"}, []int64{3}},
		{"search underscore is no wildcard", triage.Filter{Search: "Jobs_"}, nil},
		{"payload needle with backslashes", triage.Filter{PayloadContains: []string{`"displayName":"App\\Jobs\\SendInvoice"`}}, []int64{1}},
		{"payload needles, all of them", triage.Filter{PayloadContains: []string{"App", "sendinvoice"}}, []int64{1}},
		{"payload needle is not the exception", triage.Filter{PayloadContains: []string{"cURL"}}, nil},
		{"since inclusive", triage.Filter{Since: day(29)}, []int64{4, 3, 2}},
		{"until inclusive", triage.Filter{Until: day(29)}, []int64{2, 1}},
		{"window", triage.Filter{Since: day(29), Until: day(29)}, []int64{2}},
		{"since in another zone", triage.Filter{Since: time.Date(2026, 11, 30, 18, 59, 59, 0, time.FixedZone("WIB", 7*3600))}, []int64{4}},
		{"id range", triage.Filter{MinID: 2, MaxID: 2}, []int64{2}},
		{"min id", triage.Filter{MinID: 3}, []int64{4, 3}},
		{"max id", triage.Filter{MaxID: 1}, []int64{1}},
		{"combined", triage.Filter{Queues: []string{"emails"}, Connections: []string{"database"}}, []int64{3}},
	} {
		equalIDs(t, tc.name, idsOf(collect(t, s, triage.ScanParams{Filter: tc.f})), tc.want)
		n, err := s.Count(context.Background(), tc.f)
		if err != nil || n != int64(len(tc.want)) {
			t.Errorf("%s: count %d, %v, want %d", tc.name, n, err, len(tc.want))
		}
	}
}

func TestListingHeads(t *testing.T) {
	f := entry(1, "default", `App\Jobs\ProcessPodcast`, "2026-11-30 10:00:00")
	f.Payload = sp((*f.Payload)[:len(*f.Payload)-1] + `,"padding":"` + strings.Repeat("ü", 5000) + `"}`)
	f.Exception = sp("LogicException: inner in /app/a.php:5\nStack trace:\n#0 {main}\n\nNext RuntimeException: Podcast service unavailable in /app/b.php:9\nStack trace:\n#0 /app/c.php(3): x()\n" + strings.Repeat("#1 frame\n", 500))
	s := open(t, phpFile([]fileEntry{f}), time.UTC)
	r := collect(t, s, triage.ScanParams{})[0]
	// A listing carries the whole payload (the class is cut from it in Go,
	// as for SQLite); the exception is cut in characters, as SQL counts them.
	if string(r.Payload) != *f.Payload {
		t.Errorf("listing payload: %d characters, want the whole payload", len([]rune(string(r.Payload))))
	}
	if !strings.HasPrefix(r.Exception, "RuntimeException: Podcast service unavailable in /app/b.php:9") || len([]rune(r.Exception)) != triage.ExceptionHeadChars {
		t.Errorf("top exception head (%d chars): %.80q", len([]rune(r.Exception)), r.Exception)
	}
	full := collect(t, s, triage.ScanParams{Full: true})[0]
	if string(full.Payload) != *f.Payload || full.Exception != *f.Exception {
		t.Errorf("full scan changed the texts")
	}
}

func TestGetFailedAndResolveRefs(t *testing.T) {
	ctx := context.Background()
	old := entry(1, "default", `App\Jobs\Old`, "2026-11-01 00:00:00")
	dupOld := entry(2, "default", `App\Jobs\Dup`, "2026-11-02 00:00:00")
	noID := entry(3, "default", `App\Jobs\NoID`, "2026-11-03 00:00:00")
	noID.ID = nil
	dupNew := entry(2, "emails", `App\Jobs\Dup`, "2026-11-04 00:00:00")
	s := open(t, phpFile(newestFirst(old, dupOld, noID, dupNew)), time.UTC)

	r, err := s.GetFailed(ctx, triage.Ref{UUID: uuidOf(1)})
	if err != nil || r.ID != 1 || string(r.Payload) != *old.Payload || r.Exception != *old.Exception {
		t.Fatalf("by uuid: %+v, %v", r, err)
	}
	// A uuid logged twice names the newest entry, as Laravel's find().
	if r, err := s.GetFailed(ctx, triage.Ref{UUID: uuidOf(2)}); err != nil || r.ID != 4 || r.Queue != "emails" {
		t.Errorf("duplicate uuid: %+v, %v", r, err)
	}
	// The older duplicate and an entry without id stay reachable by id.
	if r, err := s.GetFailed(ctx, triage.Ref{ID: 2}); err != nil || r.UUID != uuidOf(2) || r.Queue != "default" {
		t.Errorf("older duplicate by id: %+v, %v", r, err)
	}
	if r, err := s.GetFailed(ctx, triage.Ref{ID: 3}); err != nil || r.UUID != "" || !strings.Contains(string(r.Payload), "NoID") {
		t.Errorf("entry without id: %+v, %v", r, err)
	}
	for _, ref := range []triage.Ref{{UUID: "nope"}, {ID: 5}, {ID: 1 << 62}, {}} {
		if _, err := s.GetFailed(ctx, ref); !errors.Is(err, triage.ErrNotFound) {
			t.Errorf("GetFailed(%v): %v, want ErrNotFound", ref, err)
		}
	}
	got, err := s.ResolveRefs(ctx, []triage.Ref{{UUID: uuidOf(1)}, {UUID: uuidOf(2)}, {ID: 3}, {ID: 9}, {UUID: "nope"}, {}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[triage.Ref]int64{{UUID: uuidOf(1)}: 1, {UUID: uuidOf(2)}: 4, {ID: 3}: 3}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ResolveRefs: %v, want %v", got, want)
	}
}

func TestWallClockTimezone(t *testing.T) {
	jakarta, err := time.LoadLocation("Asia/Jakarta")
	if err != nil {
		t.Skip("no tzdata")
	}
	// failed_at is Jakarta wall clock; the timestamps agree with it.
	a, b := entry(1, "default", `App\Jobs\A`, "2026-11-30 14:28:15"), entry(2, "default", `App\Jobs\A`, "2026-11-30 15:00:00")
	a.FailedAtTimestamp, b.FailedAtTimestamp = ip(*a.FailedAtTimestamp-7*3600), ip(*b.FailedAtTimestamp-7*3600)
	s := open(t, phpFile(newestFirst(a, b)), jakarta)
	rows := collect(t, s, triage.ScanParams{})
	want := time.Date(2026, 11, 30, 14, 28, 15, 0, jakarta)
	if !rows[1].FailedAt.Equal(want) || rows[1].FailedAt.Location() != jakarta {
		t.Errorf("failed_at %v, want %v", rows[1].FailedAt, want)
	}
	since := time.Date(2026, 11, 30, 7, 30, 0, 0, time.UTC) // 14:30 in Jakarta
	equalIDs(t, "since across zones", idsOf(collect(t, s, triage.ScanParams{Filter: triage.Filter{Since: since}})), []int64{2})
	if sc := s.Schema(); sc.Dialect != filestore.Dialect || sc.IDMode != triage.IDModeUUID || sc.HasJobs || sc.HasBatches || sc.FailedTable != s.Path() {
		t.Errorf("schema %+v", sc)
	}
}

// TestFailedAtFallbacks: failed_at is read first; failed_at_timestamp
// stands in when it is missing or unreadable; an entry with neither has
// no time and no time bound matches it (as SQL NULL).
func TestFailedAtFallbacks(t *testing.T) {
	jakarta := time.FixedZone("WIB", 7*3600)
	at := time.Date(2026, 11, 30, 10, 0, 0, 0, jakarta)
	onlyStamp := fileEntry{ID: sp(uuidOf(1)), FailedAtTimestamp: ip(at.Unix())}
	badText := fileEntry{ID: sp(uuidOf(2)), FailedAt: sp("yesterday"), FailedAtTimestamp: ip(at.Unix() + 60)}
	neither := fileEntry{ID: sp(uuidOf(3)), FailedAt: sp("soon")}
	isoText := fileEntry{ID: sp(uuidOf(4)), FailedAt: sp("2026-11-30T05:00:00Z")}
	// The text wins over a timestamp that disagrees (a zone changed since).
	textWins := fileEntry{ID: sp(uuidOf(5)), FailedAt: sp("2026-11-30 11:00:00"), FailedAtTimestamp: ip(0)}
	data := phpFile([]fileEntry{textWins, isoText, neither, badText, onlyStamp})
	// A timestamp that is no number is no time either.
	data = bytes.Replace(data, []byte(`"failed_at": "soon"`), []byte(`"failed_at": "soon", "failed_at_timestamp": "x"`), 1)
	s := open(t, data, jakarta)
	rows := collect(t, s, triage.ScanParams{})
	want := []time.Time{
		time.Date(2026, 11, 30, 11, 0, 0, 0, jakarta),
		time.Date(2026, 11, 30, 12, 0, 0, 0, jakarta),
		{},
		at.Add(time.Minute),
		at,
	}
	for i, r := range rows {
		if !r.FailedAt.Equal(want[i]) || (!want[i].IsZero() && r.FailedAt.Location() != jakarta) {
			t.Errorf("id %d: failed_at %v, want %v in the app zone", r.ID, r.FailedAt, want[i])
		}
	}
	equalIDs(t, "since", idsOf(collect(t, s, triage.ScanParams{Filter: triage.Filter{Since: at}})), []int64{5, 4, 2, 1})
	equalIDs(t, "until", idsOf(collect(t, s, triage.ScanParams{Filter: triage.Filter{Until: at}})), []int64{1})

	// The provider's first draft wrote failed_at as a number.
	numeric := []byte(`[{"id":"x","failed_at":` + fmt.Sprint(at.Unix()) + `}]`)
	if r := collect(t, open(t, numeric, jakarta), triage.ScanParams{})[0]; !r.FailedAt.Equal(at) {
		t.Errorf("numeric failed_at: %v, want %v", r.FailedAt, at)
	}
}

func TestMissingAndEmptyFiles(t *testing.T) {
	dir := t.TempDir()
	s, err := filestore.Open(filepath.Join(dir, "failed-jobs.json"), nil)
	if err != nil || !s.Missing() || s.Len() != 0 {
		t.Fatalf("missing file: %v, missing %v", err, s != nil && s.Missing())
	}
	if n, err := s.Count(context.Background(), triage.Filter{}); n != 0 || err != nil {
		t.Errorf("count on a missing file: %d, %v", n, err)
	}
	if _, err := s.GetFailed(context.Background(), triage.Ref{ID: 1}); !errors.Is(err, triage.ErrNotFound) {
		t.Errorf("get on a missing file: %v", err)
	}
	// Laravel reads these as no jobs (trim() is empty, or the array is).
	for _, data := range []string{"", "[]", "[\n\n]", " \n\t\r", "\x00\x00\x00", "\x0b\n"} {
		s := open(t, []byte(data), nil)
		if s.Missing() || s.Len() != 0 {
			t.Errorf("%q: missing %v, %d entries", data, s.Missing(), s.Len())
		}
	}
}

// TestMalformedFiles: anything else that is not an array of entries is one
// line naming the file and the byte where reading stopped.
func TestMalformedFiles(t *testing.T) {
	fixture, err := os.ReadFile(fixturePath)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, data, want string
	}{
		{"truncated mid-string", string(fixture[:len(fixture)/2]), fmt.Sprintf("at byte %d: unexpected end of file", len(fixture)/2)},
		{"truncated before ]", string(fixture[:len(fixture)-1]), fmt.Sprintf("at byte %d", len(fixture)-1)},
		{"truncated after [", "[", "at byte 1: unexpected end"},
		{"object", `{"id": "x"}`, "not a JSON array of failed jobs (it starts with '{'"},
		{"string", `"[]"`, "it starts with a string"},
		{"null", `null`, "it starts with null"},
		{"number", `42`, "it starts with a number"},
		{"garbage", `[{"id": "x"},, ]`, "at byte 13: invalid character ','"},
		{"trailing data", `[] []`, "at byte 2: data after the array's closing ]"},
		{"two arrays", "[]\n{}", "data after the array's closing ]"},
		{"NUL then JSON", "\x00[]", "at byte 1: invalid character"},
		{"BOM", "\ufeff[]", "invalid character"},
		{"bare word", "[nope]", "invalid character"},
		{"invalid UTF-8", "[{\"queue\": \"ab\xff\"}]", "not valid UTF-8 at byte 14"},
		{"cut UTF-8 at end", "[\"\xd0", "not valid UTF-8 at byte 2"},
		{"overlong", "[\"\xc0\xaf\"]", "not valid UTF-8 at byte 2"},
	} {
		path := writeFile(t, []byte(tc.data))
		_, err := filestore.Open(path, nil)
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, path) || !strings.Contains(msg, tc.want) || strings.ContainsAny(msg, "\r\n") {
			t.Errorf("%s: %q, want one line naming the file and %q", tc.name, msg, tc.want)
		}
	}

	dir := t.TempDir()
	if _, err := filestore.Open(dir, nil); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("directory: %v", err)
	}
	// A file over the cap is refused from its size, without reading it.
	big := filepath.Join(t.TempDir(), "big.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(filestore.MaxFileBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := filestore.Open(big, nil); err == nil || !strings.Contains(err.Error(), "larger than 64 MiB") {
		t.Errorf("big file: %v", err)
	}
	if os.Getuid() != 0 {
		unreadable := writeFile(t, []byte("[]"))
		os.Chmod(unreadable, 0)
		if _, err := filestore.Open(unreadable, nil); err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("unreadable file: %v", err)
		}
	}
}

// TestLenientEntries: entries are kept with whatever they have; fields of
// another type than Laravel writes never stop the read.
func TestLenientEntries(t *testing.T) {
	huge := strings.Repeat("Grüße ", 1<<20) // 7 MiB of text, 8 MiB escaped
	data := `[
		{"id": "u-5", "queue": "a", "queue": "b", "ID": "shadow", "extra": {"deep": [1, {"x": null}]}},
		7,
		["a", {"b": []}],
		{"id": 1234, "connection": true, "queue": null, "payload": {"uuid": "p"}, "exception": ["x"], "failed_at": [], "failed_at_timestamp": {}},
		{},
		{"id": "u-1", "exception": "` + huge + `", "payload": "\ud83d\ude80 \u0000 \/"}
	]`
	s := open(t, []byte(data), nil)
	rows := collect(t, s, triage.ScanParams{Full: true})
	equalIDs(t, "every element is an entry", idsOf(rows), []int64{6, 5, 4, 3, 2, 1})
	if r := rows[0]; r.UUID != "u-5" || r.Queue != "b" {
		t.Errorf("duplicate keys: the last wins and names are exact: %+v", r)
	}
	if r := rows[3]; r.UUID != "1234" || r.Connection != "true" || r.Queue != "" || string(r.Payload) != `{"uuid": "p"}` || r.Exception != "" || !r.FailedAt.IsZero() {
		t.Errorf("odd types: %+v", r)
	}
	if r := rows[5]; r.Exception != huge || string(r.Payload) != "🚀 \x00 /" {
		t.Errorf("huge or escaped strings: %d bytes, payload %q", len(r.Exception), r.Payload)
	}
	if r, err := s.GetFailed(context.Background(), triage.Ref{UUID: "1234"}); err != nil || r.ID != 3 {
		t.Errorf("numeric id by its text: %+v, %v", r, err)
	}
	if head := collect(t, s, triage.ScanParams{Limit: 1, BeforeID: 2})[0]; len([]rune(head.Exception)) != triage.ExceptionHeadChars {
		t.Errorf("huge exception head: %d characters", len([]rune(head.Exception)))
	}
}

func TestWritesAreRefused(t *testing.T) {
	s := open(t, phpFile([]fileEntry{entry(1, "default", `App\Jobs\A`, "2026-11-30 10:00:00")}), nil)
	ctx := context.Background()
	_, e1 := s.TakeBatch(ctx, triage.BatchParams{Retry: true})
	_, e2 := s.TakeBatch(ctx, triage.BatchParams{})
	_, e3 := triage.PruneTotal(s.Prune(ctx, triage.PruneParams{Before: time.Now()}))
	_, e4 := triage.PruneTotal(s.Prune(ctx, triage.PruneParams{All: true}))
	for i, err := range []error{e1, e2, e3, e4} {
		if !errors.Is(err, filestore.ErrReadOnly) || !strings.Contains(err.Error(), s.Path()) {
			t.Errorf("write %d: %v", i, err)
		}
	}
	for _, want := range []string{"read-only", "php artisan queue:retry", "queue:forget", "queue:flush"} {
		if !strings.Contains(filestore.ErrReadOnly.Error(), want) {
			t.Errorf("ErrReadOnly does not say %q", want)
		}
	}
	if s.Len() != 1 {
		t.Error("a refused write changed the store")
	}
}

// TestServiceOnTheFile: list (with cursors and a class filter), group and
// show work on the fixture through the same use-cases as on SQL.
func TestServiceOnTheFile(t *testing.T) {
	s, err := filestore.Open(fixturePath, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	svc := &triage.Service{Store: s, Location: time.UTC, Now: func() time.Time { return time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC) }}
	ctx := context.Background()
	var ids []int64
	cursor := ""
	for {
		page, err := svc.List(ctx, triage.ListParams{Cursor: cursor, Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range page.Jobs {
			ids = append(ids, j.RowID)
		}
		if cursor = page.Next; cursor == "" {
			break
		}
	}
	equalIDs(t, "paged listing", ids, []int64{12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1})
	page, err := svc.List(ctx, triage.ListParams{Query: triage.Query{Class: "ChargeCard"}})
	if err != nil || len(page.Jobs) != 3 {
		t.Fatalf("class filter: %d jobs, %v", len(page.Jobs), err)
	}
	groups, err := svc.Group(ctx, triage.GroupParams{})
	if err != nil || len(groups) == 0 || groups[0].Class != `App\Jobs\ChargeCard` || groups[0].Count != 3 {
		t.Fatalf("group: %+v, %v", groups, err)
	}
	rows := laravelRows(t)
	d, err := svc.Show(ctx, rows[0].UUID)
	if err != nil || string(d.Payload) != rows[0].Payload || d.Class != rows[0].Expect.Class {
		t.Fatalf("show by uuid: %+v, %v", d.Job, err)
	}
	if d, err := svc.Show(ctx, "1"); err != nil || d.UUID != rows[0].UUID {
		t.Fatalf("show by id: %+v, %v", d.Job, err)
	}
}
