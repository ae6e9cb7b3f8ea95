package sqlstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

// TestReadOnlyUserGrantsMessages: prune and flush as a user that may only
// SELECT ended with the driver's raw "pq: permission denied … (42501)", and
// restore's refusal named the grants of retry and forget. Each operation
// says in one line which table it may not write to and what it needs, and
// nothing changes.
func TestReadOnlyUserGrantsMessages(t *testing.T) {
	for _, driver := range []string{"postgres", "mysql"} {
		t.Run(driver, func(t *testing.T) {
			ctx := context.Background()
			ep := sqltest.LaravelEndpoint(t, driver, sqlstore.SchemaLaravel8)
			admin, err := sqlstore.Open(ctx, sqlstore.Config{Endpoint: ep})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { admin.Close() })
			uuid := "5d7e55e5-0000-4000-8000-000000000001"
			sqltest.InsertFailed(t, admin, sqltest.FailedFixture{UUID: &uuid, Connection: "database", Queue: "default",
				Payload:   `{"uuid":"` + uuid + `","displayName":"App\\Jobs\\A","job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{}}`,
				Exception: "RuntimeException: boom", FailedAt: "2026-01-01 00:00:00"})
			user, password := readOnlyUser(t, admin, driver)
			ro := ep
			ro.User, ro.Password = user, password
			s, err := sqlstore.Open(ctx, sqlstore.Config{Endpoint: ro})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })

			prune := "prune and flush need SELECT and DELETE on failed_jobs"
			restored := "x"
			calls := map[string]struct {
				call func() error
				need string
			}{
				"prune": {func() error {
					_, err := triage.PruneTotal(s.Prune(ctx, triage.PruneParams{Before: time.Now()}))
					return err
				}, prune},
				"flush": {func() error { _, err := triage.PruneTotal(s.Prune(ctx, triage.PruneParams{All: true})); return err }, prune},
				"flush --archive": {func() error {
					_, err := triage.PruneTotal(s.Prune(ctx, triage.PruneParams{All: true, Archive: discard{}}))
					return err
				}, prune},
				"restore": {func() error {
					u := "5d7e55e5-0000-4000-8000-000000000002"
					_, err := s.RestoreRows(ctx, triage.RestoreParams{Rows: []triage.RawRow{{ID: 99, UUID: &u,
						Connection: &restored, Queue: &restored, Payload: &restored, Exception: &restored, FailedAt: ptr("2026-01-01 00:00:00")}}})
					return err
				}, "restore needs SELECT and INSERT on failed_jobs"},
			}
			for name, c := range calls {
				err := c.call()
				if err == nil {
					t.Errorf("%s as a read-only user succeeded", name)
					continue
				}
				msg := err.Error()
				for _, want := range []string{`user "` + user + `" may not write to failed_jobs`, c.need} {
					if !strings.Contains(msg, want) {
						t.Errorf("%s: %q does not say %q", name, msg, want)
					}
				}
				if strings.Contains(msg, "retry and forget") || strings.Contains(msg, "\n") || strings.Contains(msg, password) {
					t.Errorf("%s: %q names another operation's grants, spans lines or shows the password", name, msg)
				}
			}
			if n, err := admin.Count(ctx, triage.Filter{}); err != nil || n != 1 {
				t.Errorf("failed_jobs holds %d rows (%v), want the 1 it had", n, err)
			}
		})
	}
}

// discard is an archive that keeps nothing.
type discard struct{}

func (discard) Write([]triage.RawRow) error { return nil }

// readOnlyUser creates a login that may only SELECT from the test
// database's tables, and drops it when the test ends.
func readOnlyUser(t *testing.T, admin *sqlstore.Store, driver string) (user, password string) {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	user, password = "jt_ro_"+hex.EncodeToString(b), "ro-S3cret-"+hex.EncodeToString(b)
	setup := []string{
		"CREATE ROLE " + user + " LOGIN PASSWORD '" + password + "'",
		"GRANT SELECT ON ALL TABLES IN SCHEMA public TO " + user,
	}
	teardown := []string{"DROP OWNED BY " + user, "DROP ROLE " + user}
	if driver == "mysql" {
		setup = []string{
			"CREATE USER '" + user + "'@'%' IDENTIFIED BY '" + password + "'",
			"GRANT SELECT ON `" + admin.Endpoint().Database + "`.* TO '" + user + "'@'%'",
		}
		teardown = []string{"DROP USER '" + user + "'@'%'"}
	}
	t.Cleanup(func() {
		for _, q := range teardown {
			if _, err := admin.DB().Exec(q); err != nil {
				t.Errorf("drop the read-only user: %s: %v", q, err)
			}
		}
	})
	for _, q := range setup {
		if _, err := admin.DB().Exec(q); err != nil {
			t.Fatalf("create the read-only user: %s: %v", q, err)
		}
	}
	return user, password
}
