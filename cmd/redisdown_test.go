package cmd

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestRedisThatCannotBeOpenedIsOneLine: every command that reaches a Redis
// queue connection that cannot be opened (refused here; NOAUTH, WRONGPASS
// and TLS to a plain port fail the same open) printed the right line and
// then panicked in Factory.Close on the backend that was never made.
// Through Run, as main runs them: one "jobtriage:" line, the documented
// exit code, no panic.
func TestRedisThatCannotBeOpenedIsOneLine(t *testing.T) {
	closed := func() int {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return l.Addr().(*net.TCPAddr).Port
	}()
	redis := "'host' => '127.0.0.1', 'port' => " + strconv.Itoa(closed)
	_, s := seed(t) // one of its rows failed on the redis connection
	h := newHarness(t, false)
	for file, body := range map[string]string{
		"artisan": "",
		"config/queue.php": `<?php return ['default' => 'redis', 'connections' => [
    'database' => ['driver' => 'database', 'table' => 'jobs', 'queue' => 'default'],
    'redis' => ['driver' => 'redis', 'connection' => 'default', 'queue' => 'default', 'retry_after' => 90]],
    'failed' => ['driver' => 'database-uuids', 'database' => 'sqlite', 'table' => 'failed_jobs']];`,
		"config/database.php": `<?php return ['default' => 'sqlite',
    'connections' => ['sqlite' => ['driver' => 'sqlite', 'database' => '` + s.Endpoint().Path + `']],
    'redis' => ['default' => [` + redis + `, 'database' => 0]]];`,
	} {
		path := filepath.Join(h.dir, file)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"retry", "all", "--yes"}, {"monitor"}, {"monitor", "--json"}, {"monitor", "--format", "prometheus"}, {"doctor"},
	} {
		code := h.run(args...)
		errLines := strings.Split(strings.TrimSpace(h.errOut.String()), "\n")
		last := errLines[len(errLines)-1]
		t.Logf("%s: exit %d: %s", strings.Join(args, " "), code, last)
		if args[0] == "doctor" {
			if !strings.Contains(h.out.String()+h.errOut.String(), "redis") {
				t.Errorf("doctor does not report the Redis connection:\n%s%s", h.out.String(), h.errOut.String())
			}
			continue
		}
		if code != ExitUnreachable || !strings.HasPrefix(last, "jobtriage: ") || !strings.Contains(last, "redis://") {
			t.Errorf("%s: exit %d, last line %q; want exit 5 and one line naming the Redis server", strings.Join(args, " "), code, last)
		}
	}
}
