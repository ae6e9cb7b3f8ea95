package appprofile

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/jobtriage/jobtriage/triage/redact"
)

func TestParseDSN(t *testing.T) {
	tests := []struct {
		in      string
		want    Target
		wantErr string
	}{
		{in: "postgres://app:s%40cret@db.internal:6432/queue?sslmode=require",
			want: Target{Driver: "postgres", Host: "db.internal", Port: 6432, Database: "queue", User: "app", Password: "s@cret", Params: map[string]string{"sslmode": "require"}}},
		{in: "postgresql://u@h/d", want: Target{Driver: "postgres", Host: "h", Port: 5432, Database: "d", User: "u"}},
		{in: "pgsql://h/d", want: Target{Driver: "postgres", Host: "h", Port: 5432, Database: "d"}},
		{in: "PostgreSQL://h/d", want: Target{Driver: "postgres", Host: "h", Port: 5432, Database: "d"}},
		{in: "mysql://root@127.0.0.1/test", want: Target{Driver: "mysql", Host: "127.0.0.1", Port: 3306, Database: "test", User: "root"}},
		{in: "mariadb://u:p@h:3307/d", want: Target{Driver: "mysql", Host: "h", Port: 3307, Database: "d", User: "u", Password: "p"}},
		{in: "mysql2://u:p@h/d", want: Target{Driver: "mysql", Host: "h", Port: 3306, Database: "d", User: "u", Password: "p"}},
		{in: "mysql://u:pa^`[]ss@h/d", want: Target{Driver: "mysql", Host: "h", Port: 3306, Database: "d", User: "u", Password: "pa^`[]ss"}},
		{in: "mysql://u:a@b@h/d", want: Target{Driver: "mysql", Host: "h", Port: 3306, Database: "d", User: "u", Password: "a@b"}},
		{in: "mysql://u:p+q@h/d", want: Target{Driver: "mysql", Host: "h", Port: 3306, Database: "d", User: "u", Password: "p+q"}},
		{in: "mysql://u@/d?unix_socket=/run/mysqld/mysqld.sock&charset=utf8mb4",
			want: Target{Driver: "mysql", Port: 3306, Database: "d", User: "u", Socket: "/run/mysqld/mysqld.sock", Params: map[string]string{"charset": "utf8mb4"}}},
		{in: "mysql:///d", want: Target{Driver: "mysql", Host: "127.0.0.1", Port: 3306, Database: "d"}},
		{in: "mysql://[::1]:3306/d", want: Target{Driver: "mysql", Host: "::1", Port: 3306, Database: "d"}},
		{in: "  mysql://h/d  ", want: Target{Driver: "mysql", Host: "h", Port: 3306, Database: "d"}},
		{in: "sqlite:database/database.sqlite", want: Target{Driver: "sqlite", Path: "database/database.sqlite"}},
		{in: "sqlite://database/app.db", want: Target{Driver: "sqlite", Path: "database/app.db"}},
		{in: "sqlite:///var/lib/app/db.sqlite", want: Target{Driver: "sqlite", Path: "/var/lib/app/db.sqlite"}},
		// '?' is part of the file name: the file named is the file opened.
		{in: "sqlite:/abs.sqlite?mode=ro", want: Target{Driver: "sqlite", Path: "/abs.sqlite?mode=ro"}},
		{in: "sqlite:/x/q?mode=ro.sqlite", want: Target{Driver: "sqlite", Path: "/x/q?mode=ro.sqlite"}},
		{in: "sqlite:/x/q%3F1.sqlite?a#b", want: Target{Driver: "sqlite", Path: "/x/q?1.sqlite?a#b"}},
		{in: "sqlite3:///my%20db.sqlite", want: Target{Driver: "sqlite", Path: "/my db.sqlite"}},
		{in: "./database/database.sqlite", want: Target{Driver: "sqlite", Path: "./database/database.sqlite"}},
		{in: "/srv/app/queue.db", want: Target{Driver: "sqlite", Path: "/srv/app/queue.db"}},
		{in: "", wantErr: "empty DSN"},
		{in: "sqlite:", wantErr: "names no file"},
		{in: "sqlsrv://u:p@h/d", wantErr: "does not support"},
		{in: "mssql://u:p@h/d", wantErr: "does not support"},
		{in: "redis://h/0", wantErr: "does not support"},
		{in: "mysql:h/d", wantErr: "must look like"},
		{in: "db.internal:5432", wantErr: "must look like"},
		{in: "localhost", wantErr: "no scheme"},
		{in: "mysql://u:p@h", wantErr: "names no database"},
		{in: "mysql://u:p@h/", wantErr: "names no database"},
		{in: "mysql://u:p@h:99999/d", wantErr: "port"},
		{in: "mysql://u:p@h:abc/d", wantErr: "port"},
		{in: "mysql://u:p@[::1/d", wantErr: "unclosed"},
		{in: "mysql://h/d\nx", wantErr: "line break"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseDSN(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q (got %v)", err, tt.wantErr, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestRedacted(t *testing.T) {
	tests := []struct {
		target Target
		want   string
	}{
		{Target{Driver: "postgres", Host: "db", Port: 5432, Database: "app", User: "ops", Password: "hunter2", Params: map[string]string{"sslmode": "require", "sslpassword": "hunter3"}},
			"postgres://ops:xxxxx@db:5432/app?sslmode=require&sslpassword=xxxxx"},
		{Target{Driver: "mysql", Host: "::1", Port: 3306, Database: "d", User: "root"}, "mysql://root@[::1]:3306/d"},
		{Target{Driver: "mysql", Port: 3306, Database: "d", Socket: "/run/m.sock"}, "mysql://:3306/d?unix_socket=%2Frun%2Fm.sock"},
		{Target{Driver: "sqlite", Path: "/srv/db.sqlite"}, "sqlite:/srv/db.sqlite"},
		// A user name equal to the password must not reveal it either.
		{Target{Driver: "mysql", Host: "h", Port: 1, Database: "d", User: "same-secret", Password: "same-secret"}, "mysql://xxxxx:xxxxx@h:1/d"},
	}
	for _, tt := range tests {
		if got := tt.target.Redacted(); got != tt.want {
			t.Errorf("Redacted() = %q, want %q", got, tt.want)
		}
		for _, form := range []string{tt.target.String(), fmt.Sprintf("%v", tt.target), fmt.Sprintf("%+v", tt.target), fmt.Sprintf("%#v", tt.target)} {
			if tt.target.Password != "" && strings.Contains(form, tt.target.Password) {
				t.Errorf("formatted target leaks the password: %s", form)
			}
		}
	}
}

// TestDatabaseURLMatchesLaravel compares splitDatabaseURL with Laravel 8.83's
// ConfigurationUrlParser on the URLs an app's DB_URL/DATABASE_URL may hold.
func TestDatabaseURLMatchesLaravel(t *testing.T) {
	if _, err := exec.LookPath("php"); err != nil {
		t.Skip("php not installed")
	}
	if _, err := os.Stat("/usr/share/php/Illuminate/Support/ConfigurationUrlParser.php"); err != nil {
		t.Skip("Laravel framework not installed")
	}
	for _, in := range []string{
		"mysql://u:p%40ss@h:3307/db?charset=utf8&strict=true",
		"mysql://u:pa^`[]ss@h/db",
		"mysql://u:a@b@h/db",
		"pgsql://h",
		"postgres://u@h/",
		"postgresql://u:p@h:5433/db%20x?x=a+b",
		"mysql://u:pw@h:0/db",
		"mysql2://u:p@h/d",
		"mysql://h/123",
		"mysql://u:123@h/db",
		"mysql://u:null@h/db",
		"mysql://u:true@h/db",
		"mysql://u:%22q%22@h/db",
		"mysql://[::1]:3306/db",
		"//u:p@h/db",
		"mysql://u:p@h:99999/db",
		"mysql://u:p#w@h/db",
		"mysql2://u:p@h:abc/db",
	} {
		out, err := exec.Command("php", "testdata/url_oracle.php", in).Output()
		if err != nil {
			t.Fatalf("php oracle: %v", err)
		}
		var php map[string]any
		if err := json.Unmarshal(out, &php); err != nil {
			t.Fatalf("oracle output %q: %v", out, err)
		}
		parts, err := splitDatabaseURL(in)
		if _, phpErr := php["error"]; phpErr {
			if err == nil {
				t.Errorf("%q: Laravel calls it malformed, we accept it", in)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: Laravel accepts it (%v), we fail: %v", in, php, err)
			continue
		}
		got := map[string]string{}
		if parts.scheme != "" {
			got["driver"] = laravelDriverFor(parts.scheme)
		}
		if parts.hasHost {
			got["host"] = parts.host
		}
		if parts.hasPort {
			got["port"] = fmt.Sprint(parts.port)
		}
		if parts.hasUser {
			got["username"] = parts.user
		}
		if parts.hasPass {
			got["password"] = parts.pass
		}
		if parts.hasDatabase {
			got["database"] = parts.database
		}
		for k, v := range parts.params {
			got[k] = v
		}
		want := map[string]string{}
		for k, v := range php {
			switch x := v.(type) {
			case bool:
				want[k] = map[bool]string{true: "1", false: ""}[x]
				if _, isParam := parts.params[k]; isParam {
					want[k] = fmt.Sprint(x) // we keep query options as text
				}
			case float64:
				want[k] = fmt.Sprint(x)
			default:
				want[k] = fmt.Sprint(x)
			}
		}
		if h, ok := want["host"]; ok && strings.HasPrefix(h, "[") {
			want["host"] = strings.Trim(h, "[]") // we drop IPv6 brackets for dialing
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%q differs from Laravel (-php +go):\n%s", in, diff)
		}
	}
}

func FuzzParseDSN(f *testing.F) {
	for _, seed := range []string{"postgres://u:p@h:5432/d?sslmode=require", "mysql://u:a@b@[::1]:3306/d", "sqlite:///x.db", "x.sqlite", "mysql://h:0/d#f", "%", "sqlite:?",
		// Fuzzing's findings: the password is also part of the host or
		// the database name.
		"mYsql://0:0 0@\"0 0/0000000000000000", "postgres://: 1000@/ 1000", "postgres://0:x@/00", "postgres://:8@/0(0"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := ParseDSN(in)
		if err != nil {
			return
		}
		switch got.Driver {
		case "sqlite":
			if got.Path == "" {
				t.Fatalf("%q: sqlite target without a path", in)
			}
		case "postgres", "mysql":
			if got.Database == "" || got.Port < 1 || got.Port > 65535 {
				t.Fatalf("%q: incomplete target %#v", in, got)
			}
		default:
			t.Fatalf("%q: unexpected driver %q", in, got.Driver)
		}
		// The password is never shown: Redacted is what it would be with
		// another password. (Unless the password's text is part of what
		// Redacted shows on purpose, e.g. "8" in a database "0(0" shown
		// as "0%280", or a database " 1000" shown as "%201000" where the
		// password is " 1000": redact's rule may then mask or keep it.)
		if got.Password == "" {
			return
		}
		other := got
		other.Password = got.Password + "\x00"
		base := other.Redacted()
		for _, form := range redact.Forms(got.Password) {
			if strings.Contains(base, form) {
				return
			}
		}
		if got.Redacted() != base {
			t.Fatalf("%q: Redacted depends on the password: %s, with another password %s", in, got.Redacted(), base)
		}
	})
}
