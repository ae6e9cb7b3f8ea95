package sqlstore

import "testing"

// The server's version decides the SQL of every write: a wrong guess is a
// syntax error on MySQL (no DELETE … RETURNING) or a lost SKIP LOCKED.
func TestServerFeaturesFromVersion(t *testing.T) {
	for _, c := range []struct {
		version                   string
		skipLocked, deleteReturns bool
	}{
		{"10.11.19-MariaDB-0+deb12u1", true, true},
		{"5.5.5-10.11.6-MariaDB", true, true},
		{"10.5.23-MariaDB-log", false, true},
		{"10.0.4-MariaDB", false, false},
		{"10.0.5-MariaDB", false, true},
		{"11.4.2-MariaDB", true, true},
		{"8.0.36", true, false},
		{"8.0.0", false, false},
		{"5.7.44-log", false, false},
		{"9.1.0", true, false},
	} {
		if got := mysqlHasSkipLocked(c.version); got != c.skipLocked {
			t.Errorf("%s: SKIP LOCKED %v, want %v", c.version, got, c.skipLocked)
		}
		if got := mariadbHasDeleteReturning(c.version); got != c.deleteReturns {
			t.Errorf("%s: DELETE … RETURNING %v, want %v", c.version, got, c.deleteReturns)
		}
	}
}
