package sqlstore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/redact"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
	"github.com/jobtriage/jobtriage/triage/triagetest"
)

// postgresSocketDir is where the test server keeps its Unix socket;
// JOBTRIAGE_TEST_POSTGRES_SOCKET_DIR overrides it.
func postgresSocketDir(t *testing.T) string {
	dir := "/var/run/postgresql"
	if v := os.Getenv("JOBTRIAGE_TEST_POSTGRES_SOCKET_DIR"); v != "" {
		dir = v
	}
	if _, err := os.Stat(filepath.Join(dir, ".s.PGSQL.5432")); err != nil {
		if sqltest.Required() {
			t.Fatalf("no PostgreSQL socket in %s (set JOBTRIAGE_TEST_POSTGRES_SOCKET_DIR): %v", dir, err)
		}
		t.Skipf("no PostgreSQL socket in %s: %v", dir, err)
	}
	return dir
}

// awkwardPassword parses in no URL and needs every kind of libpq quoting.
// The test servers trust local connections, so PostgreSQL ignores it; what
// is tested is that the connection string carrying it is well formed.
const awkwardPassword = `S3cret,with space@/%'"\`

func openLaravel(t *testing.T, ep sqlstore.Endpoint, v sqlstore.SchemaVariant) {
	t.Helper()
	raw, err := sqlstore.OpenRaw(context.Background(), ep)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if err := sqlstore.CreateLaravelSchema(context.Background(), raw, ep.Driver, v); err != nil {
		t.Fatal(err)
	}
}

func TestPostgresSocketDirectory(t *testing.T) {
	dir := postgresSocketDir(t)
	ep := sqltest.NewEndpoint(t, "postgres")
	ep.Host, ep.Password = dir, awkwardPassword
	openLaravel(t, ep, sqlstore.SchemaLaravel8)
	ctx := context.Background()
	s, err := sqlstore.Open(ctx, sqlstore.Config{Endpoint: ep})
	if err != nil {
		t.Fatalf("open through the socket directory: %v", err)
	}
	defer s.Close()
	if got, want := s.Endpoint().Redacted(), "unix("+filepath.Join(dir, ".s.PGSQL.5432")+")"; !strings.Contains(got, want) {
		t.Errorf("Redacted() = %q, want it to name %s", got, want)
	}
	var addr *string
	if err := s.DB().QueryRow("SELECT inet_client_addr()::text").Scan(&addr); err != nil || addr != nil {
		t.Errorf("inet_client_addr = %v, %v; a Unix socket connection has none", addr, err)
	}

	// A wrong database through the socket: the error names it, and the
	// password is nowhere.
	bad := ep
	bad.Database = "jt_no_such_db"
	_, err = sqlstore.Open(ctx, sqlstore.Config{Endpoint: bad})
	if !errors.Is(err, triage.ErrUnreachable) || !strings.Contains(err.Error(), `database "jt_no_such_db" does not exist`) {
		t.Errorf("wrong database: %v", err)
	}
	assertNoPassword(t, err, awkwardPassword)

	// A socket directory nobody listens in fails, unless TCP may take over.
	gone := ep
	gone.Host = t.TempDir()
	_, err = sqlstore.Open(ctx, sqlstore.Config{Endpoint: gone})
	if !errors.Is(err, triage.ErrUnreachable) {
		t.Errorf("empty socket directory: %v", err)
	}
	assertNoPassword(t, err, awkwardPassword)
	gone.SocketFallbackTCP = true
	gone.Host = "127.0.0.1"
	gone.Socket = filepath.Join(t.TempDir(), "nothing")
	s2, err := sqlstore.Open(ctx, sqlstore.Config{Endpoint: gone})
	if err != nil {
		t.Fatalf("socket with TCP fallback: %v", err)
	}
	defer s2.Close()
	if s2.Endpoint().Socket != "" || s2.Endpoint().Host != "127.0.0.1" {
		t.Errorf("fallback endpoint = %s, want TCP", s2.Endpoint().Redacted())
	}
}

func TestPostgresSchemaAndSearchPath(t *testing.T) {
	ep := sqltest.NewEndpoint(t, "postgres")
	ctx := context.Background()
	raw, err := sqlstore.OpenRaw(ctx, ep)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`CREATE SCHEMA app`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	inApp := ep
	inApp.Schema = []string{"app"}
	openLaravel(t, inApp, sqlstore.SchemaLaravel8) // the DDL lands in app, through search_path

	n := 0
	check := func(name string, cfg sqlstore.Config) {
		t.Helper()
		n += 2
		s, err := sqlstore.Open(ctx, cfg)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		defer s.Close()
		if sc := s.Schema(); sc.IDMode != triage.IDModeUUID || !sc.HasJobs || !sc.HasBatches {
			t.Errorf("%s: schema %+v", name, sc)
		}
		ids := sqltest.InsertFailed(t, s, fixture(n-1, "default", `App\Jobs\A`, "2026-11-30 10:00:00"),
			fixture(n, "moved", `App\Jobs\A`, "2026-11-30 10:00:00"))
		rows := collect(t, s, triage.ScanParams{BatchSize: 10})
		if len(rows) == 0 || rows[0].ID != ids[1] {
			t.Errorf("%s: scan = %v, want id %d first", name, idsOf(rows), ids[1])
		}
		if res, err := triagetest.MoveBatch(ctx, s, triage.BatchParams{Limit: 10, Now: time.Now()}, keepOrMove, nil); err != nil || len(res.Done) != 2 {
			t.Errorf("%s: retry into the schema's jobs table: %+v, %v", name, res, err)
		}
	}
	check("search_path", sqlstore.Config{Endpoint: inApp})
	check("search_path list", sqlstore.Config{Endpoint: withSchema(ep, `"$user", missing, app`)})
	check("qualified names", sqlstore.Config{Endpoint: ep,
		FailedTable: "app.failed_jobs", JobsTable: "app.jobs", BatchesTable: "app.job_batches"})

	// The default search_path (public) has no failed_jobs: the message says
	// where it looked.
	_, err = sqlstore.Open(ctx, sqlstore.Config{Endpoint: withSchema(ep, "other")})
	if !errors.Is(err, triage.ErrMissingTable) || !strings.Contains(err.Error(), `search_path "other"`) {
		t.Errorf("wrong search_path: %v", err)
	}
	_, err = sqlstore.Open(ctx, sqlstore.Config{Endpoint: ep, FailedTable: "nosuch.failed_jobs"})
	if !errors.Is(err, triage.ErrMissingTable) || !strings.Contains(err.Error(), "nosuch.failed_jobs") {
		t.Errorf("missing schema: %v", err)
	}
}

// keepOrMove retries a job of queue "moved" to another queue, which the
// store sends (by COPY on PostgreSQL), and any other to its own, which the
// server copies: both ways into a jobs table that may be schema-qualified.
func keepOrMove(r *triage.FailedRow) (triage.Move, bool) {
	if r.Queue == "moved" {
		return triage.Move{Queue: "elsewhere", Payload: r.Payload}, true
	}
	return keepQueue(r)
}

func withSchema(ep sqlstore.Endpoint, schema ...string) sqlstore.Endpoint {
	ep.Schema = schema
	return ep
}

// TestQualifiedTableNames: schema.table and prefixed names are quoted for
// every dialect and work end to end; hostile ones are refused.
func TestQualifiedTableNames(t *testing.T) {
	for _, driver := range sqltest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
			ep := s.Endpoint()
			qualifier := map[string]string{"sqlite": "main", "postgres": "public", "mysql": ep.Database}[driver]
			ctx := context.Background()
			for _, stmt := range []string{"ALTER TABLE failed_jobs RENAME TO tenant1_failed_jobs", "ALTER TABLE jobs RENAME TO tenant1_jobs"} {
				if _, err := s.DB().Exec(stmt); err != nil {
					t.Fatal(err)
				}
			}
			q, err := sqlstore.Open(ctx, sqlstore.Config{Endpoint: ep,
				FailedTable: qualifier + ".tenant1_failed_jobs", JobsTable: qualifier + ".tenant1_jobs"})
			if err != nil {
				t.Fatal(err)
			}
			defer q.Close()
			sqltest.InsertFailed(t, q, fixture(1, "default", `App\Jobs\A`, "2026-11-30 10:00:00"),
				fixture(2, "moved", `App\Jobs\A`, "2026-11-30 10:00:00"))
			if rows := collect(t, q, triage.ScanParams{BatchSize: 10}); len(rows) != 2 {
				t.Errorf("scan = %d rows", len(rows))
			}
			if res, err := triagetest.MoveBatch(ctx, q, triage.BatchParams{Limit: 10, Now: time.Now()}, keepOrMove, nil); err != nil || len(res.Done) != 2 {
				t.Errorf("retry = %+v, %v", res, err)
			}
			for _, bad := range []string{"a.b.c", "app.", ".t", "app.t;drop", `app."t"`, "app.t-1"} {
				if _, err := sqlstore.Open(ctx, sqlstore.Config{Endpoint: ep, FailedTable: bad}); err == nil || !strings.Contains(err.Error(), "invalid table name") {
					t.Errorf("table %q: %v", bad, err)
				}
			}
		})
	}
}

// assertNoPassword: rule 3 of package redact applies to every password
// these tests use, so it must not survive anywhere, raw or escaped.
func assertNoPassword(t *testing.T, err error, pw string) {
	t.Helper()
	if err == nil {
		return
	}
	for _, f := range redact.Forms(pw) {
		if strings.Contains(err.Error(), f) {
			t.Errorf("error leaks the password (as %q): %v", f, err)
		}
	}
}

// TestConnectErrorsKeepWords: connection errors of the real servers, with
// passwords that are a letter, a common word or full of quoting, keep every
// word of the driver's message and lose the password.
func TestConnectErrorsKeepWords(t *testing.T) {
	for _, driver := range []string{"postgres", "mysql"} {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			base := sqltest.NewEndpoint(t, driver)
			for _, pw := range []string{"e", "password", awkwardPassword, "пароль123"} {
				cases := []struct {
					name  string
					edit  func(*sqlstore.Endpoint)
					words []string
				}{
					{"wrong port", func(ep *sqlstore.Endpoint) { ep.Port = 1 }, []string{"dial tcp 127.0.0.1:1: connect: connection refused"}},
					{"wrong user", func(ep *sqlstore.Endpoint) { ep.User = "jt_nosuchuser" }, map[string][]string{
						"postgres": {`pq: role "jt_nosuchuser" does not exist (28000)`},
						"mysql":    {`Error 1045 (28000): Access denied for user 'jt_nosuchuser'@'127.0.0.1' (using password: YES)`},
					}[driver]},
					{"wrong database", func(ep *sqlstore.Endpoint) { ep.Database = "jt_nosuchdb" }, map[string][]string{
						"postgres": {`pq: database "jt_nosuchdb" does not exist (3D000)`},
						// root has no password, so the wrong one fails first.
						"mysql": {`Error 1045 (28000): Access denied for user 'root'@'127.0.0.1' (using password: YES)`},
					}[driver]},
					{"bad host", func(ep *sqlstore.Endpoint) { ep.Host = "bad host.invalid" }, []string{"dial tcp: lookup bad host.invalid", "no such host"}},
				}
				for _, c := range cases {
					ep := base
					ep.Password = pw
					c.edit(&ep)
					ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
					_, err := sqlstore.Open(ctx, sqlstore.Config{Endpoint: ep, ConnectTimeout: 3 * time.Second})
					cancel()
					if !errors.Is(err, triage.ErrUnreachable) {
						t.Errorf("%s, password %q: %v, want ErrUnreachable", c.name, pw, err)
						continue
					}
					for _, w := range c.words {
						if !strings.Contains(err.Error(), w) {
							t.Errorf("%s, password %q: %q lost %q", c.name, pw, err, w)
						}
					}
					if strings.Contains(err.Error(), redact.Mask) && len(pw) < 4 {
						t.Errorf("%s: a one-letter password masked something: %v", c.name, err)
					}
					if pw == awkwardPassword || pw == "пароль123" {
						assertNoPassword(t, err, pw)
					}
				}
			}
		})
	}
}

// TestPostgresSessionSettings: the search_path and the connection's
// timezone reach the session, as Laravel's "set search_path" and "set time
// zone" statements put them there.
func TestPostgresSessionSettings(t *testing.T) {
	ep := sqltest.NewEndpoint(t, "postgres")
	openLaravel(t, ep, sqlstore.SchemaLaravel8)
	ep.Schema = []string{"public", `"$user"`}
	ep.Timezone = "Europe/Kyiv"
	s, err := sqlstore.Open(context.Background(), sqlstore.Config{Endpoint: ep})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var path, zone string
	if err := s.DB().QueryRow("SELECT current_setting('search_path'), current_setting('TimeZone')").Scan(&path, &zone); err != nil {
		t.Fatal(err)
	}
	if path != `"public", "$user"` || zone != "Europe/Kyiv" {
		t.Errorf("search_path = %q, TimeZone = %q", path, zone)
	}
}
