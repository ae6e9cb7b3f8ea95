package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
)

func TestNewCmdPause(t *testing.T) {
	p := parseWith(t, NewCmdPause, "database:emails,redis:default", "--for", "15m", "--dry-run", "--json")
	if o := p.opts; p.code != ExitOK || len(o.Queues) != 2 || o.Queues[1] != (triage.QueueRef{Connection: "redis", Queue: "default"}) ||
		o.For != 15*time.Minute || !o.DryRun || !o.JSON || o.Resume {
		t.Fatalf("exit %d %s %+v", p.code, p.err, o)
	}
	if p = parseWith(t, NewCmdPause, "--all", "-y"); p.code != ExitOK || !p.opts.All || !p.opts.Yes || len(p.opts.Queues) != 0 {
		t.Fatalf("--all: exit %d %s", p.code, p.err)
	}
	if p := parseWith(t, NewCmdResume, "database:emails"); p.code != ExitOK || !p.opts.Resume {
		t.Fatalf("resume: exit %d %s", p.code, p.err)
	}
	usageCases(t, NewCmdPause, map[string][]string{
		"or --all":                   {},
		"<connection>:<queue>":       {"emails"},
		"whole seconds, at least 1s": {"database:emails", "--for", "1.5s"},
		`invalid argument "soon"`:    {"database:emails", "--for", "soon"},
		"--for 0s: want":             {"database:emails", "--for", "0s"},
		"empty connection":           {":emails"},
	})
	usageCases(t, NewCmdResume, map[string][]string{"unknown flag: --for": {"database:emails", "--for", "1m"}})
}

// pauseApp is a Laravel 13.31 app on SQLite with the database cache
// store (13's defaults: CACHE_STORE database, prefix slug-cache-) and
// jobs on the emails queue.
func pauseApp(t *testing.T, h *harness) (db string) {
	t.Helper()
	s := openMonitorSQLite(t)
	raw := s.DB()
	if _, err := raw.Exec(`CREATE TABLE "cache" ("key" varchar NOT NULL PRIMARY KEY, "value" text NOT NULL, "expiration" integer NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"artisan":       "#!/usr/bin/env php\n",
		"composer.lock": `{"packages": [{"name": "laravel/framework", "version": "v13.31.0"}]}`,
		".env":          "APP_NAME=harness13\nDB_CONNECTION=sqlite\nDB_DATABASE=" + s.Endpoint().Path + "\nQUEUE_CONNECTION=database\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(h.dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return s.Endpoint().Path
}

func openMonitorSQLite(t *testing.T) *sqlstore.Store {
	t.Helper()
	_, s := monitorDB(t)
	return s
}

func cacheRows(t *testing.T, h *harness, path string) map[string]string {
	t.Helper()
	db, err := sqlstore.OpenRaw(t.Context(), sqlstore.Endpoint{Driver: "sqlite", Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT "key", value || ' ' || expiration FROM cache`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		out[k] = v
	}
	return out
}

