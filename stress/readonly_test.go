package stress

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

// readOnlyRows spans several of retry's batches (triage.WriteBatch rows
// each), so the first write fails with more batches still to come.
const readOnlyRows = 4 * triage.WriteBatch

// TestReadOnlyUserLosesNothing runs retry and forget as a database user
// that may only SELECT: both must stop at the first write with one clear
// line naming the table (and never the password), exit 1 ("any other
// error" in the README's table), and leave every job in failed_jobs.
func TestReadOnlyUserLosesNothing(t *testing.T) {
	requireStress(t)
	bin := buildJobtriage(t)
	for _, driver := range []string{"postgres", "mysql"} {
		t.Run(driver, func(t *testing.T) {
			start := time.Now()
			s := seed(t, driver, readOnlyRows)
			user, password := readOnlyUser(t, s)
			ep := s.ep
			ep.User, ep.Password = user, password
			dsn := sqltest.DSN(ep)
			for _, args := range [][]string{
				{"retry", "all", "--yes"},
				{"retry", backlogUUID(0), backlogUUID(1)},
				{"forget", "--queue", "default", "--yes"},
				{"forget", backlogUUID(2), "--yes"},
			} {
				p := bin.start(t, append(args, "--dsn", dsn)...)
				code := p.wait(t)
				stderr := p.stderr.String()
				t.Logf("%s: exit %d: %s", strings.Join(args, " "), code, strings.TrimSpace(stderr))
				if code != 1 {
					t.Errorf("%s as a read-only user exited %d, want 1", strings.Join(args, " "), code)
				}
				if !strings.HasPrefix(stderr, "jobtriage: ") || strings.Count(stderr, "\n") != 1 {
					t.Errorf("%s: stderr is not one line starting with \"jobtriage: \": %q", strings.Join(args, " "), stderr)
				}
				for _, want := range []string{`user "` + user + `" may not write to `, "need SELECT, UPDATE and DELETE on failed_jobs"} {
					if !strings.Contains(stderr, want) {
						t.Errorf("%s: stderr does not say %q: %q", strings.Join(args, " "), want, stderr)
					}
				}
				if strings.Contains(stderr+p.stdout.String(), password) {
					t.Errorf("%s: output shows the password: %q", strings.Join(args, " "), stderr)
				}
				if moved := s.census(t, "after "+strings.Join(args, " ")); moved != 0 {
					t.Fatalf("a read-only user moved %d jobs", moved)
				}
			}
			// A dry run changes nothing, so it needs no write privilege.
			for _, args := range [][]string{{"retry", "all", "--dry-run"}, {"forget", "--queue", "default", "--dry-run"}} {
				p := bin.start(t, append(args, "--dsn", dsn)...)
				if code := p.wait(t); code != 0 {
					t.Errorf("%s as a read-only user exited %d, want 0: %s", strings.Join(args, " "), code, p.stderr.String())
				}
				if want := "Would retry " + grouped(readOnlyRows) + " jobs"; args[0] == "retry" && !strings.Contains(p.stdout.String(), want) {
					t.Errorf("%s as a read-only user: stdout %q, want %q", strings.Join(args, " "), p.stdout.String(), want)
				}
			}
			if moved := s.census(t, "after the dry runs"); moved != 0 {
				t.Fatalf("a dry run moved %d jobs", moved)
			}
			s.payloadsIntact(t, "SELECT payload FROM failed_jobs")
			t.Logf("%s: total %s", driver, time.Since(start).Round(time.Millisecond))
		})
	}
}

// readOnlyUser creates a login that may SELECT from the scratch database's
// tables and nothing else, and drops it when the test ends.
func readOnlyUser(t *testing.T, s *seeded) (user, password string) {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	user = "jt_ro_" + hex.EncodeToString(b)
	password = "ro-S3cret-" + hex.EncodeToString(b)
	ctx := context.Background()
	var setup, teardown []string
	switch s.driver {
	case "postgres":
		setup = []string{
			"CREATE ROLE " + user + " LOGIN PASSWORD '" + password + "'",
			"GRANT SELECT ON ALL TABLES IN SCHEMA public TO " + user,
		}
		// DROP OWNED revokes its grants here and on the database itself.
		teardown = []string{"DROP OWNED BY " + user, "DROP ROLE " + user}
	case "mysql":
		setup = []string{
			"CREATE USER '" + user + "'@'%' IDENTIFIED BY '" + password + "'",
			"GRANT SELECT ON `" + s.ep.Database + "`.* TO '" + user + "'@'%'",
		}
		teardown = []string{"DROP USER '" + user + "'@'%'"}
	default:
		t.Fatalf("no read-only users on %s", s.driver)
	}
	t.Cleanup(func() {
		for _, q := range teardown {
			if _, err := s.db.ExecContext(ctx, q); err != nil {
				t.Errorf("drop read-only user: %s: %v", q, err)
			}
		}
	})
	for _, q := range setup {
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			t.Fatalf("create read-only user: %v", err)
		}
	}
	return user, password
}

// grouped writes n with thousands separators, as jobtriage's summaries do.
func grouped(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
