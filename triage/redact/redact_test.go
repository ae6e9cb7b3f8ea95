package redact

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// driverErrors are real error texts, captured from lib/pq 1.12,
// go-sql-driver/mysql 1.10 (against MariaDB 10.11) and modernc sqlite 1.62
// with wrong ports, users, databases, hosts and socket paths. The two parse
// errors are what jobtriage's old URL form of a PostgreSQL socket directory
// produced: the password in URL-escaped form.
var driverErrors = []string{
	`pq: database "nosuchdb" does not exist (3D000)`,
	`pq: role "nosuchuser" does not exist (28000)`,
	`pq: password authentication failed for user "sail" (28P01)`,
	`dial tcp 127.0.0.1:1: connect: connection refused`,
	`pq: database "var/run/postgresql:5432/test" does not exist (3D000)`,
	`parse "postgres://postgres:pw@bad host:5432/test?sslmode=disable": invalid character " " in host name`,
	`parse "postgres://postgres:S3cret,with%20space@%2Fvar%2Frun%2Fpostgresql:5432/test?sslmode=prefer": invalid URL escape "%2F"`,
	`parse "postgres://postgres:p%40ss%2Fw%25rd@%2Fvar%2Frun%2Fpostgresql:5432/test?sslmode=prefer": invalid URL escape "%2F"`,
	`dial tcp: lookup bad.invalid on 10.255.255.53:53: no such host`,
	`dial unix /nonexistent/.s.PGSQL.5432: connect: no such file or directory`,
	`unterminated quoted string literal in connection string`,
	`Error 1045 (28000): Access denied for user 'root'@'127.0.0.1' (using password: YES)`,
	`Error 1045 (28000): Access denied for user 'nosuchuser'@'127.0.0.1' (using password: YES)`,
	`Error 1049 (42000): Unknown database 'nosuchdb'`,
	`dial unix /nonexistent/mysqld.sock: connect: no such file or directory`,
	`dial tcp: lookup bad host: no such host`,
	`unable to open database file (14)`,
	`file is not a database (26)`,
}

// seedPasswords are the awkward ones: blanks, one letter, a common word,
// unicode, and every character that URL, libpq, Go and JSON quoting treat
// specially.
var seedPasswords = []string{
	"S3cret,with space", "e", "password", "пароль", "пароль123", "p%40ss", "100%", "p@ss@word",
	"a/b/c", "it's", `say "hi"`, `back\slash`, "YES", "root", "x y", "😀emoji😀", "tab\there",
	"hunter2hunter2", "12345678", "sslmode=disable",
}

func TestTextKnownCases(t *testing.T) {
	tests := []struct {
		name, in, pw, want string
	}{
		{"one-letter password leaves words alone", `pq: database "x" does not exist (3D000)`, "e",
			`pq: database "x" does not exist (3D000)`},
		{"Sail's password is also a word", `pq: password authentication failed for user "sail" (28P01)`, "password",
			`pq: password authentication failed for user "sail" (28P01)`},
		{"MySQL's using password: YES is no field", `Error 1045 (28000): Access denied for user 'root'@'127.0.0.1' (using password: YES)`, "YES",
			`Error 1045 (28000): Access denied for user 'root'@'127.0.0.1' (using password: YES)`},
		{"old socket-dir URL leak", driverErrors[6], "S3cret,with space",
			`parse "postgres://postgres:xxxxx@%2Fvar%2Frun%2Fpostgresql:5432/test?sslmode=prefer": invalid URL escape "%2F"`},
		{"URL user info masked without knowing the password", `parse "mysql://u:zz%2F@h/d": bad`, "",
			`parse "mysql://u:xxxxx@h/d": bad`},
		{"URL user info with a short password", "postgres://u:e@h/d", "e", "postgres://u:xxxxx@h/d"},
		{"host:port is no user info", "dial tcp 127.0.0.1:1: connect; mysql://h:3306/d", "1",
			"dial tcp 127.0.0.1:1: connect; mysql://h:3306/d"},
		{"conninfo quoted", `host=/tmp password='it\'s' dbname=x`, "it's", `host=/tmp password='xxxxx' dbname=x`},
		{"conninfo unknown", `host=/tmp password=abc dbname=x`, "", `host=/tmp password=xxxxx dbname=x`},
		{"env echo with a blank", "DB_PASSWORD=S3cret,with space\nDB_HOST=h", "S3cret,with space", "DB_PASSWORD=xxxxx\nDB_HOST=h"},
		{"env echo short", "DB_PASSWORD=e", "e", "DB_PASSWORD=xxxxx"},
		{"query field", "mysql://h/d?sslpassword=abc&x=1", "", "mysql://h/d?sslpassword=xxxxx&x=1"},
		{"Go quoted", `password: "say \"hi\""`, `say "hi"`, `password: "xxxxx"`},
		{"JSON field", `{"password":"say \"hi\"","host":"h"}`, `say "hi"`, `{"password":"xxxxx","host":"h"}`},
		{"bare token with symbols", `user "S3cret,with space" unknown`, "S3cret,with space", `user "xxxxx" unknown`},
		{"bare token inside a word stays", "xhunter2hunter2x", "hunter2hunter2", "xhunter2hunter2x"},
		{"bare long token", "user hunter2hunter2 unknown", "hunter2hunter2", "user xxxxx unknown"},
		{"bare long letters-only is a word", "connection refused by localhost", "localhost", "connection refused by localhost"},
		{"another value than the known password", "password=example&x=1", "e", "password=xxxxx&x=1"},
		{"one-symbol password is no token", `Access denied for user 'root'@'127.0.0.1'`, "@", `Access denied for user 'root'@'127.0.0.1'`},
		{"escaped form as a token", "value p%40ss%2F here", "p@ss/", "value xxxxx here"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Text(tc.in, tc.pw); got != tc.want {
				t.Errorf("Text(%q, %q)\n got %q\nwant %q", tc.in, tc.pw, got, tc.want)
			}
		})
	}
}

