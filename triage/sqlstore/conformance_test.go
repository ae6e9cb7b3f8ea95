package sqlstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/payload"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

// TestConformance runs one behavioural spec of the store against every
// dialect: what passes on SQLite must pass on PostgreSQL and MariaDB too.
func TestConformance(t *testing.T) {
	for _, driver := range sqltest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			for _, c := range append(append(append([]conformanceCase{}, readCases...), writeCases...), monitorCases...) {
				t.Run(c.name, func(t *testing.T) { c.run(t, driver) })
			}
		})
	}
}

type conformanceCase struct {
	name string
	run  func(t *testing.T, driver string)
}

var readCases = []conformanceCase{
	{"SchemaModes", testSchemaModes},
	{"MissingTable", testMissingTable},
	{"ScanOrderAndBatches", testScanOrderAndBatches},
	{"Filters", testFilters},
	{"ListingHeads", testListingHeads},
	{"ClassWindows", testClassWindows},
	{"RealRedisRows", testRealRedisRows},
	{"GetFailed", testGetFailed},
	{"WallClockTimezone", testWallClockTimezone},
	{"HostileText", testHostileText},
	{"SinceUsesTheIDBound", testSinceUsesTheIDBound},
}

func ptr(s string) *string { return &s }

func payloadFor(class, uuid string) string {
	c := strings.ReplaceAll(class, `\`, `\\`)
	return `{"uuid":"` + uuid + `","displayName":"` + c + `","job":"Illuminate\\Queue\\CallQueuedHandler@call","maxTries":null,"maxExceptions":null,"failOnTimeout":false,"backoff":null,"timeout":null,"retryUntil":null,"data":{"commandName":"` + c + `","command":"O:` + fmt.Sprint(len(class)) + `:\"` + c + `\":0:{}"}}`
}

func fixture(i int, queue, class, failedAt string) sqltest.FailedFixture {
	u := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
	return sqltest.FailedFixture{UUID: ptr(u), Connection: "database", Queue: queue,
		Payload:   payloadFor(class, u),
		Exception: "RuntimeException: boom " + fmt.Sprint(i) + " in /var/www/app/Jobs/X.php:12\nStack trace:\n#0 {main}",
		FailedAt:  failedAt}
}

func collect(t *testing.T, s triage.Store, p triage.ScanParams) []*triage.FailedRow {
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

func testSchemaModes(t *testing.T, driver string) {
	for _, tc := range []struct {
		v        sqlstore.SchemaVariant
		mode     triage.IDMode
		nullable bool
	}{
		{sqlstore.SchemaLaravel8, triage.IDModeUUID, false},
		{sqlstore.SchemaUpgradedFrom7, triage.IDModeUUID, true},
		{sqlstore.SchemaLegacy, triage.IDModeInteger, false},
	} {
		s := sqltest.OpenLaravel(t, driver, tc.v, time.UTC)
		sc := s.Schema()
		if sc.IDMode != tc.mode || sc.UUIDNullable != tc.nullable || !sc.HasJobs || !sc.HasBatches || sc.Dialect != driver {
			t.Errorf("variant %d: schema %+v, want mode %v nullable %v with jobs and batches", tc.v, sc, tc.mode, tc.nullable)
		}
	}
}

func testMissingTable(t *testing.T, driver string) {
	ep := sqltest.NewEndpoint(t, driver)
	_, err := sqlstore.Open(context.Background(), sqlstore.Config{Endpoint: ep})
	if !errors.Is(err, triage.ErrMissingTable) {
		t.Fatalf("open on an empty database: %v, want ErrMissingTable", err)
	}
	for _, want := range []string{`"failed_jobs"`, "queue:failed-table"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
	if ep.Password != "" && strings.Contains(err.Error(), ep.Password) {
		t.Errorf("error leaks the password: %q", err)
	}
	_, err = sqlstore.Open(context.Background(), sqlstore.Config{Endpoint: ep, FailedTable: "failed_jobs; drop"})
	if err == nil || !strings.Contains(err.Error(), "invalid table name") {
		t.Errorf("hostile table name: %v", err)
	}
}

func testScanOrderAndBatches(t *testing.T, driver string) {
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
	var fx []sqltest.FailedFixture
	for i := 1; i <= 7; i++ {
		fx = append(fx, fixture(i, "default", `App\Jobs\A`, "2026-11-30 10:00:00"))
	}
	got := sqltest.InsertFailed(t, s, fx...)
	want := []int64{got[6], got[5], got[4], got[3], got[2], got[1], got[0]}
	// Batches of 2 over 7 rows cross several keyset boundaries with equal failed_at.
	equalIDs(t, "desc", idsOf(collect(t, s, triage.ScanParams{BatchSize: 2})), want)
	equalIDs(t, "limit", idsOf(collect(t, s, triage.ScanParams{BatchSize: 2, Limit: 3})), want[:3])
	equalIDs(t, "before", idsOf(collect(t, s, triage.ScanParams{BatchSize: 2, BeforeID: want[2]})), want[3:])
	equalIDs(t, "asc", idsOf(collect(t, s, triage.ScanParams{BatchSize: 3, Ascending: true, AfterID: got[1]})), got[2:])
	stop := errors.New("stop")
	n := 0
	err := s.ScanFailed(context.Background(), triage.ScanParams{BatchSize: 2}, func(*triage.FailedRow) error {
		n++
		if n == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 3 {
		t.Errorf("callback error: got %v after %d rows", err, n)
	}
}

func testFilters(t *testing.T, driver string) {
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
	a := fixture(1, "default", `App\Jobs\SendInvoice`, "2026-11-28 09:00:00")
	b := fixture(2, "emails", `App\Jobs\SendWelcomeMail`, "2026-11-29 09:00:00")
	b.Connection = "redis"
	c := fixture(3, "emails", `App\Jobs\Resize_100%`, "2026-11-30 09:00:00")
	c.Exception = "Illuminate\\Http\\Client\\ConnectionException: cURL error 28: Operation timed out in /app/X.php:3\nStack trace:\n#0 {main}"
	got := sqltest.InsertFailed(t, s, a, b, c)
	day := func(d int) time.Time { return time.Date(2026, 11, d, 9, 0, 0, 0, time.UTC) }
	for _, tc := range []struct {
		name string
		f    triage.Filter
		want []int64
	}{
		{"queue", triage.Filter{Queues: []string{"emails"}}, []int64{got[2], got[1]}},
		{"queues", triage.Filter{Queues: []string{"emails", "default"}}, []int64{got[2], got[1], got[0]}},
		{"connection", triage.Filter{Connections: []string{"redis"}}, []int64{got[1]}},
		{"search exception, any case", triage.Filter{Search: "CURL ERROR 28"}, []int64{got[2]}},
		{"search payload", triage.Filter{Search: "welcomemail"}, []int64{got[1]}},
		{"search wildcards are literal", triage.Filter{Search: "_100%"}, []int64{got[2]}},
		{"search underscore is no wildcard", triage.Filter{Search: "Jobs_"}, nil},
		{"payload needle with backslashes", triage.Filter{PayloadContains: []string{`"displayName":"App\\Jobs\\SendInvoice"`}}, []int64{got[0]}},
		{"since inclusive", triage.Filter{Since: day(29)}, []int64{got[2], got[1]}},
		{"until inclusive", triage.Filter{Until: day(29)}, []int64{got[1], got[0]}},
		{"window", triage.Filter{Since: day(29), Until: day(29)}, []int64{got[1]}},
		{"id range", triage.Filter{MinID: got[1], MaxID: got[1]}, []int64{got[1]}},
		{"combined", triage.Filter{Queues: []string{"emails"}, Connections: []string{"database"}}, []int64{got[2]}},
	} {
		equalIDs(t, tc.name, idsOf(collect(t, s, triage.ScanParams{Filter: tc.f})), tc.want)
	}
}

func testListingHeads(t *testing.T, driver string) {
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
	f := fixture(1, "default", `App\Jobs\ProcessPodcast`, "2026-11-30 10:00:00")
	f.Payload = f.Payload[:len(f.Payload)-1] + `,"padding":"` + strings.Repeat("x", 5000) + `"}`
	f.Exception = "LogicException: inner in /app/a.php:5\nStack trace:\n#0 {main}\n\nNext RuntimeException: Podcast service unavailable in /app/b.php:9\nStack trace:\n#0 /app/c.php(3): x()\n" + strings.Repeat("#1 frame\n", 500)
	sqltest.InsertFailed(t, s, f)
	rows := collect(t, s, triage.ScanParams{})
	if len(rows) != 1 {
		t.Fatalf("got %d rows", len(rows))
	}
	r := rows[0]
	if want := payload.ClassWindows([]byte(f.Payload)); string(r.Payload) != string(want) && (driver != "sqlite" || string(r.Payload) != f.Payload) {
		t.Errorf("listing payload = %.120q, want the class windows %.120q (or, on SQLite, the whole payload)", r.Payload, want)
	}
	if !strings.HasPrefix(r.Exception, "RuntimeException: Podcast service unavailable in /app/b.php:9") || len([]rune(r.Exception)) != triage.ExceptionHeadChars {
		t.Errorf("top exception head (%d chars): %.80q", len([]rune(r.Exception)), r.Exception)
	}
	full := collect(t, s, triage.ScanParams{Full: true})[0]
	if string(full.Payload) != f.Payload || full.Exception != f.Exception {
		t.Errorf("full scan changed the texts")
	}
}

// testClassWindows: wherever the class rule's keys sit in a payload (a
// Redis job re-encoded by cjson, Horizon's keys in front, displayName far
// past any head), the listing's windows are the ones Go cuts from the whole
// payload, so failed, --group, show, --class and --signature agree.
func testClassWindows(t *testing.T, driver string) {
	ctx := context.Background()
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
	big := `O:48:\"Illuminate\\Notifications\\SendQueuedNotifications\":1:{s:5:\"lines\";s:3000:\"` + strings.Repeat("ü", 3000) + `\";}`
	cjson := func(uuid, front string) string {
		return `{"type":"notification",` + front + `"tags":["App\\Models\\Customer:42","invoice:ÄÖ-9"],"id":"` + uuid + `",` +
			`"data":{"command":"` + big + `","commandName":"Illuminate\\Notifications\\SendQueuedNotifications"},` +
			`"pushedAt":"1700000000.1234","silenced":false,"job":"Illuminate\\Queue\\CallQueuedHandler@call","maxTries":2,` +
			`"displayName":"App\\Notifications\\InvoicePaid","uuid":"` + uuid + `","attempts":1,"timeout":null}`
	}
	cases := []struct {
		name, payload, class string
	}{
		{"cjson order, Horizon keys", cjson("00000000-0000-4000-8000-000000000001", ""), `App\Notifications\InvoicePaid`},
		// MySQL's default collation would take this key for displayName.
		{"key in another case first", cjson("00000000-0000-4000-8000-000000000002", `"DISPLAYNAME":"Wrong",`), `App\Notifications\InvoicePaid`},
		{"no displayName, command last", `{"uuid":"00000000-0000-4000-8000-000000000003","pad":"` + strings.Repeat("é", 2000) +
			`","job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"X","command":"O:10:\"App\\Jobs\\Y\":0:{}"}}`, `App\Jobs\Y`},
		{"PHP order", payloadFor(`App\Jobs\SendInvoice`, "00000000-0000-4000-8000-000000000004"), `App\Jobs\SendInvoice`},
		{"not JSON", `{"displayName":"Half`, ""},
		{"empty", ``, ""},
		{"key at the very end", `{"x":1,"job":`, ""},
		// PHP's json_decode keeps the last of duplicate keys, and so do
		// the SQL windows and Go (payload.ClassKeyLast).
		{"displayName twice, multibyte between", `{"displayName":"App\\Jobs\\First","pad":"` + strings.Repeat("ж", 700) +
			`","displayName":"App\\Jobs\\Last","uuid":"00000000-0000-4000-8000-000000000005"}`, `App\Jobs\Last`},
	}
	if driver == "sqlite" {
		// Only SQLite stores bytes that are not UTF-8.
		cases = append(cases, struct{ name, payload, class string }{"invalid UTF-8 before the key",
			"{\"pad\":\"a\x80\xc3\xa9\xc3\x80\x80\xff\xfe\",\"displayName\":\"App\\\\Jobs\\\\Bytes\"}", `App\Jobs\Bytes`})
	}
	var fx []sqltest.FailedFixture
	for i, c := range cases {
		f := fixture(10+i, "default", "unused", "2026-11-30 10:00:00")
		f.Payload = c.payload
		fx = append(fx, f)
	}
	ids := sqltest.InsertFailed(t, s, fx...)
	byID := map[int64]int{}
	for i, id := range ids {
		byID[id] = i
	}
	listed := collect(t, s, triage.ScanParams{})
	if len(listed) != len(cases) {
		t.Fatalf("listing: %d rows, want %d", len(listed), len(cases))
	}
	for _, r := range listed {
		c := cases[byID[r.ID]]
		whole, err := s.GetFailed(ctx, triage.Ref{ID: r.ID})
		if err != nil {
			t.Fatal(err)
		}
		if want := payload.ClassWindows(whole.Payload); string(r.Payload) != string(want) && (driver != "sqlite" || string(r.Payload) != string(whole.Payload)) {
			t.Errorf("%s: SQL windows differ from Go's:\n sql %.300q\n go  %.300q", c.name, r.Payload, want)
		}
		head := *whole
		head.Exception = triage.TopExceptionHead(whole.Exception)
		lj, wj := triage.JobFromRow(r), triage.JobFromRow(&head)
		if lj.Class != c.class || wj.Class != c.class || lj.Signature != wj.Signature {
			t.Errorf("%s: listing class %q sig %s, whole row class %q sig %s, want class %q", c.name, lj.Class, lj.Signature, wj.Class, wj.Signature, c.class)
		}
	}
	// The --class pre-filter searches the whole payload, so it finds the
	// class past any head.
	got := collect(t, s, triage.ScanParams{Filter: triage.Filter{PayloadContains: []string{payload.ClassNeedle("InvoicePaid")}}})
	equalIDs(t, "class needle", idsOf(got), []int64{ids[1], ids[0]})
}

