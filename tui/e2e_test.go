package tui

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

// laravelRow is a failed_jobs row as Laravel 8 writes it for an object job.
func laravelRow(n int, class, queue, excClass, msg string, at time.Time) sqltest.FailedFixture {
	uuid := "5c0e" + strings.Repeat("0", 4) + "-1111-4222-8333-" + leftPad(strconv.Itoa(n), 12)
	ser := `O:` + strconv.Itoa(len(class)) + `:"` + class + `":2:{s:2:"id";i:` + strconv.Itoa(n) + `;s:5:"queue";s:` + strconv.Itoa(len(queue)) + `:"` + queue + `";}`
	esc := strings.ReplaceAll(class, `\`, `\\`)
	payload := `{"uuid":"` + uuid + `","displayName":"` + esc + `","job":"Illuminate\\Queue\\CallQueuedHandler@call","maxTries":null,"maxExceptions":null,"failOnTimeout":false,"backoff":null,"timeout":null,"retryUntil":null,"data":{"commandName":"` + esc + `","command":` + strconv.Quote(ser) + `},"attempts":1}`
	exc := excClass + ": " + msg + " in /srv/app/app/Jobs/X.php:" + strconv.Itoa(10+n) + "\nStack trace:\n" +
		"#0 /srv/app/vendor/laravel/framework/src/Illuminate/Container/BoundMethod.php(36): " + class + "->handle()\n#1 {main}"
	return sqltest.FailedFixture{UUID: &uuid, Connection: "database", Queue: queue, Payload: payload,
		Exception: exc, FailedAt: at.Format("2006-01-02 15:04:05")}
}

// seededService is a real triage.Service over a Laravel-schema SQLite file:
// 30 SyncInvoice failures and 2 ImportFeed ones.
func seededService(t *testing.T) *triage.Service {
	t.Helper()
	store := sqltest.OpenLaravel(t, "sqlite", sqlstore.SchemaLaravel8, time.UTC)
	var rows []sqltest.FailedFixture
	for i := 1; i <= 30; i++ {
		rows = append(rows, laravelRow(i, `App\Jobs\SyncInvoice`, "default", `RuntimeException`,
			"Invoice "+strconv.Itoa(4000+i)+" rejected by gateway", clock.Add(-time.Duration(60-i)*time.Minute)))
	}
	rows = append(rows,
		laravelRow(31, `App\Jobs\ImportFeed`, "imports", `ErrorException`, `Undefined array key "price"`, clock.Add(-20*time.Minute)),
		laravelRow(32, `App\Jobs\ImportFeed`, "imports", `ErrorException`, `Undefined array key "price"`, clock.Add(-10*time.Minute)))
	sqltest.InsertFailed(t, store, rows...)
	return &triage.Service{Store: store, Now: fixedNow, Location: time.UTC}
}

// waitForScreen bounds how long an end-to-end test waits for a screen. CI
// runs these under the race detector beside other packages' race-enabled
// tests on two cores, where 5 s once ran out (TestEndToEndMarkAndRetry).
const waitForScreen = 20 * time.Second

func waitFor(t *testing.T, tm *teatest.TestModel, want ...string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		for _, w := range want {
			if !bytes.Contains(b, []byte(w)) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(waitForScreen), teatest.WithCheckInterval(20*time.Millisecond))
}

func startProgram(t *testing.T, b Backend, a Actions) *teatest.TestModel {
	t.Helper()
	return startProgramWith(t, b, a, Options{})
}

// startProgramWith starts the program with opts over the end-to-end
// defaults (connection, clock, no colour, window and threshold).
func startProgramWith(t *testing.T, b Backend, a Actions, opts Options) *teatest.TestModel {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	opts.Connection, opts.Now, opts.NoColor, opts.Window, opts.Threshold = "sqlite:laravel.sqlite", fixedNow, true, time.Hour, 10
	m := New(ctx, b, a, opts, nil)
	return teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40))
}

func TestEndToEndDrillDownToDetail(t *testing.T) {
	svc := seededService(t)
	tm := startProgram(t, svc, nil)

	waitFor(t, tm, "32 failed", "App\\Jobs\\SyncInvoice", "RuntimeException: Invoice", "READ-ONLY")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitFor(t, tm, "FAILED AT", "5c0e0000-1111-4222-8333-000000000030")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitFor(t, tm, "[Summary]", "Failed job 5c0e0000-1111-4222-8333-000000000030")
	tm.Send(tea.KeyMsg{Type: tea.KeyTab})
	tm.Send(tea.KeyMsg{Type: tea.KeyTab})
	waitFor(t, tm, "[Command]", "App\\Jobs\\SyncInvoice {")
	tm.Send(tea.KeyMsg{Type: tea.KeyTab})
	waitFor(t, tm, "[Exception]", "at /srv/app/app/Jobs/X.php:40")
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(Model)
	if final.state != stateDetail || final.detail.err != nil || !final.detail.loaded {
		t.Fatalf("final state %s, detail loaded %v err %v", final.state, final.detail.loaded, final.detail.err)
	}
	if final.detail.d.Class != `App\Jobs\SyncInvoice` || final.detail.d.CommandText == "" {
		t.Fatalf("detail = %+v", final.detail.d.Job)
	}
}

func TestEndToEndFilterByClass(t *testing.T) {
	svc := seededService(t)
	tm := startProgram(t, svc, nil)
	waitFor(t, tm, "32 failed")
	tm.Type("/")
	tm.Send(tea.KeyMsg{Type: tea.KeyTab})
	tm.Send(tea.KeyMsg{Type: tea.KeyTab})
	tm.Type("ImportFeed")
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitFor(t, tm, "2 matching", "class ImportFeed")
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(Model)
	if len(final.sigs.items) != 1 || final.sigs.items[0].Class != `App\Jobs\ImportFeed` {
		t.Fatalf("signatures = %+v", final.sigs.items)
	}
}
