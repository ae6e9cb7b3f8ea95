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

// TestServerThatStopsAnsweringIsUnreachable: a MySQL/MariaDB server that
// stopped answering mid-command ended the command with the driver's
// "invalid connection" as a plain error (exit 1), and a server that went
// away did the same on both servers. Both are triage.ErrUnreachable (exit
// 5); the silence is named as such, after the statement timeout plus the
// margin.
func TestServerThatStopsAnsweringIsUnreachable(t *testing.T) {
	for _, driver := range []string{"postgres", "mysql"} {
		t.Run(driver, func(t *testing.T) { testLostServer(t, driver) })
	}
}

func testLostServer(t *testing.T, driver string) {
	ep := sqltest.LaravelEndpoint(t, driver, sqlstore.SchemaLaravel8)
	ctx := context.Background()

	const timeout = 200 * time.Millisecond
	open := func(t *testing.T, r *sqltest.Relay) *sqlstore.Store {
		t.Helper()
		via := r.Via(ep)
		s, err := sqlstore.Open(ctx, sqlstore.Config{Endpoint: via, StatementTimeout: timeout})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		uuid := fmt.Sprintf("00000000-0000-4000-8000-%012d", via.Port)
		sqltest.InsertFailed(t, s, sqltest.FailedFixture{UUID: &uuid, Connection: "database", Queue: "default",
			Payload:   `{"displayName":"App\\Jobs\\A","job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{}}`,
			Exception: "RuntimeException: boom", FailedAt: "2026-12-01 06:00:00"})
		return s
	}
	calls := map[string]func(*sqlstore.Store) error{
		"count": func(s *sqlstore.Store) error { _, err := s.Count(ctx, triage.Filter{}); return err },
		"scan": func(s *sqlstore.Store) error {
			return s.ScanFailed(ctx, triage.ScanParams{Limit: 10}, func(*triage.FailedRow) error { return nil })
		},
		"forget": func(s *sqlstore.Store) error {
			_, err := triagetest.DeleteBatch(ctx, s, triage.BatchParams{Limit: 10, Now: time.Now()}, func(*triage.FailedRow) bool { return true }, nil)
			return err
		},
	}
	for name, call := range calls {
		t.Run("silent/"+name, func(t *testing.T) {
			t.Parallel()
			r := sqltest.StartRelay(t, ep)
			s := open(t, r)
			r.Freeze()
			start := time.Now()
			err := call(s)
			took := time.Since(start)
			if !errors.Is(err, triage.ErrUnreachable) || !strings.Contains(err.Error(), "stopped answering") {
				t.Errorf("%s on a silent server: %v, want ErrUnreachable naming the silence", name, err)
			}
			if limit := timeout + 3*time.Second + 2*time.Second; took > limit {
				t.Errorf("%s on a silent server took %s, want under %s", name, took, limit)
			}
		})
		t.Run("gone/"+name, func(t *testing.T) {
			t.Parallel()
			r := sqltest.StartRelay(t, ep)
			s := open(t, r)
			r.Cut()
			err := call(s)
			if !errors.Is(err, triage.ErrUnreachable) {
				t.Errorf("%s on a server that went away: %v, want ErrUnreachable", name, err)
			}
		})
	}
	// A connection whose deadline fired is done: the rollback after the
	// failed statement does not wait for the silent server again (on
	// PostgreSQL it did, one more deadline per call, 24 s for a stated 8 s).
	t.Run("silent/rollback", func(t *testing.T) {
		t.Parallel()
		r := sqltest.StartRelay(t, ep)
		s := open(t, r)
		tx, err := s.DB().BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		r.Freeze()
		if _, err := tx.ExecContext(ctx, "SELECT 1"); err == nil {
			t.Fatal("a statement on a silent server succeeded")
		}
		start := time.Now()
		tx.Rollback() //nolint:errcheck // the connection is gone either way
		if took := time.Since(start); took > timeout+time.Second {
			t.Errorf("the rollback on a silent connection took %s: it waited for the server again", took)
		}
	})
}