// testRealRedisRows: the rows a real Laravel 8.83 worker wrote after Redis
// re-encoded the released jobs (testdata/laravel-rows/redis-*.json) list
// with the class the whole row shows, on the dialect that wrote them.
func testRealRedisRows(t *testing.T, driver string) {
	raw, err := os.ReadFile("../../testdata/laravel-rows/redis-" + driver + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var rows []struct {
		UUID, Connection, Queue, Payload, Exception string
		FailedAt                                    string `json:"failed_at"`
		Expect                                      struct{ Class string }
	}
	if err := json.Unmarshal(raw, &rows); err != nil || len(rows) == 0 {
		t.Fatalf("redis rows: %d, %v", len(rows), err)
	}
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
	want := map[string]string{}
	for _, r := range rows {
		u := r.UUID
		sqltest.InsertFailed(t, s, sqltest.FailedFixture{UUID: &u, Connection: r.Connection, Queue: r.Queue,
			Payload: r.Payload, Exception: r.Exception, FailedAt: r.FailedAt})
		want[r.UUID] = r.Expect.Class
	}
	for _, r := range collect(t, s, triage.ScanParams{}) {
		whole, err := s.GetFailed(context.Background(), triage.Ref{ID: r.ID})
		if err != nil {
			t.Fatal(err)
		}
		head := *whole
		head.Exception = triage.TopExceptionHead(whole.Exception)
		lj, wj := triage.JobFromRow(r), triage.JobFromRow(&head)
		if lj.Class != want[r.UUID] || lj != wj {
			t.Errorf("%s: listing %+v\nwhole row %+v\nwant class %s", r.UUID, lj, wj, want[r.UUID])
		}
	}
}

func testGetFailed(t *testing.T, driver string) {
	ctx := context.Background()
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaUpgradedFrom7, time.UTC)
	legacy := fixture(1, "default", `App\Jobs\Old`, "2026-01-01 00:00:00")
	legacy.UUID = nil
	legacy2 := legacy
	modern := fixture(2, "default", `App\Jobs\New`, "2026-11-30 00:00:00")
	got := sqltest.InsertFailed(t, s, legacy, legacy2, modern)

	r, err := s.GetFailed(ctx, triage.Ref{UUID: *modern.UUID})
	if err != nil || r.ID != got[2] || string(r.Payload) != modern.Payload || r.Exception != modern.Exception {
		t.Fatalf("by uuid: %+v, %v", r, err)
	}
	// Legacy NULL-uuid rows are reachable one by one through their id.
	r, err = s.GetFailed(ctx, triage.Ref{ID: got[1]})
	if err != nil || r.ID != got[1] || r.UUID != "" {
		t.Fatalf("legacy by id: %+v, %v", r, err)
	}
	if _, err := s.GetFailed(ctx, triage.Ref{UUID: "nope"}); !errors.Is(err, triage.ErrNotFound) {
		t.Errorf("unknown uuid: %v", err)
	}
	if _, err := s.GetFailed(ctx, triage.Ref{ID: 999999}); !errors.Is(err, triage.ErrNotFound) {
		t.Errorf("unknown id: %v", err)
	}
	legacyStore := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLegacy, time.UTC)
	if _, err := legacyStore.GetFailed(ctx, triage.Ref{UUID: *modern.UUID}); !errors.Is(err, triage.ErrNotFound) ||
		!strings.Contains(err.Error(), "no uuid column") {
		t.Errorf("uuid in integer mode: %v", err)
	}
}

