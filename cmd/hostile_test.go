package cmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jobtriage/jobtriage/triage/sanitize"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

// The hostile corpus: text a job's author (or an attacker who
// can make a job fail) controls, in every column jobtriage prints.
var (
	// hostileTexts are the individual attacks; hostileText joins them.
	hostileTexts = []string{
		"\x1b]52;c;ZXZpbA==\x07",    // OSC 52: write the clipboard
		"\x1b[2J\x1b[H",             // clear the screen, cursor home
		"\x1b]0;pwned\x1b\\",        // window title, ST-terminated
		"nul\x00byte",               // NUL
		"\u202eevil\u202c",          // bidi override
		"bad\xff\xfeutf8\xc3",       // invalid UTF-8, a truncated sequence last
		"two\nlines\r\nover\rtyped", // line breaks and a lone CR
		"c1\u009b31mcsi",            // C1 CSI as UTF-8
		"del\x7f bell\x07",          // DEL and BEL
		"zero\u200bwidth\U000e0041", // zero-width and tag characters
	}
	hostileText = strings.Join(hostileTexts, " ")
	// hostileQueue is shorter: queue columns are varchar(255).
	hostileQueue = "q\x1b]52;c;ZXZpbA==\x07\x1b[2J\u202e\x00\xff\nx\u009b"
)

// storable is what driver can hold in a text column: PostgreSQL refuses NUL
// and invalid UTF-8, MySQL/MariaDB's utf8mb4 refuses invalid UTF-8; SQLite
// keeps every byte.
func storable(driver, s string) string {
	switch driver {
	case "postgres":
		return strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", ""), "")
	case "mysql":
		return strings.ToValidUTF8(s, "")
	}
	return s
}

