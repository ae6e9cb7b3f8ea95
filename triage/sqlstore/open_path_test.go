package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
)

// laravelSQLite makes a Laravel 8 SQLite database at path holding rows
// failed jobs.
func laravelSQLite(t *testing.T, path string, rows int) {
	t.Helper()
	ctx := context.Background()
	db, err := OpenRaw(ctx, Endpoint{Driver: "sqlite", Path: path})
	if err != nil {
		t.Fatalf("create %s: %v", path, err)
	}
	defer db.Close()
	if err := CreateLaravelSchema(ctx, db, "sqlite", SchemaLaravel8); err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		if _, err := db.Exec(`INSERT INTO failed_jobs (uuid, connection, queue, payload, exception, failed_at) VALUES (?, 'database', 'default', '{}', 'E', '2024-01-01 00:00:00')`,
			fmt.Sprintf("%s-%d", filepath.Base(path), i)); err != nil {
			t.Fatal(err)
		}
	}
}

// The file opened and changed is exactly the file named: SQLite decodes %XX
// in a file: URI and ends its path at '?' or '#', so "x%41.sqlite" once
// opened "xA.sqlite" and "h#1.sqlite" opened "h". Each named file sits beside
// the decoy the unescaped URI would have opened.
func TestSQLiteOpensExactlyTheFileNamed(t *testing.T) {
	for _, tc := range []struct{ named, decoy string }{
		{"x%41.sqlite", "xA.sqlite"},
		{"x%2541.sqlite", "x%41.sqlite"},
		{"h#1.sqlite", "h"},
		{"q?mode=memory.sqlite", "q"},
		{"sp ace%20.sqlite", "sp ace .sqlite"},
	} {
		t.Run(tc.named, func(t *testing.T) {
			for _, abs := range []bool{true, false} {
				dir := t.TempDir()
				named, decoy := filepath.Join(dir, tc.named), filepath.Join(dir, tc.decoy)
				laravelSQLite(t, decoy, 1)
				laravelSQLite(t, named, 3)
				path := named
				if !abs {
					t.Chdir(dir)
					path = tc.named
				}
				s, err := Open(context.Background(), Config{Endpoint: Endpoint{Driver: "sqlite", Path: path}})
				if err != nil {
					t.Fatalf("open %s: %v", path, err)
				}
				n, err := s.Count(context.Background(), triage.Filter{})
				if err != nil || n != 3 {
					t.Errorf("%s: count %d (%v), want the named file's 3", path, n, err)
				}
				if _, err := s.DB().Exec("DELETE FROM failed_jobs"); err != nil {
					t.Fatal(err)
				}
				s.Close()
				d, err := Open(context.Background(), Config{Endpoint: Endpoint{Driver: "sqlite", Path: decoy}})
				if err != nil {
					t.Fatal(err)
				}
				if n, err := d.Count(context.Background(), triage.Filter{}); err != nil || n != 1 {
					t.Errorf("decoy %s changed: %d rows (%v), want 1", tc.decoy, n, err)
				}
				d.Close()
			}
		})
	}
}

// A file removed between the existence check and the open is not created
// empty: the URI says mode=rw.
func TestSQLiteNeverCreatesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gone.sqlite")
	db, err := sql.Open("sqlite", sqliteDSN(Endpoint{Driver: "sqlite", Path: path}, Config{StatementTimeout: time.Second}))
	if err == nil {
		err = db.Ping()
		db.Close()
	}
	if err == nil {
		t.Errorf("opening a missing file succeeded")
	}
	if _, serr := os.Stat(path); !errors.Is(serr, os.ErrNotExist) {
		t.Errorf("the missing file was created (%v)", serr)
	}
}

// A server that goes silent (a frozen backend) fails a read after the
// client deadline with ErrServerSilent, which is triage.ErrUnreachable.
func TestDeadlineConnEndsASilentRead(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	c := &deadlineConn{Conn: a, idle: 50 * time.Millisecond}
	start := time.Now()
	_, err := c.Read(make([]byte, 1))
	if !errors.Is(err, ErrServerSilent) || !errors.Is(err, triage.ErrUnreachable) {
		t.Fatalf("read error %v, want ErrServerSilent", err)
	}
	if el := time.Since(start); el > time.Second {
		t.Errorf("read took %s", el)
	}
	// lib/pq marks a connection broken on a *net.OpError only, and the
	// connection fails every later call at once instead of waiting again.
	var op *net.OpError
	if !errors.As(err, &op) {
		t.Errorf("read error %T, want a *net.OpError", err)
	}
	c.idle = time.Hour
	wrote := make(chan error, 1)
	go func() { _, err := c.Write([]byte("x")); wrote <- err }()
	select {
	case err := <-wrote:
		if !errors.Is(err, ErrServerSilent) {
			t.Errorf("write after the silence: %v, want ErrServerSilent", err)
		}
	case <-time.After(time.Second):
		t.Errorf("a write after the silence waits for the server again")
	}
	// A deadline the driver set (connecting) is kept when it is sooner,
	// and its timeout stays the driver's own.
	c2 := &deadlineConn{Conn: a, idle: time.Hour}
	if err := c2.SetDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	_, err = c2.Read(make([]byte, 1))
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || errors.Is(err, ErrServerSilent) {
		t.Errorf("read error %v, want the driver's own timeout", err)
	}
	// Data that arrives in time is read.
	c3 := &deadlineConn{Conn: a, idle: time.Second}
	go b.Write([]byte("x")) //nolint:errcheck
	if _, err := io.ReadFull(c3, make([]byte, 1)); err != nil {
		t.Errorf("read: %v", err)
	}
}

// The MySQL driver's own log lines come out prefixed and on one line.
func TestMySQLLoggerPrefixes(t *testing.T) {
	var b strings.Builder
	mysqlLogger{w: &b}.Print("packets.go:37: unexpected EOF\n\x1b[2J")
	if got := b.String(); !strings.HasPrefix(got, "jobtriage: warning: mysql driver: packets.go:37") || strings.Count(got, "\n") != 1 || strings.Contains(got, "\x1b") {
		t.Errorf("log line %q", got)
	}
}

// A silence the store reports as the command's error is not also logged
// by the driver: one line, not two.
func TestMySQLLoggerLeavesSilenceToTheStore(t *testing.T) {
	var b strings.Builder
	mysqlLogger{w: &b}.Print("packets.go:58 ", silentError(time.Second))
	if b.Len() != 0 {
		t.Errorf("logged %q", b.String())
	}
}
