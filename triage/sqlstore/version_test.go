package sqlstore

import "testing"

// The server's version decides the SQL of every write: a wrong guess is a
// syntax error on MySQL (no DELETE … RETURNING).
func TestServerFeaturesFromVersion(t *testing.T) {
	for _, c := range []struct {
		version       string
		deleteReturns bool
	}{
		{"10.11.19-MariaDB-0+deb12u1", true},
		{"5.5.5-10.11.6-MariaDB", true},
		{"10.5.23-MariaDB-log", true},
		{"10.0.4-MariaDB", false},
		{"10.0.5-MariaDB", true},
		{"11.4.2-MariaDB", true},
		{"8.0.36", false},
		{"8.0.0", false},
		{"5.7.44-log", false},
		{"9.1.0", false},
	} {
		if got := mariadbHasDeleteReturning(c.version); got != c.deleteReturns {
			t.Errorf("%s: DELETE … RETURNING %v, want %v", c.version, got, c.deleteReturns)
		}
	}
}