func testWallClockTimezone(t *testing.T, driver string) {
	jakarta, err := time.LoadLocation("Asia/Jakarta")
	if err != nil {
		t.Skip("no tzdata")
	}
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, jakarta)
	got := sqltest.InsertFailed(t, s, fixture(1, "default", `App\Jobs\A`, "2026-11-30 14:28:15"),
		fixture(2, "default", `App\Jobs\A`, "2026-11-30 15:00:00"))
	rows := collect(t, s, triage.ScanParams{})
	want := time.Date(2026, 11, 30, 14, 28, 15, 0, jakarta)
	if !rows[1].FailedAt.Equal(want) || rows[1].FailedAt.Location() != jakarta {
		t.Errorf("failed_at %v, want %v", rows[1].FailedAt, want)
	}
	// A bound given in another zone is compared as Jakarta wall-clock time.
	since := time.Date(2026, 11, 30, 7, 30, 0, 0, time.UTC) // 14:30 in Jakarta
	equalIDs(t, "since across zones", idsOf(collect(t, s, triage.ScanParams{Filter: triage.Filter{Since: since}})), []int64{got[1]})
}

func testHostileText(t *testing.T, driver string) {
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
	f := fixture(1, "default", `App\Jobs\A`, "2026-11-30 10:00:00")
	f.Exception = "RuntimeException: \x1b]52;c;ZXZpbA==\x07 Grüße 🚀 ' \" ; DROP TABLE jobs; -- in /a.php:1\nStack trace:\n#0 {main}"
	f.Queue = "q'\"`;--"
	sqltest.InsertFailed(t, s, f)
	r := collect(t, s, triage.ScanParams{Filter: triage.Filter{Queues: []string{f.Queue}}})
	if len(r) != 1 || r[0].Exception != f.Exception || r[0].Queue != f.Queue {
		t.Fatalf("hostile text did not round-trip: %+v", r)
	}
}

