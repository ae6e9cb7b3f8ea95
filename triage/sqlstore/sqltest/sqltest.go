// Package sqltest gives tests an isolated, empty database on each dialect:
// SQLite always, PostgreSQL and MySQL/MariaDB when their DSNs are set.
//
// JOBTRIAGE_TEST_POSTGRES_DSN and JOBTRIAGE_TEST_MYSQL_DSN name a server
// where the test may create and drop databases; unset, they default to the
// local servers of a development machine (DefaultPostgresDSN,
// DefaultMySQLDSN). A server that cannot be reached skips the test — unless
// CI (or JOBTRIAGE_TEST_REQUIRE_DB) is set, where it is a failure, because a
// suite that silently skips its databases proves nothing.
package sqltest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
)

// Env names of the server DSNs.
const (
	PostgresEnv = "JOBTRIAGE_TEST_POSTGRES_DSN"
	MySQLEnv    = "JOBTRIAGE_TEST_MYSQL_DSN"
)

// Local defaults: trust auth on PostgreSQL, root without a password on
// MariaDB, as the project's machines run them.
const (
	DefaultPostgresDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	DefaultMySQLDSN    = "mysql://root@127.0.0.1:3306/test"
)

// Drivers lists the dialects every conformance test runs on.
func Drivers() []string { return []string{"sqlite", "postgres", "mysql"} }

// Required reports whether a missing server must fail the test.
func Required() bool { return os.Getenv("CI") != "" || os.Getenv("JOBTRIAGE_TEST_REQUIRE_DB") != "" }

// NewEndpoint creates an empty, isolated database for driver and drops it
// when the test ends. A server that cannot be reached skips the test, or
// fails it where Required.
func NewEndpoint(tb testing.TB, driver string) sqlstore.Endpoint {
	tb.Helper()
	ctx := context.Background()
	if driver == "sqlite" {
		path := filepath.Join(tb.TempDir(), "laravel.sqlite")
		db, err := sqlstore.OpenRaw(ctx, sqlstore.Endpoint{Driver: "sqlite", Path: path})
		if err == nil {
			_, err = db.Exec("PRAGMA journal_mode=WAL")
			db.Close()
		}
		if err != nil {
			tb.Fatal(err)
		}
		return sqlstore.Endpoint{Driver: "sqlite", Path: path}
	}
	env, raw, port := PostgresEnv, DefaultPostgresDSN, 5432
	if driver == "mysql" {
		env, raw, port = MySQLEnv, DefaultMySQLDSN, 3306
	} else if driver != "postgres" {
		tb.Fatalf("unknown driver %q", driver)
	}
	if v := os.Getenv(env); v != "" {
		raw = v
	}
	u, err := url.Parse(raw)
	if err != nil {
		tb.Fatalf("%s: %v", env, err)
	}
	if p := u.Port(); p != "" {
		port, _ = strconv.Atoi(p)
	}
	pw, _ := u.User.Password()
	admin := sqlstore.Endpoint{Driver: driver, Host: u.Hostname(), Port: port, User: u.User.Username(), Password: pw}
	if driver == "postgres" {
		admin.Database, admin.Params = strings.TrimPrefix(u.Path, "/"), map[string]string{}
		for k, v := range u.Query() {
			admin.Params[k] = v[0]
		}
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "jt_" + hex.EncodeToString(b)
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ep, err := sqlstore.EnsureDatabase(cctx, admin, name)
	if err != nil {
		if Required() {
			tb.Fatalf("%s at %s is unreachable or unusable (%s): %v", driver, u.Redacted(), env, err)
		}
		tb.Skipf("%s at %s unreachable (set %s): %v", driver, u.Redacted(), env, err)
	}
	tb.Cleanup(func() {
		if sd, err := sqlstore.OpenSeeder(ctx, admin); err == nil {
			_ = sd.DropDatabase(ctx, name)
			sd.Close()
		}
	})
	return ep
}

// DSN renders an endpoint in the form jobtriage's --dsn takes, for tests that
// run the command line.
func DSN(ep sqlstore.Endpoint) string {
	if ep.Driver == "sqlite" {
		return "sqlite:" + ep.Path
	}
	q := url.Values{}
	for k, v := range ep.Params {
		q.Set(k, v)
	}
	u := url.URL{Scheme: ep.Driver, Host: net.JoinHostPort(ep.Host, strconv.Itoa(ep.Port)), Path: "/" + ep.Database,
		RawQuery: q.Encode(), User: url.User(ep.User)}
	if ep.Password != "" {
		u.User = url.UserPassword(ep.User, ep.Password)
	}
	return u.String()
}

// LaravelEndpoint creates an isolated database with Laravel's schema and
// returns where it is, for tests that open it their own way.
func LaravelEndpoint(tb testing.TB, driver string, v sqlstore.SchemaVariant) sqlstore.Endpoint {
	tb.Helper()
	ep := NewEndpoint(tb, driver)
	ctx := context.Background()
	sd, err := sqlstore.OpenSeeder(ctx, ep)
	if err == nil {
		err = sd.CreateLaravelSchema(ctx, v)
		sd.Close()
	}
	if err != nil {
		tb.Fatal(err)
	}
	return ep
}

// OpenLaravel creates an isolated database with Laravel's schema and opens a
// store on it.
func OpenLaravel(tb testing.TB, driver string, v sqlstore.SchemaVariant, loc *time.Location) *sqlstore.Store {
	tb.Helper()
	ep := LaravelEndpoint(tb, driver, v)
	s, err := sqlstore.Open(context.Background(), sqlstore.Config{Endpoint: ep, Location: loc})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	// Whatever the test left in the table, the signature index must group
	// it as a pass over the table does: every conformance fixture, after
	// every write a test made.
	dir := tb.TempDir()
	tb.Cleanup(func() {
		if !tb.Failed() && !tb.Skipped() {
			IndexAgrees(tb, s, dir)
		}
	})
	return s
}

// FailedFixture is a failed_jobs row to insert; FailedAt is Laravel's
// wall-clock text ("2026-11-30 14:28:15").
type FailedFixture struct {
	UUID       *string // nil inserts NULL (or nothing in legacy tables)
	Connection string
	Queue      string
	Payload    string
	Exception  string
	FailedAt   string
}

// InsertFailed inserts rows as Laravel's failer->log does and returns their ids.
func InsertFailed(tb testing.TB, s *sqlstore.Store, rows ...FailedFixture) []int64 {
	tb.Helper()
	db := s.DB()
	withUUID := s.Schema().IDMode == triage.IDModeUUID
	ids := make([]int64, 0, len(rows))
	for _, r := range rows {
		cols, marks := "connection, queue, payload, exception, failed_at", "?, ?, ?, ?, ?"
		args := []any{r.Connection, r.Queue, r.Payload, r.Exception, r.FailedAt}
		if withUUID {
			var u any
			if r.UUID != nil {
				u = *r.UUID
			}
			cols, marks, args = "uuid, "+cols, "?, "+marks, append([]any{u}, args...)
		}
		q := "INSERT INTO " + s.Schema().FailedTable + " (" + cols + ") VALUES (" + marks + ")"
		var id int64
		if s.Schema().Dialect == "postgres" {
			if err := db.QueryRowx(db.Rebind(q+" RETURNING id"), args...).Scan(&id); err != nil {
				tb.Fatalf("insert failed job: %v", err)
			}
		} else {
			res, err := db.Exec(db.Rebind(q), args...)
			if err != nil {
				tb.Fatalf("insert failed job: %v", err)
			}
			id, _ = res.LastInsertId()
		}
		ids = append(ids, id)
	}
	return ids
}