// jsonText quotes s as PHP's json_encode would with
// JSON_UNESCAPED_UNICODE, except that bytes that are not UTF-8 are kept raw
// (json_encode refuses them; a row edited by hand or another writer may
// hold them).
func jsonText(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\' || c == '/':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20:
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// phpString is s as PHP serialize() writes a string.
func phpString(s string) string {
	return "s:" + strconv.Itoa(len(s)) + `:"` + s + `";`
}

// hostilePayload is a Laravel payload whose displayName, command and tags
// carry text.
func hostilePayload(uuid, displayName, text string) string {
	command := `O:16:"App\Jobs\Hostile":2:{s:4:"text";` + phpString(text) + `s:5:"queue";` + phpString(text) + `}`
	return `{"uuid":` + jsonText(uuid) + `,"displayName":` + jsonText(displayName) +
		`,"job":"Illuminate\\Queue\\CallQueuedHandler@call","maxTries":null,"maxExceptions":null,"failOnTimeout":false,` +
		`"backoff":` + jsonText(text) + `,"timeout":null,"retryUntil":null,"tags":[` + jsonText(text) + `],` +
		`"data":{"commandName":` + jsonText(displayName) + `,"command":` + jsonText(command) + `}}`
}

// hostileException is a PHP exception text with a chain, hostile in its
// class, message, file and frames.
func hostileException(text string) string {
	return "App\\Exceptions\\Boom" + text + ": " + text + " in /var/www/app/" + text + ".php:12\n" +
		"Stack trace:\n#0 /var/www/app/vendor/x" + text + ".php(7): App\\Jobs\\Hostile->handle()\n#1 {main}\n\n" +
		"Next RuntimeException: outer " + text + " in /var/www/app/app/Jobs/Hostile.php:3\nStack trace:\n#0 {main}"
}

// seedHostile makes a Laravel database on driver holding the corpus and
// returns its DSN and the failed rows' ids.
func seedHostile(t *testing.T, driver string) (string, []int64) {
	t.Helper()
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
	st := func(v string) string { return storable(driver, v) }
	text, queue := st(hostileText), st(hostileQueue)
	uuid := func(i int) *string { u := fmt.Sprintf("00000000-0000-4000-8000-%012d", i); return &u }
	exc := st(hostileException(hostileText))
	deep := `{"uuid":"00000000-0000-4000-8000-000000000006","displayName":"App\\Jobs\\Deep","job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"App\\Jobs\\Deep","nest":` +
		strings.Repeat("[", 10050) + strings.Repeat("]", 10050) + `}}`
	dup := `{"uuid":"00000000-0000-4000-8000-000000000007","displayName":"App\\Jobs\\First","displayName":` + jsonText(text) +
		`,"job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"App\\Jobs\\X","command":"O:10:\"App\\Jobs\\X\":0:{}"}}`
	hostileUUID := st("e\x1b[2J\u202e\xff")
	ids := sqltest.InsertFailed(t, s,
		// A database-queue job: hostile queue, class, command, exception.
		sqltest.FailedFixture{UUID: uuid(1), Connection: "database", Queue: queue,
			Payload: st(hostilePayload(*uuid(1), text, text)), Exception: exc, FailedAt: "2026-11-30 10:00:00"},
		// A hostile connection name: retry skips it with a reason.
		sqltest.FailedFixture{UUID: uuid(2), Connection: st("redis" + hostileText), Queue: "default",
			Payload: st(hostilePayload(*uuid(2), `App\Jobs\Plain`, text)), Exception: exc, FailedAt: "2026-11-30 10:10:00"},
		// A payload that is not JSON at all.
		sqltest.FailedFixture{UUID: uuid(3), Connection: "database", Queue: "default",
			Payload: text, Exception: exc, FailedAt: "2026-11-30 10:20:00"},
		// A serialized command with the count that overflowed phpser.
		sqltest.FailedFixture{UUID: uuid(4), Connection: "database", Queue: "default",
			Payload:   `{"uuid":"00000000-0000-4000-8000-000000000004","displayName":"App\\Jobs\\Crafted","job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"App\\Jobs\\Crafted","command":"O:8:\"App\\Jobs\":3074457345618258603:{s:1:\"a\";N;}"}}`,
			Exception: exc, FailedAt: "2026-11-30 10:30:00"},
		// A hostile uuid.
		sqltest.FailedFixture{UUID: &hostileUUID, Connection: "database", Queue: "default",
			Payload: st(hostilePayload(hostileUUID, text, "x")), Exception: exc, FailedAt: "2026-11-30 10:40:00"},
		// JSON nested deeper than encoding/json accepts.
		sqltest.FailedFixture{UUID: uuid(6), Connection: "database", Queue: "default",
			Payload: deep, Exception: "RuntimeException: deep in /a.php:1\nStack trace:\n#0 {main}", FailedAt: "2026-11-30 10:50:00"},
		// Duplicate displayName keys, the last hostile.
		sqltest.FailedFixture{UUID: uuid(7), Connection: "database", Queue: queue,
			Payload: dup, Exception: exc, FailedAt: "2026-11-30 11:00:00"},
	)
	// Queued jobs on a hostile queue, for monitor.
	db := s.DB()
	for _, q := range []string{queue, "default"} {
		if _, err := db.Exec(db.Rebind("INSERT INTO "+s.Schema().JobsTable+" (queue, payload, attempts, reserved_at, available_at, created_at) VALUES (?, ?, 0, NULL, ?, ?)"),
			q, st(hostilePayload(*uuid(9), text, text)), testNow.Unix()-60, testNow.Unix()-60); err != nil {
			t.Fatal(err)
		}
	}
	return sqltest.DSN(s.Endpoint()), ids
}

// outputKind says how a command's stdout must parse.
type outputKind int

const (
	textOut   outputKind = iota
	jsonOut              // one JSON document
	ndjsonOut            // one JSON document per line
)

// checkHostileOutput fails when out or errOut holds anything a terminal
// would act on, or when JSON output does not parse.
func checkHostileOutput(t *testing.T, name string, kind outputKind, out, errOut []byte) {
	t.Helper()
	for _, s := range []struct {
		stream string
		b      []byte
	}{{"stdout", out}, {"stderr", errOut}} {
		if r, at, ok := sanitize.Inert(string(s.b)); !ok {
			lo, hi := max(at-40, 0), min(at+40, len(s.b))
			t.Errorf("%s: %s holds %U at byte %d: …%q…", name, s.stream, r, at, s.b[lo:hi])
		}
	}
	switch {
	case kind == jsonOut:
		if !json.Valid(out) || !utf8.Valid(out) {
			t.Errorf("%s: stdout is not valid JSON in UTF-8:\n%.2000s", name, out)
		}
	case kind == ndjsonOut:
		sc := bufio.NewScanner(bytes.NewReader(out))
		sc.Buffer(nil, 64<<20)
		for n := 1; sc.Scan(); n++ {
			if !json.Valid(sc.Bytes()) || !utf8.Valid(sc.Bytes()) {
				t.Errorf("%s: line %d is not valid JSON in UTF-8: %.500q", name, n, sc.Bytes())
			}
		}
		if err := sc.Err(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestHostileRowsNeverReachTheTerminalRaw is the proof that the hostile
// corpus, on all three databases, through every command and output format
// run as the command line runs them, piped and on a terminal. Nothing may
// panic, no raw control or invisible character may reach stdout or stderr,
// and JSON output must parse. Exit codes are the commands' own (a skip is
// 7, an unhealthy monitor 3, …); what is pinned here is the output.
func TestHostileRowsNeverReachTheTerminalRaw(t *testing.T) {
	for _, driver := range sqltest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			dsn, ids := seedHostile(t, driver)
			id := func(i int) string { return strconv.FormatInt(ids[i], 10) }
			readOnly := []struct {
				args []string
				kind outputKind
				want string // a fragment stdout must hold: the text got through, escaped
			}{
				{[]string{"failed"}, textOut, `\x1b]52;c;ZXZpbA==\x07`},
				{[]string{"failed", "--limit", "0"}, textOut, `\x1b[2J`},
				{[]string{"failed", "--json"}, jsonOut, `\u001b]52`},
				{[]string{"failed", "--json", "--full"}, jsonOut, ""},
				{[]string{"failed", "--json", "--limit", "0", "--full"}, jsonOut, ""},
				{[]string{"failed", "--ndjson"}, ndjsonOut, ""},
				{[]string{"failed", "--ndjson", "--full"}, ndjsonOut, ""},
				{[]string{"failed", "--group"}, textOut, ""},
				{[]string{"failed", "--group", "--json"}, jsonOut, ""},
				{[]string{"failed", "--queue", storable(driver, hostileQueue)}, textOut, ""},
				{[]string{"retry", "all", "--dry-run"}, textOut, "by queue: "},
				{[]string{"retry", "all", "--dry-run", "--json"}, jsonOut, ""},
				{[]string{"forget", "--queue", "default", "--dry-run"}, textOut, ""},
				{[]string{"flush", "--dry-run"}, textOut, ""},
				{[]string{"prune", "--hours", "1", "--dry-run", "--json"}, jsonOut, ""},
				{[]string{"monitor"}, textOut, ""},
				{[]string{"monitor", "--json"}, jsonOut, ""},
				{[]string{"monitor", "--format", "prometheus"}, textOut, ""},
				{[]string{"doctor"}, textOut, ""},
				{[]string{"doctor", "--json"}, jsonOut, ""},
			}
			for i := range ids {
				readOnly = append(readOnly,
					struct {
						args []string
						kind outputKind
						want string
					}{[]string{"show", id(i)}, textOut, ""},
					struct {
						args []string
						kind outputKind
						want string
					}{[]string{"show", id(i), "--json"}, jsonOut, ""})
			}
			for _, tty := range []bool{false, true} {
				h := newHarness(t, tty)
				for _, c := range readOnly {
					name := fmt.Sprintf("%s tty=%v", strings.Join(c.args, " "), tty)
					code := h.run(append(c.args, "--dsn", dsn)...)
					if code == ExitUsage {
						t.Errorf("%s: usage error: %s", name, h.errOut.String())
					}
					checkHostileOutput(t, name, c.kind, h.out.Bytes(), h.errOut.Bytes())
					if c.want != "" && !strings.Contains(h.out.String(), c.want) {
						t.Errorf("%s: stdout lacks %q (exit %d):\n%.3000s\nstderr: %s", name, c.want, code, h.out.String(), h.errOut.String())
					}
				}
			}

			// monitor --watch: its alert lines carry the class, message and
			// queue; it runs until its context ends.
			for _, c := range []struct {
				args []string
				kind outputKind
			}{
				{[]string{"monitor", "--watch", "--interval", "1s", "--max-failed", "1", "--window", "168h", "--alert-per", "queue", "--alert-per", "class"}, textOut},
				{[]string{"monitor", "--watch", "--json", "--interval", "1s", "--max-failed", "1", "--window", "168h", "--alert-per", "signature"}, ndjsonOut},
			} {
				h := newHarness(t, false)
				ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
				code := Run(ctx, h.f, append(c.args, "--dsn", dsn))
				cancel()
				name := strings.Join(c.args[:3], " ")
				if code == ExitUsage || h.out.Len() == 0 {
					t.Errorf("%s: exit %d, stdout %q, stderr %s", name, code, h.out.String(), h.errOut.String())
				}
				checkHostileOutput(t, name, c.kind, h.out.Bytes(), h.errOut.Bytes())
			}

			// show --json of the deep payload prints it as text, with a note.
			h := newHarness(t, false)
			h.run("show", id(5), "--json", "--dsn", dsn)
			if !strings.Contains(h.out.String(), `"payload_note"`) {
				t.Errorf("show --json of a payload nested 10050 levels: %.300s… stderr %s", h.out.String(), h.errOut.String())
			}

			// The writes, each on a fresh copy of the corpus.
			for _, c := range []struct {
				args []string
				kind outputKind
			}{
				{[]string{"retry", "all", "--yes"}, textOut},
				{[]string{"retry", "all", "--yes", "--json"}, jsonOut},
				{[]string{"retry", "--queue", storable(driver, hostileQueue), "--yes"}, textOut},
				{[]string{"forget", "--queue", "default", "--yes"}, textOut},
				{[]string{"forget", "--queue", "default", "--yes", "--json"}, jsonOut},
				{[]string{"prune", "--hours", "1", "--yes"}, textOut},
				{[]string{"flush", "--yes", "--json"}, jsonOut},
			} {
				dsn, ids := seedHostile(t, driver)
				name := strings.Join(c.args, " ")
				h := newHarness(t, false)
				code := h.run(append(c.args, "--dsn", dsn)...)
				if code == ExitUsage || code == ExitError {
					t.Errorf("%s: exit %d: %s", name, code, h.errOut.String())
				}
				checkHostileOutput(t, name, c.kind, h.out.Bytes(), h.errOut.Bytes())
				// Ids one by one, as an operator copies them.
				if c.args[0] == "retry" || c.args[0] == "forget" {
					for i := range ids {
						args := []string{c.args[0], strconv.FormatInt(ids[i], 10), "--yes", "--dsn", dsn}
						if c.kind == jsonOut {
							args = append(args, "--json")
						}
						h.run(args...)
						checkHostileOutput(t, strings.Join(args[:2], " "), c.kind, h.out.Bytes(), h.errOut.Bytes())
					}
				}
			}
		})
	}
}

// TestLongQueueDoesNotSqueezeTheTable: on a terminal, one queue
// name of 300 characters took the width of every row, so each class was cut
// to a few cells. Columns other than the flexible one are capped, and the
// long name is cut with "…".
func TestLongQueueDoesNotSqueezeTheTable(t *testing.T) {
	s := sqltest.OpenLaravel(t, "sqlite", sqlstore.SchemaLaravel8, time.UTC)
	long := strings.Repeat("very-long-queue-", 20)
	class := `App\Jobs\ReconcileLedgerEntries`
	payload := func(u string) string {
		return `{"uuid":"` + u + `","displayName":"App\\Jobs\\ReconcileLedgerEntries","job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{}}`
	}
	u1, u2 := "00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"
	exc := "RuntimeException: boom in /a.php:1\nStack trace:\n#0 {main}"
	sqltest.InsertFailed(t, s,
		sqltest.FailedFixture{UUID: &u1, Connection: "database", Queue: long, Payload: payload(u1), Exception: exc, FailedAt: "2026-11-30 10:00:00"},
		sqltest.FailedFixture{UUID: &u2, Connection: "database", Queue: "default", Payload: payload(u2), Exception: exc, FailedAt: "2026-11-30 11:00:00"})
	h := newHarness(t, true) // 120 columns: the wide layout with a CLASS column
	if code := h.run("failed", "--dsn", sqltest.DSN(s.Endpoint())); code != ExitOK {
		t.Fatalf("exit %d: %s", code, h.errOut.String())
	}
	lines := strings.Split(strings.TrimRight(h.out.String(), "\n"), "\n")
	rows := 0
	for _, l := range lines {
		if w := sanitize.Width(l); w > 120 {
			t.Errorf("line is %d cells wide, more than the terminal's 120: %q", w, l)
		}
		if strings.HasPrefix(l, "0000") {
			rows++
			if !strings.Contains(l, class) {
				t.Errorf("row lost its class to the long queue name: %q", l)
			}
		}
	}
	if rows != 2 || !strings.Contains(h.out.String(), "very-long-…  "+class) {
		t.Errorf("want 2 rows with the long queue cut by …:\n%s", h.out.String())
	}
}