// testSinceUsesTheIDBound: --since starts the scan at the ids that can
// match (a binary search on the primary key), and still finds a row that
// is out of id order by less than SinceSlack.
func testSinceUsesTheIDBound(t *testing.T, driver string) {
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
	var fx []sqltest.FailedFixture
	for i := 0; i < 40; i++ {
		fx = append(fx, fixture(i+1, "default", `App\Jobs\A`, time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC).AddDate(0, 0, i).Format("2006-01-02 15:04:05")))
	}
	// Row 36 (Nov 5) carries a time 12 hours later than its neighbours'
	// order would say, and row 30 one a day and a half earlier.
	fx[35].FailedAt = "2026-11-06 00:00:00"
	fx[29].FailedAt = "2026-10-29 00:00:00"
	// Row 5 claims a time weeks after its id's neighbours: a worker clock
	// off by far more than SinceSlack. The bound skips it — the documented
	// price of not reading the whole table; a plain scan would return it.
	fx[4].FailedAt = "2026-11-20 00:00:00"
	ids := sqltest.InsertFailed(t, s, fx...)
	since := time.Date(2026, 11, 6, 0, 0, 0, 0, time.UTC)
	got := idsOf(collect(t, s, triage.ScanParams{Filter: triage.Filter{Since: since}, Ascending: true}))
	equalIDs(t, "since", got, []int64{ids[35], ids[36], ids[37], ids[38], ids[39]})
	// The whole table matches an old bound.
	got = idsOf(collect(t, s, triage.ScanParams{Filter: triage.Filter{Since: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)}}))
	if len(got) != 40 {
		t.Errorf("old since: %d rows", len(got))
	}
	// A bound after everything matches nothing.
	if got := collect(t, s, triage.ScanParams{Filter: triage.Filter{Since: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}}); len(got) != 0 {
		t.Errorf("future since: %d rows", len(got))
	}
}
