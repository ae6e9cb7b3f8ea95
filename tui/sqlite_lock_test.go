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

// lockTestRows is the size of the table the UI scans while the app writes,
// each row with a 40-frame stack trace: more rows than two of Group's scan
// batches, so that a read SQLite did not cap would hold the shared lock for
// a whole batch. What fails a writer is one statement's length, not the
// table's.
const lockTestRows = 4000

// TestRefreshNeverLocksOutTheAppsWriters runs the UI's reads the way
// --refresh does, back to back, on a real SQLite file in rollback-journal
// mode (Laravel's default, which jobtriage must not change), while the app
// inserts failed jobs. Every insert must succeed: a reader may make a
// writer wait for one short statement, never long enough to fail it.
//
//   - one writer with a short busy_timeout (far under PDO's 60 s): only a
//     reader whose statements hold the shared lock longer fails it;
//   - 40 concurrent writers with a long busy_timeout, the shape of the
//     report; under a second or two the app's own writers lock each other
//     out with or without jobtriage, which is SQLite's business, not the
//     UI's.
//
// Each writer inserts at least each rows, and goes on until the UI has
// finished minScans scans, so that the writes overlap whole scans however
// fast the machine is (40 writers starve the reader: there the writes
// overlap a scan under way, and one must have finished by the end).
func TestRefreshNeverLocksOutTheAppsWriters(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds and scans a SQLite file for seconds")
	}
	path, svc := lockTestDB(t)
	var inserts atomic.Int64 // rows the app inserted, for their ids
	for _, tc := range []struct {
		name            string
		writers, each   int
		busy            time.Duration
		pause, minScans int // ms between an app's inserts; UI scans the run must overlap
	}{
		{name: "impatient app", writers: 1, each: 80, busy: 250 * time.Millisecond, pause: 10, minScans: 1},
		{name: "40 concurrent inserts", writers: 40, each: 2, busy: 10 * time.Second, pause: 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Each keyset batch of a scan is one statement, and on SQLite
			// its shared lock lasts until the statement ends: a whole Group
			// batch held it for 100-250 ms, so an app insert with the
			// impatient busy_timeout failed; ScanFailed now caps a SQLite
			// batch (sqlstore's sqliteReadBatch).
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var scans, failed, maxWait atomic.Int64
			before := inserts.Load()
			readerDone := make(chan error, 1)
			readerGone := make(chan struct{})
			go func() {
				defer close(readerGone)
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
					for i := 0; i < tc.each || scans.Load() < int64(tc.minScans); i++ {
						select {
						case <-readerGone:
							return
						default:
						}
						r := laravelRow(lockTestRows+int(inserts.Add(1)), `App\Jobs\SendNewsletter`, "emails", `RuntimeException`, "smtp down", clock)
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
			for scans.Load() == 0 {
				time.Sleep(10 * time.Millisecond)
			}
			cancel()
			if err := <-readerDone; err != nil {
				t.Fatalf("the UI's scan failed: %v", err)
			}
			if n := failed.Load(); n > 0 {
				t.Fatalf("%d of %d app inserts failed while the UI refreshed: %v", n, inserts.Load()-before, firstErr.Load())
			}
			t.Logf("%d inserts, %d UI scans, longest insert %v", inserts.Load()-before, scans.Load(), time.Duration(maxWait.Load()))
		})
	}
}

// lockTestDB is a Laravel-schema SQLite file of lockTestRows failures and
// the service the UI reads it through (opened as jobtriage tui opens it).
// It is not sqltest.OpenLaravel: the signature index's agreement with a
// pass over the table, which that checks at cleanup, is the index's
// conformance suite's business, and takes most of a minute on this table.
func lockTestDB(t *testing.T) (string, *triage.Service) {
	t.Helper()
	ep := sqltest.LaravelEndpoint(t, "sqlite", sqlstore.SchemaLaravel8)
	store, err := sqlstore.Open(context.Background(), sqlstore.Config{Endpoint: ep, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
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
