package appprofile

import (
	"strings"
	"testing"

	"github.com/jobtriage/jobtriage/triage/redact"
)

// TestResolveScrubKeepsWords: a short or common password must not garble the
// words of a message, while the DSN's password stays hidden.
func TestResolveScrubKeepsWords(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name     string
		environ  []string
		dsn      string
		wantText []string // must appear in the error
		secret   string   // must not appear as the URL's password
	}{
		{"Sail's password is a word of the message",
			[]string{"DB_CONNECTION=mysql", "DB_PASSWORD=password", "DB_URL=mysql://sail:pa#ss@h/d"}, "",
			[]string{"a '#' in the password must be written %23"}, ""},
		{"one-letter password",
			[]string{"DB_CONNECTION=mysql", "DB_PASSWORD=e", "DB_PORT=nope"}, "",
			[]string{`DB_PORT="nope" is not a port number`}, ""},
		{"password in a broken DSN",
			nil, "postgres://u:S3cret,with space@h:99999/db",
			[]string{"the port must be a number up to 65535"}, "S3cret,with space"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Resolve(Options{Dir: dir, Cwd: dir, DSN: tc.dsn, Environ: tc.environ})
			if err == nil {
				t.Fatal("Resolve succeeded")
			}
			for _, w := range tc.wantText {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lost %q", err, w)
				}
			}
			if tc.secret != "" && strings.Contains(err.Error(), tc.secret) {
				t.Errorf("error %q leaks the password", err)
			}
		})
	}
}

func TestScrubSecretByStructure(t *testing.T) {
	tests := []struct{ in, secret, want string }{
		{`pq: database "x" does not exist (3D000)`, "e", `pq: database "x" does not exist (3D000)`},
		{"mysql://u:e@h/d", "e", "mysql://u:xxxxx@h/d"},
		{"DB_PASSWORD=password in .env", "password", "DB_PASSWORD=xxxxx in .env"},
		{"password authentication failed", "password", "password authentication failed"},
		{"user S3cret,with space unknown", "S3cret,with space", "user xxxxx unknown"},
		{"user S3cret%2Cwith%20space unknown", "S3cret,with space", "user xxxxx unknown"},
	}
	for _, tc := range tests {
		if got := redact.Text(tc.in, tc.secret); got != tc.want {
			t.Errorf("redact.Text(%q, %q) = %q, want %q", tc.in, tc.secret, got, tc.want)
		}
	}
}

func TestRedactedUserEqualToShortPassword(t *testing.T) {
	// A user name equal to a short word-only password is a user name.
	tg := Target{Driver: "mysql", Host: "h", Port: 1, Database: "d", User: "root", Password: "root"}
	if got, want := tg.Redacted(), "mysql://root:xxxxx@h:1/d"; got != want {
		t.Errorf("Redacted = %q, want %q", got, want)
	}
}