// slots put a password where connection strings and echoed settings carry
// it. Each returns the text and the same text with Mask in the password's
// place.
var slots = []func(pw string) (with, masked string){
	func(pw string) (string, string) { // a URL, as url.URL renders it
		u := url.URL{Scheme: "postgres", Host: "127.0.0.1:5432", Path: "/test"}
		u.User = url.UserPassword("postgres", pw)
		return u.String(), "postgres://postgres:" + Mask + "@127.0.0.1:5432/test"
	},
	func(pw string) (string, string) { // a Go url.Parse error quoting it
		u := "mysql://root:" + url.PathEscape(pw) + "@%2Frun%2Fmysqld/test"
		return "parse " + strconv.Quote(u) + `: invalid URL escape "%2F"`,
			`parse "mysql://root:` + Mask + `@%2Frun%2Fmysqld/test": invalid URL escape "%2F"`
	},
	func(pw string) (string, string) { // lib/pq key=value
		return "host='/var/run/postgresql' password='" + conninfoEscape(pw) + "' dbname='test'",
			"host='/var/run/postgresql' password='" + Mask + "' dbname='test'"
	},
	func(pw string) (string, string) { // an echoed .env line, raw
		return "DB_PASSWORD=" + pw + "\nDB_HOST=127.0.0.1", "DB_PASSWORD=" + Mask + "\nDB_HOST=127.0.0.1"
	},
	func(pw string) (string, string) { // an echoed setting, Go-quoted
		return "DB_PASSWORD=" + strconv.Quote(pw), `DB_PASSWORD="` + Mask + `"`
	},
	func(pw string) (string, string) { // JSON
		b, _ := json.Marshal(pw)
		return `{"host":"h","password":` + string(b) + `}`, `{"host":"h","password":"` + Mask + `"}`
	},
	func(pw string) (string, string) { // a query parameter
		return "?sslmode=disable&password=" + url.QueryEscape(pw) + "&x=1", "?sslmode=disable&password=" + Mask + "&x=1"
	},
}

// wholeToken reports whether f occurs in s with no word character on
// either side.
func wholeToken(s, f string) bool { return len(tokenSpans(s, []string{f})) > 0 }

func FuzzScrub(f *testing.F) {
	for i, pw := range seedPasswords {
		for j := range driverErrors {
			f.Add(pw, uint8(j), uint8(i+j), i%2 == 0)
		}
	}
	f.Fuzz(func(t *testing.T, pw string, errIdx, slotIdx uint8, slotFirst bool) {
		if pw == "" {
			return
		}
		errText := driverErrors[int(errIdx)%len(driverErrors)]
		// Some captured errors carry a URL with a password of their own,
		// which rule 1 masks whatever password is asked for.
		errWant := Text(errText)
		with, masked := slots[int(slotIdx)%len(slots)](pw)
		in, want := errText+": "+with, errWant+": "+masked
		if slotFirst {
			in, want = with+" ("+errText+")", masked+" ("+errWant+")"
		}
		got := Text(in, pw)

		loose := maskableAnywhere(pw)
		collides := false
		if loose {
			for _, form := range Forms(pw) {
				if wholeToken(want, form) || wholeToken(errText, form) {
					collides = true // the password is also a token of the message
				}
			}
		}
		if !collides && got != want {
			t.Fatalf("password %q\n  in %q\n got %q\nwant %q", pw, in, got, want)
		}
		if loose {
			for _, form := range Forms(pw) {
				if wholeToken(got, form) {
					t.Fatalf("password %q (form %q) left in %q", pw, form, got)
				}
			}
		}
		// No word of the driver's message is lost unless it is the password.
		if collides {
			return
		}
		rest := got
		for _, w := range strings.Fields(errText) {
			containsPW := false
			for _, form := range Forms(pw) {
				containsPW = containsPW || strings.Contains(w, form)
			}
			if containsPW || strings.Contains(w, "://") {
				continue
			}
			i := strings.Index(rest, w)
			if i < 0 {
				t.Fatalf("password %q: word %q of %q lost in %q", pw, w, errText, got)
			}
			rest = rest[i+len(w):]
		}
	})
}

// TestDriverErrorsUntouched: without a password in them, real driver
// errors come out as they went in, except a URL's own password.
func TestDriverErrorsUntouched(t *testing.T) {
	for _, e := range driverErrors {
		for _, pw := range append([]string{""}, seedPasswords...) {
			got := Text(e, pw)
			if strings.Contains(e, "://") {
				if strings.Contains(got, ":pw@") || strings.Contains(got, "S3cret") || strings.Contains(got, "p%40ss") {
					t.Errorf("Text(%q, %q) = %q keeps the URL's password", e, pw, got)
				}
				continue
			}
			if got != e {
				t.Errorf("Text(%q, %q) = %q, want it unchanged", e, pw, got)
			}
		}
	}
}

func TestFormsCoverEscapes(t *testing.T) {
	forms := Forms(`a b/@%'"\ü`)
	for _, want := range []string{`a b/@%'"\ü`, "a+b%2F%40%25%27%22%5C%C3%BC", `a b/@%'\"\\ü`, `a b/@%\'"\\ü`, `a b/@%'\"\\\u00fc`} {
		found := false
		for _, f := range forms {
			found = found || f == want
		}
		if !found {
			t.Errorf("Forms lacks %q: %q", want, forms)
		}
	}
}
