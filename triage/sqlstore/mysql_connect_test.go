package sqlstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

// TestMySQLLocalhostSocket: Host "localhost" means PDO's default Unix socket,
// so an account that exists only as 'user'@'localhost' works, as it does for
// Laravel; over TCP the same account is refused.
func TestMySQLLocalhostSocket(t *testing.T) {
	ep := sqltest.NewEndpoint(t, "mysql")
	ctx := context.Background()
	admin, err := sqlstore.OpenRaw(ctx, ep)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	user := "jt_sock_" + hex.EncodeToString(b)
	const password = `S0ck et!pw'"`
	if _, err := admin.Exec("CREATE USER '" + user + "'@'localhost' IDENTIFIED BY 'S0ck et!pw''\"'"); err != nil {
		t.Fatalf("create the localhost-only user: %v", err)
	}
	t.Cleanup(func() { _, _ = admin.Exec("DROP USER '" + user + "'@'localhost'") })
	if _, err := admin.Exec("GRANT ALL ON `" + ep.Database + "`.* TO '" + user + "'@'localhost'"); err != nil {
		t.Fatal(err)
	}
	if err := sqlstore.CreateLaravelSchema(ctx, admin, "mysql", sqlstore.SchemaLaravel8); err != nil {
		t.Fatal(err)
	}

	local := ep
	local.Host, local.User, local.Password = "localhost", user, password
	s, err := sqlstore.Open(ctx, sqlstore.Config{Endpoint: local})
	if err != nil {
		t.Fatalf("open as %s@localhost: %v", user, err)
	}
	defer s.Close()
	found := s.Endpoint().Socket
	if found == "" || !strings.Contains(s.Endpoint().Redacted(), "unix("+found+")") {
		t.Errorf("endpoint %s names no socket", s.Endpoint().Redacted())
	}
	var who string
	if err := s.DB().QueryRow("SELECT CURRENT_USER()").Scan(&who); err != nil || who != user+"@localhost" {
		t.Errorf("CURRENT_USER() = %q, %v", who, err)
	}

	// The same account over TCP is another account, which does not exist.
	tcp := local
	tcp.Host = "127.0.0.1"
	_, err = sqlstore.Open(ctx, sqlstore.Config{Endpoint: tcp})
	if !errors.Is(err, triage.ErrUnreachable) || !strings.Contains(err.Error(), "Access denied for user '"+user+"'") {
		t.Errorf("TCP as the localhost-only user: %v", err)
	}
	assertNoPassword(t, err, password)

	// An explicit socket that does not answer fails, or falls back to TCP
	// when allowed (as root, who exists for 127.0.0.1).
	gone := ep
	gone.Socket = filepath.Join(t.TempDir(), "mysqld.sock")
	if _, err := sqlstore.Open(ctx, sqlstore.Config{Endpoint: gone}); !errors.Is(err, triage.ErrUnreachable) {
		t.Errorf("dead socket: %v", err)
	}
	gone.SocketFallbackTCP = true
	s2, err := sqlstore.Open(ctx, sqlstore.Config{Endpoint: gone})
	if err != nil {
		t.Fatalf("dead socket with TCP fallback: %v", err)
	}
	s2.Close()
}

// TestMySQLLocalhostFallsBackToTCP: when no default socket answers,
// "localhost" is TCP 127.0.0.1.
func TestMySQLLocalhostFallsBackToTCP(t *testing.T) {
	ep := sqltest.NewEndpoint(t, "mysql")
	openLaravel(t, ep, sqlstore.SchemaLaravel8)
	saved := *sqlstore.DefaultMySQLSockets
	*sqlstore.DefaultMySQLSockets = []string{filepath.Join(t.TempDir(), "none.sock")}
	defer func() { *sqlstore.DefaultMySQLSockets = saved }()
	ep.Host = "localhost"
	s, err := sqlstore.Open(context.Background(), sqlstore.Config{Endpoint: ep})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.Endpoint(); got.Socket != "" || got.Host != "127.0.0.1" {
		t.Errorf("endpoint = %s, want TCP 127.0.0.1", got.Redacted())
	}
}

// TestMySQLSessionTimezone: failed_at is a TIMESTAMP, which MySQL converts
// from and to the session time_zone. Laravel sets the session zone from the
// connection's "timezone"; jobtriage must too, or it reads the wall-clock
// time in the server's zone.
func TestMySQLSessionTimezone(t *testing.T) {
	ep := sqltest.NewEndpoint(t, "mysql")
	ctx := context.Background()
	// The app writes in +02:00: Laravel's session zone is +02:00 and its
	// wall clock says 12:00.
	app := ep
	app.Timezone = "+02:00"
	raw, err := sqlstore.OpenRaw(ctx, app)
	if err != nil {
		t.Fatal(err)
	}
	if err := sqlstore.CreateLaravelSchema(ctx, raw, "mysql", sqlstore.SchemaLaravel8); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("SET time_zone = '+00:00'"); err != nil {
		t.Fatal(err)
	}
	raw.SetMaxOpenConns(1)
	// 10:00 UTC is 12:00 in the app's zone.
	if _, err := raw.Exec("INSERT INTO failed_jobs (uuid, connection, queue, payload, exception, failed_at) VALUES ('u1', 'database', 'default', '{}', 'E', '2026-11-30 10:00:00')"); err != nil {
		raw.Close()
		t.Fatal(err)
	}
	raw.Close()

	loc := time.FixedZone("+02:00", 2*3600)
	want := time.Date(2026, 11, 30, 12, 0, 0, 0, loc)
	read := func(ep sqlstore.Endpoint) time.Time {
		t.Helper()
		s, err := sqlstore.Open(ctx, sqlstore.Config{Endpoint: ep, Location: loc})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		rows := collect(t, s, triage.ScanParams{BatchSize: 10})
		if len(rows) != 1 {
			t.Fatalf("rows = %d", len(rows))
		}
		return rows[0].FailedAt
	}
	if got := read(app); !got.Equal(want) {
		t.Errorf("with timezone +02:00: failed_at = %v, want %v", got, want)
	}
	var serverZone string
	probe, err := sqlstore.OpenRaw(ctx, ep)
	if err != nil {
		t.Fatal(err)
	}
	_ = probe.QueryRow("SELECT TIMEDIFF(NOW(), UTC_TIMESTAMP())").Scan(&serverZone)
	probe.Close()
	if serverZone == "00:00:00" {
		// Without the setting the server's zone (UTC here) applies, and the
		// same row reads two hours early: the setting is what fixes it.
		if got := read(ep); !got.Equal(want.Add(-2 * time.Hour)) {
			t.Errorf("without timezone: failed_at = %v, want the server-zone reading %v", got, want.Add(-2*time.Hour))
		}
	}

	bad := ep
	bad.Timezone = "+02:00'; DROP TABLE failed_jobs; --"
	if _, err := sqlstore.Open(ctx, sqlstore.Config{Endpoint: bad}); err == nil || !strings.Contains(err.Error(), "not a MySQL time_zone value") {
		t.Errorf("hostile timezone: %v", err)
	}
}
