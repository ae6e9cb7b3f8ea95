package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
	"github.com/jobtriage/jobtriage/triage/triagetest"
)

// TestPoisonRowsConformance: a row no Laravel writes — NULL where the stock
// schema says NOT NULL, a failed_at that is no time, a queue name the jobs
// table cannot hold, a row the jobs table refuses, a row failed_jobs will
// not let go, a negative id — never
// stops a listing, a retry or a flush, on every dialect. The hostile rows
// are inserted directly, with the column widened where the stock schema
// would refuse them.
func TestPoisonRowsConformance(t *testing.T) {
	cases := []conformanceCase{
		{"NullColumnsAreReadAndNamed", testNullColumns},
		{"UnreadableFailedAt", testUnreadableFailedAt},
		{"QueueColumnFromTheCatalog", testQueueColumn},
		{"RefusedRowIsIsolated", testRefusedRowIsolated},
		{"RefusedDeleteIsIsolated", testRefusedDeleteIsolated},
		{"NegativeIDs", testNegativeIDs},
		{"PruneAllIsBoundToItsSnapshot", testPruneAllSnapshot},
	}
	for _, driver := range sqltest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) { c.run(t, driver) })
			}
		})
	}
}

func execAll(t *testing.T, s *sqlstore.Store, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := s.DB().Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// reopen opens a fresh store on s's database: its schema was changed.
func reopen(t *testing.T, s *sqlstore.Store) *sqlstore.Store {
	t.Helper()
	o, err := sqlstore.Open(context.Background(), sqlstore.Config{Endpoint: s.Endpoint(), Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	return o
}

// allowNulls drops NOT NULL from failed_jobs' Laravel columns.
func allowNulls(t *testing.T, s *sqlstore.Store, driver string) {
	t.Helper()
	switch driver {
	case "postgres":
		execAll(t, s, `ALTER TABLE failed_jobs ALTER COLUMN connection DROP NOT NULL, ALTER COLUMN queue DROP NOT NULL,
			ALTER COLUMN payload DROP NOT NULL, ALTER COLUMN exception DROP NOT NULL, ALTER COLUMN failed_at DROP NOT NULL`)
	case "mysql":
		execAll(t, s, "ALTER TABLE failed_jobs MODIFY connection text NULL, MODIFY queue text NULL, MODIFY payload longtext NULL, "+
			"MODIFY exception longtext NULL, MODIFY failed_at timestamp NULL DEFAULT NULL")
	case "sqlite":
		// SQLite cannot drop a constraint: the table is made again.
		execAll(t, s, "DROP TABLE failed_jobs",
			`CREATE TABLE "failed_jobs" ("id" integer not null primary key autoincrement, "uuid" varchar not null, "connection" text,
			"queue" text, "payload" text, "exception" text, "failed_at" datetime default CURRENT_TIMESTAMP)`,
			`CREATE UNIQUE INDEX "failed_jobs_uuid_unique" on "failed_jobs" ("uuid")`)
	}
}

func testNullColumns(t *testing.T, driver string) {
	ctx := context.Background()
	base := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
	allowNulls(t, base, driver)
	s := reopen(t, base)
	good := fixture(1, "default", `App\Jobs\A`, "2026-11-30 10:00:00")
	ids := sqltest.InsertFailed(t, s, good)
	cols := []string{"connection", "queue", "payload", "exception", "failed_at"}
	byID := map[int64]string{}
	for i, col := range cols {
		f := fixture(10+i, "default", `App\Jobs\A`, "2026-11-30 10:00:00")
		id := sqltest.InsertFailed(t, s, f)[0]
		execAll(t, s, s.DB().Rebind(fmt.Sprintf("UPDATE failed_jobs SET %s = NULL WHERE id = %d", col, id)))
		byID[id] = col
	}
	ids = append(ids, sqltest.InsertFailed(t, s, fixture(2, "default", `App\Jobs\A`, "2026-11-30 11:00:00"))...)
	for _, full := range []bool{false, true} {
		rows := collect(t, s, triage.ScanParams{Full: full, BatchSize: 2})
		if len(rows) != 2+len(cols) {
			t.Fatalf("full %v: %d rows listed, want %d", full, len(rows), 2+len(cols))
		}
		for _, r := range rows {
			col, poison := byID[r.ID]
			switch {
			case !poison && len(r.Problems) != 0:
				t.Errorf("sound row %d has problems %v", r.ID, r.Problems)
			case poison && (len(r.Problems) != 1 || r.Problems[0].Column != col || r.Problems[0].Reason != "is NULL"):
				t.Errorf("row %d with NULL %s: problems %v", r.ID, col, r.Problems)
			case poison:
				j := triage.JobFromRow(r)
				if j.Problem != col+" is NULL" {
					t.Errorf("row %d: job problem %q", r.ID, j.Problem)
				}
			}
		}
	}
	for id := range byID {
		r, err := s.GetFailed(ctx, triage.Ref{ID: id})
		if err != nil || len(r.Problems) != 1 {
			t.Errorf("show row %d: %+v, %v", id, r, err)
		}
	}
	// retry: the rows with a NULL connection, queue or payload stay and are
	// named; the rest (NULL exception or failed_at too) go back.
	svc := &triage.Service{Store: s, Now: func() time.Time { return time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC) }, Location: time.UTC}
	res, err := svc.Retry(ctx, triage.RetryParams{All: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Retried != 4 || len(res.Skipped) != 3 {
		t.Fatalf("retry: %d retried, skipped %+v", res.Retried, res.Skipped)
	}
	for _, sk := range res.Skipped {
		var id int64
		for pid, col := range byID {
			if strings.Contains(sk.Reason, fmt.Sprintf("row %d ", pid)) {
				id = pid
				if !strings.Contains(sk.Reason, col+" is NULL") {
					t.Errorf("skip reason %q does not name column %s", sk.Reason, col)
				}
			}
		}
		if id == 0 || sk.Code != triage.SkipUnreadable {
			t.Errorf("skip %+v does not name a poison row", sk)
		}
	}
	if got := len(jobsRows(t, s)); got != 4 {
		t.Errorf("jobs has %d rows, want 4", got)
	}
	_ = ids
}

func testUnreadableFailedAt(t *testing.T, driver string) {
	ctx := context.Background()
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
	ids := sqltest.InsertFailed(t, s, fixture(1, "default", `App\Jobs\A`, "2026-11-30 10:00:00"),
		fixture(2, "default", `App\Jobs\A`, "2026-11-30 10:00:00"), fixture(3, "default", `App\Jobs\A`, "2026-11-30 11:00:00"))
	poison := ids[1]
	var want string
	switch driver {
	case "postgres":
		execAll(t, s, fmt.Sprintf("UPDATE failed_jobs SET failed_at = 'infinity' WHERE id = %d", poison))
		want = `"infinity" is not a time`
	case "mysql":
		// A lax sql_mode lets a zero date in, as old MySQL servers did.
		conn, err := s.DB().Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"SET SESSION sql_mode = ''", fmt.Sprintf("UPDATE failed_jobs SET failed_at = '0000-00-00 00:00:00' WHERE id = %d", poison)} {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		conn.Close()
		want = `"0000-00-00 00:00:00" is not a time`
	case "sqlite":
		execAll(t, s, fmt.Sprintf("UPDATE failed_jobs SET failed_at = 'yesterday-ish' WHERE id = %d", poison))
		want = `"yesterday-ish" is not a time`
	}
	rows := collect(t, s, triage.ScanParams{})
	if len(rows) != 3 {
		t.Fatalf("%d rows listed, want 3", len(rows))
	}
	for _, r := range rows {
		if r.ID == poison {
			if len(r.Problems) != 1 || r.Problems[0].Column != "failed_at" || r.Problems[0].Reason != want || !r.FailedAt.IsZero() {
				t.Errorf("poison row: problems %v, failed_at %v; want failed_at %s", r.Problems, r.FailedAt, want)
			}
		} else if len(r.Problems) != 0 || r.FailedAt.IsZero() {
			t.Errorf("sound row %d: %v %v", r.ID, r.Problems, r.FailedAt)
		}
	}
	// --since reads failed_at in its binary search over ids: an unreadable
	// one neither stops it nor hides the rows after it.
	got := idsOf(collect(t, s, triage.ScanParams{Filter: triage.Filter{Since: time.Date(2026, 11, 30, 10, 30, 0, 0, time.UTC)}}))
	if len(got) == 0 || got[0] != ids[2] {
		t.Errorf("since: %v, want %d first", got, ids[2])
	}
	// --group folds it in, with the times the readable rows give.
	svc := &triage.Service{Store: s, Now: func() time.Time { return time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC) }, Location: time.UTC}
	sigs, err := svc.Group(ctx, triage.GroupParams{})
	if err != nil || len(sigs) == 0 {
		t.Fatalf("group: %v, %v", sigs, err)
	}
	n := 0
	for _, g := range sigs {
		n += g.Count
		if g.FirstSeen.IsZero() && g.Count > 1 {
			t.Errorf("signature %s: first seen is the unreadable zero time", g.ID)
		}
	}
	if n != 3 {
		t.Errorf("group counted %d rows, want 3", n)
	}
	// retry: the job itself is intact, so it goes back with the others.
	res, err := svc.Retry(ctx, triage.RetryParams{All: true})
	if err != nil || res.Retried != 3 {
		t.Fatalf("retry: %+v, %v", res, err)
	}
}

func testQueueColumn(t *testing.T, driver string) {
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
	c, err := s.QueueColumn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := 255
	if driver == "sqlite" {
		want = 0 // SQLite enforces no length
	}
	if c.MaxChars != want || c.Table != "jobs" {
		t.Errorf("queue column %+v, want at most %d characters", c, want)
	}
	long := strings.Repeat("q", 256)
	if driver != "sqlite" && (c.Holds(long) || !c.Holds(long[:255]) || !c.Holds(strings.Repeat("ü", 255))) {
		t.Errorf("%+v holds the wrong names", c)
	}
	// A jobs table widened by its app holds what it declares.
	if driver != "sqlite" {
		q := "ALTER TABLE jobs ALTER COLUMN queue TYPE varchar(1000)"
		if driver == "mysql" {
			q = "ALTER TABLE jobs MODIFY queue varchar(1000) NOT NULL"
		}
		execAll(t, s, q)
		if c, err := reopen(t, s).QueueColumn(context.Background()); err != nil || c.MaxChars != 1000 {
			t.Errorf("widened column: %+v, %v", c, err)
		}
	}
}

// refuseQueue makes the jobs table refuse one queue name by a CHECK
// constraint: a row-specific refusal the queue-length check cannot see.
func refuseQueue(t *testing.T, s *sqlstore.Store, driver, queue string) {
	t.Helper()
	switch driver {
	case "postgres", "mysql":
		execAll(t, s, "ALTER TABLE jobs ADD CONSTRAINT jobs_no_poison CHECK (queue <> '"+queue+"')")
	case "sqlite":
		execAll(t, s, "DROP TABLE jobs",
			`CREATE TABLE "jobs" ("id" integer not null primary key autoincrement, "queue" varchar not null CHECK (queue <> '`+queue+`'),
			"payload" text not null, "attempts" integer not null, "reserved_at" integer, "available_at" integer not null, "created_at" integer not null)`)
	}
}

func testRefusedRowIsolated(t *testing.T, driver string) {
	ctx := context.Background()
	base := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
	refuseQueue(t, base, driver, "poison")
	s := reopen(t, base)
	var fx []sqltest.FailedFixture
	for i := 1; i <= 6; i++ {
		fx = append(fx, fixture(i, "default", `App\Jobs\A`, "2026-11-30 10:00:00"))
	}
	fx[1].Queue = "poison"
	ids := sqltest.InsertFailed(t, s, fx...)
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	// The store names the refused row and changes nothing.
	_, err := triagetest.MoveBatch(ctx, s, triage.BatchParams{Limit: 10, Now: now, AfterID: triage.FirstAfterID}, keepQueue, nil)
	var rej *triage.RejectedRows
	if !errors.As(err, &rej) || len(rej.Rows) != 1 || rej.Rows[0].ID != ids[1] || rej.Rows[0].Reason == "" {
		t.Fatalf("move with a refused row: %v", err)
	}
	if len(jobsRows(t, s)) != 0 || failedCount(t, s) != 6 {
		t.Fatal("a refused batch changed the tables")
	}
	// Edited payloads take the other insert path (COPY on PostgreSQL).
	_, err = triagetest.MoveBatch(ctx, s, triage.BatchParams{Limit: 10, Now: now, AfterID: triage.FirstAfterID}, func(r *triage.FailedRow) (triage.Move, bool) {
		return triage.Move{Queue: r.Queue, Payload: append(r.Payload[:len(r.Payload):len(r.Payload)], ' ')}, true
	}, nil)
	if !errors.As(err, &rej) || len(rej.Rows) != 1 || rej.Rows[0].ID != ids[1] {
		t.Fatalf("edited move with a refused row: %v", err)
	}
	// The service runs the batch again without it and names it.
	svc := &triage.Service{Store: s, Now: func() time.Time { return now }, Location: time.UTC}
	res, err := svc.Retry(ctx, triage.RetryParams{All: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Retried != 5 || len(res.Skipped) != 1 || res.Skipped[0].Code != triage.SkipRefused ||
		!strings.Contains(res.Skipped[0].Reason, fmt.Sprintf("row %d (uuid %s)", ids[1], *fx[1].UUID)) {
		t.Fatalf("retry: %d retried, skipped %+v", res.Retried, res.Skipped)
	}
	if len(jobsRows(t, s)) != 5 || failedCount(t, s) != 1 {
		t.Errorf("jobs %d, failed_jobs %d; want 5 and the refused 1", len(jobsRows(t, s)), failedCount(t, s))
	}
}

// insertWithID inserts a fixture under an explicit id.
func insertWithID(t *testing.T, s *sqlstore.Store, id int64, f sqltest.FailedFixture) {
	t.Helper()
	q := s.DB().Rebind("INSERT INTO failed_jobs (id, uuid, connection, queue, payload, exception, failed_at) VALUES (?, ?, ?, ?, ?, ?, ?)")
	if _, err := s.DB().Exec(q, id, *f.UUID, f.Connection, f.Queue, f.Payload, f.Exception, f.FailedAt); err != nil {
		t.Fatal(err)
	}
}

func testNegativeIDs(t *testing.T, driver string) {
	ctx := context.Background()
	base := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
	s := base
	if driver == "mysql" {
		// Laravel's MySQL id is unsigned; an app's own table may not be.
		execAll(t, base, "ALTER TABLE failed_jobs MODIFY id bigint NOT NULL AUTO_INCREMENT")
		s = reopen(t, base)
	}
	insertWithID(t, s, -7, fixture(1, "default", `App\Jobs\A`, "2026-11-01 10:00:00"))
	insertWithID(t, s, 0, fixture(2, "default", `App\Jobs\A`, "2026-11-01 10:00:00"))
	if driver == "mysql" {
		// id 0 is "next value" to MySQL unless NO_AUTO_VALUE_ON_ZERO.
		execAll(t, s, "DELETE FROM failed_jobs WHERE id > 0")
	}
	sqltest.InsertFailed(t, s, fixture(3, "default", `App\Jobs\A`, "2026-11-30 10:00:00"))
	total := failedCount(t, s)
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	svc := &triage.Service{Store: s, Now: func() time.Time { return now }, Location: time.UTC}
	// Listings page down past zero into the negative ids.
	all := idsOf(collect(t, s, triage.ScanParams{}))
	if len(all) != total || all[len(all)-1] != -7 {
		t.Fatalf("listing: %v", all)
	}
	equalIDs(t, "small batches", idsOf(collect(t, s, triage.ScanParams{BatchSize: 1})), all)
	var paged []int64
	cursor := ""
	for i := 0; i <= total; i++ {
		page, err := svc.List(ctx, triage.ListParams{Limit: 1, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range page.Jobs {
			paged = append(paged, j.RowID)
		}
		if cursor = page.Next; cursor == "" {
			break
		}
	}
	// A page that ends at id 0 goes on below it (the listing used to
	// stop there: a cursor at 0 read as "from the newest").
	equalIDs(t, "paged", paged, all)
	dry, err := svc.Retry(ctx, triage.RetryParams{All: true, DryRun: true})
	if err != nil || dry.Retried != total {
		t.Fatalf("dry retry all: %d of %d, %v", dry.Retried, total, err)
	}
	// prune walks the primary key from its lowest id too.
	n, err := triage.PruneTotal(s.Prune(ctx, triage.PruneParams{Before: time.Date(2026, 11, 15, 0, 0, 0, 0, time.UTC), DryRun: true}))
	if err != nil || n != int64(total-1) {
		t.Errorf("prune dry run counts %d, %v; want %d", n, err, total-1)
	}
	res, err := svc.Retry(ctx, triage.RetryParams{All: true})
	if err != nil || res.Retried != total || failedCount(t, s) != 0 || len(jobsRows(t, s)) != total {
		t.Fatalf("retry all: %d of %d, %v; %d left", res.Retried, total, err, failedCount(t, s))
	}
}

func testPruneAllSnapshot(t *testing.T, driver string) {
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
	var fx []sqltest.FailedFixture
	for i := 1; i <= 7; i++ {
		fx = append(fx, fixture(i, "a", `X`, "2026-11-30 10:00:00"))
	}
	sqltest.InsertFailed(t, s, fx...)
	var n int64
	var err error
	for b, berr := range s.Prune(context.Background(), triage.PruneParams{All: true, BatchSize: 3}) {
		if n, err = b.Total, berr; err == nil && n == 3 {
			// A failure arriving while the flush runs is kept.
			sqltest.InsertFailed(t, s, fixture(8, "a", `X`, "2026-11-30 10:00:01"))
		}
	}
	if err != nil || n != 7 || failedCount(t, s) != 1 {
		t.Fatalf("flush: deleted %d, %v; %d left, want the 1 that arrived", n, err, failedCount(t, s))
	}
}

// holdRows makes failed_jobs refuse to delete the rows on queue "held" by a
// trigger's error and those on queue "quiet" silently (PostgreSQL: a
// trigger returning NULL; SQLite: RAISE(IGNORE); MySQL has neither, so
// there a row another table references stands in), as a legal hold does.
func holdRows(t *testing.T, s *sqlstore.Store, driver string, quiet int64) {
	t.Helper()
	switch driver {
	case "postgres":
		execAll(t, s, `CREATE FUNCTION legal_hold() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN IF OLD.queue = 'held' THEN RAISE EXCEPTION 'row % is under legal hold', OLD.id; END IF;
			IF OLD.queue = 'quiet' THEN RETURN NULL; END IF; RETURN OLD; END $$`,
			"CREATE TRIGGER legal_hold BEFORE DELETE ON failed_jobs FOR EACH ROW EXECUTE FUNCTION legal_hold()")
	case "mysql":
		execAll(t, s, `CREATE TRIGGER legal_hold BEFORE DELETE ON failed_jobs FOR EACH ROW BEGIN
			IF OLD.queue = 'held' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'under legal hold'; END IF; END`,
			"CREATE TABLE holds (failed_id bigint unsigned NOT NULL, FOREIGN KEY (failed_id) REFERENCES failed_jobs (id))",
			fmt.Sprintf("INSERT INTO holds VALUES (%d)", quiet))
	case "sqlite":
		execAll(t, s, "CREATE TRIGGER legal_hold BEFORE DELETE ON failed_jobs WHEN OLD.queue = 'held' BEGIN SELECT RAISE(ABORT, 'under legal hold'); END",
			"CREATE TRIGGER quiet_hold BEFORE DELETE ON failed_jobs WHEN OLD.queue = 'quiet' BEGIN SELECT RAISE(IGNORE); END")
	}
}

// collectRaw is an archive in memory.
type collectRaw []triage.RawRow

func (c *collectRaw) Write(rows []triage.RawRow) error { *c = append(*c, rows...); return nil }

// testRefusedDeleteIsIsolated: a row whose delete failed_jobs refuses, by
// an error or silently, is skipped and named by retry (never queued, by
// the local jobs table or by a push elsewhere) and by forget (never
// archived), and neither stops the rest, nor a flush's range deletes.
func testRefusedDeleteIsolated(t *testing.T, driver string) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	// seed holds a row loudly and one quietly (holdRows), both in held.
	seed := func(t *testing.T) (s *sqlstore.Store, held map[int64]bool, quiet int64) {
		s = sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
		var fx []sqltest.FailedFixture
		for i := 1; i <= 7; i++ {
			fx = append(fx, fixture(i, "default", `App\Jobs\A`, "2026-11-30 10:00:00"))
		}
		fx[1].Queue, fx[4].Queue = "held", "quiet"
		ids := sqltest.InsertFailed(t, s, fx...)
		holdRows(t, s, driver, ids[4])
		return s, map[int64]bool{ids[1]: true, ids[4]: true}, ids[4]
	}
	checkSkips := func(t *testing.T, what string, skips []triage.Skip, held map[int64]bool) {
		t.Helper()
		named := 0
		for _, sk := range skips {
			for id := range held {
				if sk.Code == triage.SkipDeleteRefused && strings.Contains(sk.Reason, fmt.Sprintf("row %d ", id)) {
					named++
				}
			}
		}
		if len(skips) != len(held) || named != len(held) {
			t.Errorf("%s: skipped %+v, want rows %v named", what, skips, held)
		}
	}
	// retried retries all of s (into jobs, another database, unless it
	// is s): the held rows stay and are named, the rest reach jobs once.
	retried := func(t *testing.T, s, jobs *sqlstore.Store, held map[int64]bool) {
		t.Helper()
		svc := &triage.Service{Store: s, Now: func() time.Time { return now }, Location: time.UTC}
		if jobs != s {
			svc.Router = triage.NewRouter(nil, nil, &sqlstore.JobsBackend{Store: jobs})
		}
		moved := failedCount(t, s) - len(held)
		res, err := svc.Retry(ctx, triage.RetryParams{All: true})
		if err != nil || res.Retried != moved {
			t.Fatalf("retry: %d retried, %v; want %d", res.Retried, err, moved)
		}
		checkSkips(t, "retry", res.Skipped, held)
		if len(jobsRows(t, jobs)) != moved || failedCount(t, s) != len(held) {
			t.Errorf("jobs %d, failed_jobs %d; want %d and the %d held", len(jobsRows(t, jobs)), failedCount(t, s), moved, len(held))
		}
	}
	t.Run("retry", func(t *testing.T) {
		s, held, _ := seed(t)
		retried(t, s, s, held)
	})
	if driver != "mysql" {
		// Kept silently alone, the row used to be queued and left in
		// failed_jobs: twice.
		t.Run("retry silent", func(t *testing.T) {
			s, _, quiet := seed(t)
			execAll(t, s, "UPDATE failed_jobs SET queue = 'default' WHERE queue = 'held'")
			retried(t, s, s, map[int64]bool{quiet: true})
		})
	}
	if driver == "postgres" {
		// Row security whose delete policy leaves out a row: a user it
		// binds deletes nothing of it, silently.
		t.Run("row security", func(t *testing.T) {
			admin := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
			var fx []sqltest.FailedFixture
			for i := 1; i <= 4; i++ {
				fx = append(fx, fixture(i, "default", `App\Jobs\A`, "2026-11-30 10:00:00"))
			}
			fx[2].Queue = "quiet"
			ids := sqltest.InsertFailed(t, admin, fx...)
			user, password := readOnlyUser(t, admin, driver)
			execAll(t, admin, "GRANT ALL ON ALL TABLES IN SCHEMA public TO "+user, "GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO "+user,
				"ALTER TABLE failed_jobs ENABLE ROW LEVEL SECURITY",
				"CREATE POLICY keep_quiet ON failed_jobs FOR DELETE USING (queue <> 'quiet')")
			for _, cmd := range []string{"SELECT", "INSERT", "UPDATE"} {
				execAll(t, admin, "CREATE POLICY may_"+cmd+" ON failed_jobs FOR "+cmd+map[bool]string{true: " WITH CHECK (true)", false: " USING (true)"}[cmd == "INSERT"])
			}
			ep := admin.Endpoint()
			ep.User, ep.Password = user, password
			s, err := sqlstore.Open(ctx, sqlstore.Config{Endpoint: ep, Location: time.UTC})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			retried(t, s, s, map[int64]bool{ids[2]: true})
		})
	}
	t.Run("retry elsewhere", func(t *testing.T) {
		s, held, _ := seed(t)
		retried(t, s, sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC), held)
	})
	t.Run("forget", func(t *testing.T) {
		s, held, _ := seed(t)
		svc := &triage.Service{Store: s, Now: func() time.Time { return now }, Location: time.UTC}
		var arch collectRaw
		res, err := svc.Forget(ctx, triage.ForgetParams{All: true, Archive: &arch})
		if err != nil || res.Deleted != 5 || len(res.IDs) != 5 {
			t.Fatalf("forget: %+v, %v", res, err)
		}
		checkSkips(t, "forget", res.Skipped, held)
		for _, r := range arch {
			if held[r.ID] {
				t.Errorf("row %d was archived although it is still in failed_jobs", r.ID)
			}
		}
		if len(arch) != 5 || failedCount(t, s) != 2 {
			t.Errorf("archived %d, failed_jobs %d; want 5 and the 2 held", len(arch), failedCount(t, s))
		}
	})
	for _, archived := range []bool{false, true} {
		t.Run(fmt.Sprintf("flush archived %v", archived), func(t *testing.T) {
			s, held, _ := seed(t)
			p := triage.PruneParams{All: true, BatchSize: 3}
			var arch collectRaw
			if archived {
				p.Archive = &arch
			}
			var kept []triage.RejectedRow
			var n int64
			var err error
			for b, berr := range s.Prune(ctx, p) {
				n, err = b.Total, berr
				kept = append(kept, b.Kept...)
			}
			if err != nil || n != 5 || failedCount(t, s) != 2 {
				t.Fatalf("flush: deleted %d, %v; %d left, want the 2 held", n, err, failedCount(t, s))
			}
			// Both held rows are named, archived or not: the one refused by
			// an error and the one kept silently.
			want := 2
			if len(kept) != want || !held[kept[0].ID] || !held[kept[want-1].ID] || kept[0].Reason == "" {
				t.Errorf("flush kept %+v, want %d of the held rows %v named", kept, want, held)
			}
			if archived && len(arch) != 5 {
				t.Errorf("archived %d rows, want the 5 deleted", len(arch))
			}
		})
	}
}