// TestPauseRunDatabaseStore: from the app directory, pause writes the row
// artisan writes (key with 13's prefix, b:1;, now + ten years), asks for
// --yes without a terminal, writes nothing on --dry-run, audits, and
// monitor then shows the queue paused; resume deletes the row.
func TestPauseRunDatabaseStore(t *testing.T) {
	h := newHarness(t, false)
	path := pauseApp(t, h)
	logPath := filepath.Join(h.dir, "audit.log")
	key := "harness13-cache-illuminate:queue:paused:database:default"

	if code := h.run("pause", "database:default"); code != ExitCancelled || !strings.Contains(h.errOut.String(), "--yes") ||
		!strings.Contains(h.errOut.String(), "Pause database:default — app harness13 (production) · database cache store sqlite:"+path+" table cache") {
		t.Fatalf("no --yes: exit %d %s", code, h.errOut.String())
	}
	if code := h.run("pause", "database:default", "--dry-run", "--json"); code != ExitOK || len(cacheRows(t, h, path)) != 0 ||
		!strings.Contains(h.out.String(), `"stored_key": "`+key+`"`) || !strings.Contains(h.out.String(), `"dry_run": true`) {
		t.Fatalf("--dry-run: exit %d %s %s", code, h.out.String(), h.errOut.String())
	}
	if code := h.run("pause", "database:default", "--yes", "--audit-log", logPath); code != ExitOK {
		t.Fatalf("pause: exit %d %s", code, h.errOut.String())
	}
	want := map[string]string{key: "b:1; " + itoa64(testNow.Unix()+315360000)}
	if got := cacheRows(t, h, path); !mapsEqual(got, want) {
		t.Errorf("rows %v, want %v", got, want)
	}
	if !strings.Contains(h.out.String(), "Paused database:default (key "+key+") — app harness13 (production) · database cache store ") {
		t.Errorf("summary %q", h.out.String())
	}

	if code := h.run("monitor", "--json"); code != ExitOK {
		t.Fatalf("monitor: exit %d %s", code, h.errOut.String())
	}
	var doc struct {
		Queues []struct {
			Connection, Queue string
			Paused            bool
		}
	}
	if err := json.Unmarshal(h.out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	paused := map[string]bool{}
	for _, q := range doc.Queues {
		paused[q.Connection+":"+q.Queue] = q.Paused
	}
	if !paused["database:default"] || paused["database:emails"] {
		t.Errorf("monitor --json paused %v", paused)
	}
	if code := h.run("monitor"); code != ExitOK || !strings.Contains(h.out.String(), "database:default PAUSED") {
		t.Errorf("monitor table: exit %d\n%s", code, h.out.String())
	}
	if code := h.run("monitor", "--format", "prometheus"); code != ExitOK ||
		!strings.Contains(h.out.String(), `jobtriage_queue_paused{connection="database",queue="default"} 1`) {
		t.Errorf("prometheus: exit %d\n%s", code, h.out.String())
	}

	if code := h.run("resume", "database:default", "--yes", "--json", "--audit-log", logPath); code != ExitOK || !strings.Contains(h.out.String(), `"was_paused": true`) {
		t.Fatalf("resume: exit %d %s %s", code, h.out.String(), h.errOut.String())
	}
	if got := cacheRows(t, h, path); len(got) != 0 {
		t.Errorf("rows after resume: %v", got)
	}
	lines := auditLines(t, logPath)
	if len(lines) != 4 || lines[1].Command != "pause" || lines[1].Count != 1 || len(lines[1].IDs) != 1 || lines[1].IDs[0] != key || lines[3].Command != "resume" {
		t.Errorf("audit %+v", lines)
	}
}

// TestPauseRefusesStoresItCannotWrite: the file store (and memcached,
// dynamodb, array) is a one-line usage error naming artisan.
func TestPauseRefusesStoresItCannotWrite(t *testing.T) {
	h := newHarness(t, false)
	pauseApp(t, h)
	env, _ := os.ReadFile(filepath.Join(h.dir, ".env"))
	for _, store := range []string{"file", "memcached", "dynamodb", "array"} {
		if err := os.WriteFile(filepath.Join(h.dir, ".env"), append(append([]byte{}, env...), "CACHE_STORE="+store+"\n"...), 0o600); err != nil {
			t.Fatal(err)
		}
		code := h.run("pause", "database:default", "--yes")
		msg := strings.TrimSpace(h.errOut.String())
		if code != ExitUsage || !strings.Contains(msg, "php artisan queue:pause") || !strings.Contains(msg, `"`+store+`" driver`) || strings.Count(msg, "\n") != 0 {
			t.Errorf("%s: exit %d %q", store, code, msg)
		}
	}
}

// TestPauseRefusesOldLaravel: workers before 12.40 never read the keys.
func TestPauseRefusesOldLaravel(t *testing.T) {
	h := newHarness(t, false)
	pauseApp(t, h)
	if err := os.WriteFile(filepath.Join(h.dir, "composer.lock"), []byte(`{"packages": [{"name": "laravel/framework", "version": "v12.39.0"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if code := h.run("pause", "database:default", "--yes"); code != ExitUsage || !strings.Contains(h.errOut.String(), "12.40") {
		t.Errorf("exit %d %s", code, h.errOut.String())
	}
}

func itoa64(n int64) string { return i64(n) }

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestRetryNotesPausedQueue: a retry onto a paused queue says so on one
// stderr line; onto a running one it says nothing of pauses.
func TestRetryNotesPausedQueue(t *testing.T) {
	h := newHarness(t, false)
	pauseApp(t, h)
	if code := h.run("pause", "database:default", "--yes"); code != ExitOK {
		t.Fatalf("pause: exit %d %s", code, h.errOut.String())
	}
	if code := h.run("retry", "--queue", "emails", "--yes"); code != ExitOK || strings.Contains(h.errOut.String(), "paused") {
		t.Fatalf("retry emails: exit %d %s", code, h.errOut.String())
	}
	code := h.run("retry", "--queue", "default", "--yes")
	note := "note: database:default is paused: workers will not take the retried jobs until jobtriage resume (or php artisan queue:resume)\n"
	if code != ExitOK || strings.Count(h.errOut.String(), note) != 1 {
		t.Errorf("retry default: exit %d %q", code, h.errOut.String())
	}
}

// TestPauseForJSON: a timed pause writes now+D and says until when; an
// open-ended one has no until.
func TestPauseForJSON(t *testing.T) {
	h := newHarness(t, false)
	path := pauseApp(t, h)
	if code := h.run("pause", "database:emails", "--for", "15m", "--yes", "--json"); code != ExitOK {
		t.Fatalf("exit %d %s", code, h.errOut.String())
	}
	var doc map[string]any
	if err := json.Unmarshal(h.out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["schema_version"] != 1.0 || doc["action"] != "pause" || doc["until"] != rfc3339(testNow.Add(15*time.Minute)) {
		t.Errorf("doc %v", doc)
	}
	want := map[string]string{"harness13-cache-illuminate:queue:paused:database:emails": "b:1; " + itoa64(testNow.Unix()+900)}
	if got := cacheRows(t, h, path); !mapsEqual(got, want) {
		t.Errorf("rows %v, want %v", got, want)
	}
	if code := h.run("pause", "--all", "--yes", "--json"); code != ExitOK || strings.Contains(h.out.String(), "until") ||
		!strings.Contains(h.out.String(), `"queue": "*"`) {
		t.Errorf("--all: exit %d %s", code, h.out.String())
	}
}

// TestPauseOutsideAnApp: without an app there is no cache store to guess.
func TestPauseOutsideAnApp(t *testing.T) {
	h := newHarness(t, false)
	if code := h.run("pause", "database:emails", "--yes"); code != ExitUnreachable || !strings.Contains(h.errOut.String(), "not inside a Laravel app") {
		t.Errorf("exit %d %s", code, h.errOut.String())
	}
}
