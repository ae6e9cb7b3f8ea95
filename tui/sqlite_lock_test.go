package tui

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

// lockTestRows is the size of the table the UI scans while the app writes:
// the 9,092 failures of issue 12, each with a 40-frame stack trace.
const lockTestRows = 9092

// TestRefreshNeverLocksOutTheAppsWriters runs the UI's reads the way
// --refresh does, back to back, on a real SQLite file in rollback-journal
// mode (Laravel's default, which jobtriage must not change), while the app
// inserts failed jobs. Every insert must succeed: a reader may make a
// writer wait for one short statement, never long enough to fail it.
//
//   - one writer with a 250 ms busy_timeout (far under PDO's 60 s): only a
//     reader whose statements hold the shared lock longer fails it;
//   - 40 concurrent writers with a 10 s busy_timeout, the shape of the
//     report; under a second or two the app's own writers lock each other
//     out with or without jobtriage (measured: up to 2 s alone), which is
//     SQLite's business, not the UI's.
func TestRefreshNeverLocksOutTheAppsWriters(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds and scans a SQLite file for seconds")
	}
	for _, tc := range []struct {
		name            string
		writers, each   int
		busy            time.Duration
		pause, minScans int // ms between an app's inserts; UI scans the run must overlap
	}{
		{name: "impatient app", writers: 1, each: 80, busy: 250 * time.Millisecond, pause: 10, minScans: 2},
		{name: "40 concurrent inserts", writers: 40, each: 5, busy: 10 * time.Second, pause: 20, minScans: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Each keyset batch of a scan is one statement, and on SQLite
			// its shared lock lasts until the statement ends: 2,000 rows
			// (the Group batch) held it for 100-250 ms, so an app insert
			// with a 250 ms busy_timeout failed; ScanFailed now caps a
			// SQLite batch (sqlstore's sqliteReadBatch).
			path, svc := lockTestDB(t)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var scans atomic.Int64
			readerDone := make(chan error, 1)
			go func() {
				// What one refresh reads: the signature scan and the
				// window count.
				for ctx.Err() == nil {
					for _, msg := range runAll(groupCmd(ctx, svc, triage.GroupParams{}, 1), windowCmd(ctx, svc, clock, time.Hour, 1)) {
						if g, ok := msg.(groupMsg); ok && g.err != nil && ctx.Err() == nil {
							readerDone <- g.err
							return
						}
					}
					scans.Add(1)
				}
				readerDone <- nil
			}()

			var failed, maxWait atomic.Int64
			var firstErr atomic.Value
			var wg sync.WaitGroup
			for w := 0; w < tc.writers; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					app, err := sql.Open("sqlite", fmt.Sprintf("file:%s?_pragma=busy_timeout(%d)", path, tc.busy.Milliseconds()))
					if err != nil {
						t.Error(err)
						return
					}
					defer app.Close()
					app.SetMaxOpenConns(1)
					for i := 0; i < tc.each; i++ {
						r := laravelRow(lockTestRows+1+w*tc.each+i, `App\Jobs\SendNewsletter`, "emails", `RuntimeException`, "smtp down", clock)
						start := time.Now()
						_, err := app.Exec(`INSERT INTO failed_jobs (uuid, connection, queue, payload, exception, failed_at) VALUES (?, ?, ?, ?, ?, ?)`,
							*r.UUID, r.Connection, r.Queue, r.Payload, r.Exception, r.FailedAt)
						if d := int64(time.Since(start)); d > maxWait.Load() {
							maxWait.Store(d)
						}
						if err != nil {
							failed.Add(1)
							firstErr.CompareAndSwap(nil, err.Error())
						}
						time.Sleep(time.Duration(tc.pause) * time.Millisecond)
					}
				}(w)
			}
			wg.Wait()
			// The writes must have overlapped the scans.
			for scans.Load() < int64(tc.minScans) {
				time.Sleep(10 * time.Millisecond)
			}
			cancel()
			if err := <-readerDone; err != nil {
				t.Fatalf("the UI's scan failed: %v", err)
			}
			if n := failed.Load(); n > 0 {
				t.Fatalf("%d of %d app inserts failed while the UI refreshed: %v", n, tc.writers*tc.each, firstErr.Load())
			}
			t.Logf("%d inserts, %d UI scans, longest insert %v", tc.writers*tc.each, scans.Load(), time.Duration(maxWait.Load()))
		})
	}
}

// lockTestDB is a Laravel-schema SQLite file of lockTestRows failures and
// the service the UI reads it through (opened as jobtriage tui opens it).
func lockTestDB(t *testing.T) (string, *triage.Service) {
	t.Helper()
	store := sqltest.OpenLaravel(t, "sqlite", sqlstore.SchemaLaravel8, time.UTC)
	db := store.DB()
	tx, err := db.Beginx()
	if err != nil {
		t.Fatal(err)
	}
	trace := strings.Repeat("\n#9 /srv/app/vendor/laravel/framework/src/Illuminate/Pipeline/Pipeline.php(128): Illuminate\\Pipeline\\Pipeline->Illuminate\\Pipeline\\{closure}()", 40)
	for i := 1; i <= lockTestRows; i++ {
		r := laravelRow(i, `App\Jobs\SyncInvoice`, "default", `RuntimeException`,
			"Invoice "+strconv.Itoa(i%50)+" rejected", clock.Add(-time.Duration(i)*time.Second))
		if _, err := tx.Exec(`INSERT INTO failed_jobs (uuid, connection, queue, payload, exception, failed_at) VALUES (?, ?, ?, ?, ?, ?)`,
			*r.UUID, r.Connection, r.Queue, r.Payload, r.Exception+trace, r.FailedAt); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	var path string
	if err := db.QueryRow(`SELECT file FROM pragma_database_list WHERE name = 'main'`).Scan(&path); err != nil {
		t.Fatal(err)
	}
	// The fixtures are WAL, where readers never block writers; Laravel
	// leaves SQLite in rollback-journal mode, where they can.
	var mode string
	if err := db.QueryRow(`PRAGMA journal_mode=DELETE`).Scan(&mode); err != nil || mode != "delete" {
		t.Fatalf("journal_mode = %q (%v), want Laravel's default, delete", mode, err)
	}
	return path, &triage.Service{Store: store, Now: fixedNow, Location: time.UTC}
}

// runAll runs cmds and the commands their messages chain (a streamed scan's
// next step) and returns every message.
func runAll(cmds ...tea.Cmd) []tea.Msg {
	var out []tea.Msg
	for len(cmds) > 0 {
		c := cmds[0]
		cmds = cmds[1:]
		if c == nil {
			continue
		}
		msg := c()
		out = append(out, msg)
		if g, ok := msg.(groupMsg); ok && g.more != nil {
			cmds = append(cmds, g.more)
		}
	}
	return out
}
