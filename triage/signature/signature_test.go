package signature

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestNormalize(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain number", "Order 1042 not found", "Order <n> not found"},
		{"model not found", `No query results for model [App\Models\Order] 1042`, `No query results for model [App\Models\Order] <n>`},
		{"model not found, several ids", `No query results for model [App\Models\Order] 1, 2, 3`, `No query results for model [App\Models\Order] <n>`},
		{"sqlite query exception",
			`SQLSTATE[HY000]: General error: 1 no such table: orders (SQL: select * from "orders" where "id" = 1042 limit 1)`,
			`SQLSTATE[HY000]: General error: <n> no such table: orders (SQL: select * from "orders" where "id" = <n> limit <n>)`},
		{"mysql duplicate entry",
			"SQLSTATE[23000]: Integrity constraint violation: 1062 Duplicate entry 'jane@example.com' for key 'users_email_unique' (SQL: insert into `users` (`email`) values (jane@example.com))",
			"SQLSTATE[23000]: Integrity constraint violation: <n> Duplicate entry '<str>' for key '<str>' (SQL: insert into `users` (`email`) values (<email>))"},
		{"postgres deadlock",
			"SQLSTATE[40P01]: Deadlock detected: 7 ERROR:  deadlock detected\nDETAIL:  Process 4242 waits for ShareLock on transaction 99817; blocked by process 4243.",
			"SQLSTATE[40P01]: Deadlock detected: <n> ERROR: deadlock detected DETAIL: Process <n> waits for ShareLock on transaction <n>; blocked by process <n>."},
		{"mysql gone away", "SQLSTATE[HY000] [2002] Connection refused (SQL: select * from `jobs` where `queue` = default)",
			"SQLSTATE[HY000] [<list>] Connection refused (SQL: select * from `jobs` where `queue` = default)"},
		{"curl timeout",
			"cURL error 28: Operation timed out after 30001 milliseconds with 0 bytes received (see https://curl.haxx.se/libcurl/c/libcurl-errors.html) for https://api.example.com/v1/orders/1042?expand=items",
			"cURL error <n>: Operation timed out after <n> milliseconds with <n> bytes received (see <url>) for <url>"},
		{"curl resolve", "cURL error 6: Could not resolve host: api.stripe.com", "cURL error <n>: Could not resolve host: api.stripe.com"},
		{"guzzle client error",
			"Client error: `POST https://hooks.slack.com/services/T000/B000/XXXX` resulted in a `404 Not Found` response:\nno_service",
			"Client error: `POST <url>` resulted in a `<n> Not Found` response: no_service"},
		{"max attempts", `App\Jobs\ProcessPodcast has been attempted too many times or run too long. The job may have previously timed out.`,
			`App\Jobs\ProcessPodcast has been attempted too many times or run too long. The job may have previously timed out.`},
		{"timed out", `App\Jobs\SyncV2Inventory has timed out.`, `App\Jobs\SyncV2Inventory has timed out.`},
		{"uuid", "Batch 9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d not found", "Batch <uuid> not found"},
		{"email", "Mailbox unavailable for olena.kovalenko+test@mail.example.co.uk", "Mailbox unavailable for <email>"},
		{"file path", "file_get_contents(/var/www/storage/app/exports/report-2024.csv): Failed to open stream: No such file or directory",
			"file_get_contents(<path>): Failed to open stream: No such file or directory"},
		{"path with line", "Undefined variable $x in /var/www/app/Jobs/Foo.php:42", "Undefined variable $x in <path>:<n>"},
		{"windows path", `Unable to open C:\inetpub\app\storage\x.log`, `Unable to open <path>`},
		{"double quoted value", `Unable to locate "Welcome back, Jane" in view`, `Unable to locate "<str>" in view`},
		{"escaped quote inside", `Invalid value "a \"b\" c" given`, `Invalid value "<str>" given`},
		{"hex id", "Object 5f1d7a3c9e2b4a0012ab34cd missing", "Object <hex> missing"},
		{"0x hex", "Segfault at 0x7ffd5e8c", "Segfault at <hex>"},
		{"sha1 hash", "Lock a94a8fe5ccb19ba61c4c0873d391e987982fbbd3 held", "Lock <hex> held"},
		{"api token", "Invalid API key sk_live_51HZx9A2eZvKYlo2C0abcdEFgh", "Invalid API key <token>"},
		{"floats", "Amount 99.95 exceeds limit 50.0", "Amount <n> exceeds limit <n>"},
		{"datetime", "Job expired at 2024-03-01 12:30:00 (retry until 2024-03-01T12:00:00+00:00)", "Job expired at <time> (retry until <time>)"},
		{"ip and port", "Connection refused [tcp://10.0.3.17:6379]", "Connection refused [<url>]"},
		{"bare ip", "Connection to 10.0.3.17:6379 refused", "Connection to <ip>:<n> refused"},
		{"json list", `Invalid ids ["a","b"] and [1, 2, 3]`, `Invalid ids [<list>] and [<list>]`},
		{"whitespace collapsed", "  Too\tmany\n\n  spaces  ", "Too many spaces"},
		{"unicode message", "Замовлення 1042 не знайдено", "Замовлення <n> не знайдено"},
		{"words not hex", "deadbeef accepted facade", "deadbeef accepted facade"},
		{"class names with digits", `Class "App\Services\Oauth2Client" not found`, `Class "App\Services\Oauth2Client" not found`},
		{"leading backslash class", `Class "\App\Foo" not found`, `Class "\App\Foo" not found`},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Normalize(tt.in); got != tt.want {
				t.Errorf("Normalize(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestNormalizeGroupsVariants(t *testing.T) {
	groups := [][]string{
		{"Order 1042 not found", "Order 77 not found", "Order 1 not found"},
		{`No query results for model [App\Models\Order] 1042`, `No query results for model [App\Models\Order] 5, 6`},
		{"Duplicate entry 'a@b.co' for key 'x'", "Duplicate entry 'bob' for key 'y'"},
		{"Payment for user 7f3c0e2a-1d4b-4c8e-9f00-1234567890ab failed", "Payment for user 00000000-0000-4000-8000-000000000000 failed"},
	}
	for _, g := range groups {
		first := Normalize(g[0])
		for _, m := range g[1:] {
			if got := Normalize(m); got != first {
				t.Errorf("Normalize(%q) = %q, differs from %q for %q", m, got, first, g[0])
			}
		}
	}
	if Normalize("Order 1 not found") == Normalize("Invoice 1 not found") {
		t.Error("different messages share a signature")
	}
}

// TestClosureNamesAcrossPHPVersions: the same failure on PHP 8.2 (closures
// named {closure}) and PHP 8.4 ({closure:<where declared>:<line>}) has one
// signature; a timeout of Laravel 10+ keeps its job class and no
// variable part.
func TestClosureNamesAcrossPHPVersions(t *testing.T) {
	groups := [][]string{
		{`App\Jobs\X::{closure}(): Argument #1 ($id) must be of type int, string given, called in /srv/app/app/Jobs/X.php on line 20`,
			`App\Jobs\X::{closure:App\Jobs\X::handle():12}(): Argument #1 ($id) must be of type int, string given, called in /srv/app/app/Jobs/X.php on line 20`},
		{`Too few arguments to function {closure}(), 0 passed and exactly 1 expected`,
			`Too few arguments to function {closure:/srv/app/routes/console.php:7}(), 0 passed and exactly 1 expected`,
			`Too few arguments to function {closure:{closure:App\Jobs\X::handle():12}:13}(), 0 passed and exactly 1 expected`,
			`Too few arguments to function {closure:laravel-serializable-closure://function ($x) { if (! $x) { return; } }:2}(), 0 passed and exactly 1 expected`,
			`Too few arguments to function {closure:{closure:laravel-serializable-closure://function () { }:2}:3}(), 0 passed and exactly 1 expected`},
		{`App\Jobs\TimesOut has timed out.`, `App\Jobs\TimesOut has timed out.`},
	}
	for _, g := range groups {
		first := Normalize(g[0])
		for _, m := range g[1:] {
			if got := Normalize(m); got != first {
				t.Errorf("Normalize(%q) = %q, differs from %q for %q", m, got, first, g[0])
			}
		}
	}
	if got := Normalize(`App\Jobs\TimesOut has timed out.`); got != `App\Jobs\TimesOut has timed out.` {
		t.Errorf("timeout message normalised to %q", got)
	}
	// Not a closure's name: left to the other rules.
	if got := Normalize(`{closure:x y:1}`); got != `{closure:x y:<n>}` {
		t.Errorf("got %q", got)
	}
}

func TestNormalizeKeepsSQLSTATEAndStripsNUL(t *testing.T) {
	got := Normalize("SQLSTATE[22003]\x00 value 300 out of range; SQLSTATE[HY000]")
	if got != "SQLSTATE[22003] value <n> out of range; SQLSTATE[HY000]" {
		t.Errorf("got %q", got)
	}
}

func TestNormalizeClipsLongMessages(t *testing.T) {
	long := strings.Repeat("é", MaxMessageBytes) // 2 bytes each
	got := Normalize(long + " tail 1")
	if len(got) > MaxMessageBytes || !utf8.ValidString(got) || strings.Contains(got, "tail") {
		t.Errorf("clipped message: len %d, valid %v", len(got), utf8.ValidString(got))
	}
	odd := "x" + strings.Repeat("é", MaxMessageBytes)
	if got := Normalize(odd); !utf8.ValidString(got) || len(got) != MaxMessageBytes-1 {
		t.Errorf("clip split a rune: len %d valid %v", len(got), utf8.ValidString(got))
	}
}

func TestID(t *testing.T) {
	// Pinned values (checked with sha256sum): these ids are a stable public contract.
	tests := []struct{ job, exc, msg, want string }{
		{`App\Jobs\ProcessPodcast`, "RuntimeException", "Order <n> not found", "646104824f"},
		{"", "", "", "96a296d224"},
	}
	for _, tt := range tests {
		if got := ID(tt.job, tt.exc, tt.msg); got != tt.want {
			t.Errorf("ID(%q, %q, %q) = %q, want %q", tt.job, tt.exc, tt.msg, got, tt.want)
		}
	}
	if !regexp.MustCompile(`^[0-9a-f]{10}$`).MatchString(ID("a", "b", "c")) {
		t.Error("ID is not 10 lowercase hex characters")
	}
	// The separator keeps field boundaries apart.
	if ID("ab", "c", "") == ID("a", "bc", "") {
		t.Error("ID ignores field boundaries")
	}
}

func FuzzNormalize(f *testing.F) {
	f.Add(`SQLSTATE[23000]: Duplicate entry 'x' for key 'y'`)
	f.Add("cURL error 28: https://a.b/c?d=1")
	f.Add("\x00SQLSTATE[HY000]\x00")
	f.Fuzz(func(t *testing.T, s string) {
		once := Normalize(s)
		if strings.Contains(once, "\x00") {
			t.Fatalf("NUL marker leaked: %q", once)
		}
		if utf8.ValidString(s) && !utf8.ValidString(once) {
			t.Fatalf("invalid UTF-8 from valid input: %q", once)
		}
	})
}
